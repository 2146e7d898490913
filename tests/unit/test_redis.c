/* test_redis.c - against a real redis-server of its own: a pipeline reads
 * every reply (one Redis error fails it and leaves the connection in step);
 * the run store's read-ahead serves what it read until a write through the
 * store or ao_rs_forget; HSETNX and HLEN in one round trip; the poison
 * guard deletes a handled input's count with the next input's (or when the
 * input runs dry), and a death in hand still leaves its count. */
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

#include "check.h"
#include "core/redis.h"
#include "state/memfold.h"
#include "state/memory.h"
#include "state/runstore.h"
#include "wire/attempts.h"
#include "wire/io.h"

static int free_port(void)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    int fd = socket(AF_INET, SOCK_STREAM, 0), port = -1;

    if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof a) == 0 &&
        getsockname(fd, (struct sockaddr *)&a, &len) == 0)
        port = ntohs(a.sin_port);
    if (fd >= 0)
        close(fd);
    return port;
}

static pid_t start_redis(int port)
{
    char p[16];
    pid_t pid;

    snprintf(p, sizeof p, "%d", port);
    if ((pid = fork()) == 0) {
        freopen("/dev/null", "w", stdout);
        execlp("redis-server", "redis-server", "--port", p, "--bind", "127.0.0.1", "--save", "",
               "--appendonly", "no", (char *)NULL);
        _exit(127);
    }
    return pid;
}

/* One integer reply from a plain hiredis command, -1 when not one. */
static long long integer(struct ao_redis *r, int argc, const char **argv)
{
    char err[256];
    redisReply *rep = ao_redis_argv(r, argc, argv, NULL, err, sizeof err);
    long long v = rep && rep->type == REDIS_REPLY_INTEGER ? rep->integer : -1;

    if (rep)
        freeReplyObject(rep);
    return v;
}

static void test_pipeline(struct ao_redis *r)
{
    const char *set[] = {"SET", "accelopt:t:a", "41"}, *incr[] = {"INCR", "accelopt:t:a"},
               *get[] = {"GET", "accelopt:t:a"}, *bad[] = {"HSET", "accelopt:t:a", "f", "v"};
    struct ao_redis_cmd ok[3] = {{3, set, NULL}, {2, incr, NULL}, {2, get, NULL}};
    struct ao_redis_cmd mixed[3] = {{2, incr, NULL}, {4, bad, NULL}, {2, incr, NULL}};
    redisReply *rep[3];
    char err[256] = "";
    int rc = ao_redis_pipeline(r, 3, ok, rep, err, sizeof err);

    CHECK(rc == 0 && rep[1]->type == REDIS_REPLY_INTEGER && rep[1]->integer == 42 &&
              rep[2]->type == REDIS_REPLY_STRING && strcmp(rep[2]->str, "42") == 0,
          "three commands, one round trip: each reply in its place (%s)", rc ? err : "ok");
    for (int i = 0; rc == 0 && i < 3; i++)
        freeReplyObject(rep[i]);
    rc = ao_redis_pipeline(r, 3, mixed, rep, err, sizeof err);
    CHECK(rc < 0 && strstr(err, "HSET") && !rep[0] && !rep[1] && !rep[2],
          "a Redis error in the middle fails the pipeline, every reply freed (%s)", err);
    /* the commands around it ran (a pipeline is not a transaction), and the
     * connection is in step: the next reply is the next command's */
    CHECK(integer(r, 2, incr) == 45, "the connection reads the next command's reply after it");
}

static void test_store(struct ao_redis *r, struct ao_redis *other)
{
    static const char *const fields[] = {"state", "beam", "absent"};
    struct ao_runstore *s = ao_runstore_redis(r);
    const char *ext[] = {"HSET", "accelopt:run:x", "state", "from elsewhere"};
    char err[256] = "", *v = NULL;
    long len = -1;
    int rc;

    ao_rs_hset(s, "run:x", "state", "s1", err, sizeof err);
    ao_rs_hset(s, "run:x", "beam", "b1", err, sizeof err);
    rc = ao_rs_prefetch(s, "run:x", 3, fields, err, sizeof err);
    CHECK(rc == 0, "read ahead three fields (%s)", rc ? err : "ok");
    integer(other, 4, ext); /* not through this store: the read-ahead does not see it */
    CHECK(ao_rs_hget(s, "run:x", "state", &v, err, sizeof err) == 1 && strcmp(v, "s1") == 0,
          "a field read ahead is served from it");
    free(v);
    CHECK(ao_rs_hget(s, "run:x", "absent", &v, err, sizeof err) == 0 && !v,
          "a field read ahead as absent is absent");
    ao_rs_hset(s, "run:x", "beam", "b2", err, sizeof err);
    CHECK(ao_rs_hget(s, "run:x", "beam", &v, err, sizeof err) == 1 && strcmp(v, "b2") == 0,
          "a write through the store drops its field from the read-ahead");
    free(v);
    ao_rs_forget(s);
    CHECK(ao_rs_hget(s, "run:x", "state", &v, err, sizeof err) == 1 && strcmp(v, "from elsewhere") == 0,
          "after ao_rs_forget the store reads Redis again");
    free(v);
    CHECK(ao_rs_prefetch(s, "run:x", 5, (const char *const[]){"a", "b", "c", "d", "e"}, err, sizeof err) < 0,
          "a read-ahead of more fields than it keeps is refused (%s)", err);

    rc = ao_rs_hsetnx_len(s, "iter:x", "0.0.0", "r1", &len, err, sizeof err);
    CHECK(rc == 1 && len == 1, "hsetnx_len: a new field, the hash's length with it");
    rc = ao_rs_hsetnx_len(s, "iter:x", "0.0.0", "r2", &len, err, sizeof err);
    CHECK(rc == 0 && len == 1, "hsetnx_len: a field that was there is kept, the length unchanged");
    rc = ao_rs_prefetch(s, "run:x", 2, fields, err, sizeof err);
    rc = rc || ao_rs_hset_many(s, "run:x", 2, (const char *const[]){"state", "outbox"},
                               (const char *const[]){"s3", "o3"}, err, sizeof err);
    CHECK(rc == 0 && ao_rs_hget(s, "run:x", "state", &v, err, sizeof err) == 1 && strcmp(v, "s3") == 0,
          "hset_many sets its fields (and drops them from the read-ahead)");
    free(v);
    ao_rs_forget(s);
    CHECK(ao_rs_hget(s, "run:x", "outbox", &v, err, sizeof err) == 1 && strcmp(v, "o3") == 0 &&
              ao_rs_hlen(s, "run:x", err, sizeof err) == 3,
          "hset_many: every field in Redis, the others kept");
    free(v);
    ao_runstore_free(s);

    s = ao_runstore_file(NULL, err, sizeof err);
    CHECK(s && ao_rs_hsetnx_len(s, "k", "f", "v", &len, err, sizeof err) == 1 && len == 1 &&
              ao_rs_hsetnx_len(s, "k", "f", "w", &len, err, sizeof err) == 0 && len == 1 &&
              ao_rs_prefetch(s, "k", 1, fields, err, sizeof err) == 0,
          "the file store: hsetnx_len the same, a read-ahead a no-op");
    ao_runstore_free(s);
}

/* round trips of this process since the last call */
static long long trips_since(void)
{
    static long long last;
    long long n, ns;

    ao_redis_totals(&n, &ns);
    n -= last;
    last += n;
    return n;
}

static void test_keep(struct ao_redis *r, struct ao_redis *other)
{
    static const char *const kept[] = {"state", "beam"}, *const both[] = {"state", "beam"};
    char err[256], *v = NULL;
    const char *set_elsewhere[] = {"HSET", "accelopt:run:k", "state", "{\"from\":\"elsewhere\"}"};
    struct ao_runstore *s = ao_runstore_redis(r);
    const cJSON *j1 = NULL, *j2 = NULL;
    int rc;

    ao_rs_keep(s, 2, kept);
    ao_rs_hset(s, "run:k", "state", "{\"n\":1}", err, sizeof err);
    ao_rs_hset(s, "run:k", "beam", "[1]", err, sizeof err);
    ao_rs_hset(s, "run:k", "outbox", "o1", err, sizeof err);
    trips_since();
    rc = ao_rs_hget(s, "run:k", "state", &v, err, sizeof err);
    CHECK(rc == 1 && !strcmp(v, "{\"n\":1}") && trips_since() == 1, "a kept field's first read is a round trip");
    free(v);
    rc = ao_rs_hget(s, "run:k", "state", &v, err, sizeof err);
    CHECK(rc == 1 && !strcmp(v, "{\"n\":1}") && trips_since() == 0, "and then it is kept: no round trip");
    free(v);
    ao_rs_hget(s, "run:k", "outbox", &v, err, sizeof err);
    free(v);
    ao_rs_hget(s, "run:k", "outbox", &v, err, sizeof err);
    free(v);
    CHECK(trips_since() == 2, "a field not named is read from Redis every time");
    rc = ao_rs_prefetch(s, "run:k", 2, both, err, sizeof err);
    CHECK(rc == 0 && trips_since() == 1, "a read-ahead fetches only what is not kept (the beam)");
    ao_rs_forget(s);
    rc = ao_rs_prefetch(s, "run:k", 2, both, err, sizeof err);
    CHECK(rc == 0 && trips_since() == 0, "and nothing once both are kept");
    ao_rs_forget(s);
    /* the store's own writes: the kept value goes, the next read is the new one */
    ao_rs_hset(s, "run:k", "state", "{\"n\":2}", err, sizeof err);
    trips_since();
    rc = ao_rs_hget(s, "run:k", "state", &v, err, sizeof err);
    CHECK(rc == 1 && !strcmp(v, "{\"n\":2}") && trips_since() == 1, "a write through the store drops what it kept");
    free(v);
    /* a write from elsewhere is not seen until the kept fields are cleared
     * (what ao_rs_keep is for: fields nothing else writes meanwhile) */
    integer(other, 4, set_elsewhere);
    ao_rs_hget(s, "run:k", "state", &v, err, sizeof err);
    CHECK(v && !strcmp(v, "{\"n\":2}"), "a write from elsewhere is not seen while kept");
    free(v);
    ao_rs_keep_clear(s);
    ao_rs_hget(s, "run:k", "state", &v, err, sizeof err);
    CHECK(v && !strcmp(v, "{\"from\":\"elsewhere\"}"), "ao_rs_keep_clear: read from Redis again");
    free(v);
    /* parsed once while kept */
    {
        char key[64];
        for (int i = 0; i < 2; i++) {
            snprintf(key, sizeof key, "run:%s", i ? "j2" : "j1");
            ao_rs_hset(s, key, "state", i ? "{\"b\":2}" : "{\"a\":1}", err, sizeof err);
        }
        j1 = j2 = NULL;
        ao_runstore_json_ref(s, "j1", "state", &j1, err, sizeof err);
        ao_runstore_json_ref(s, "j1", "state", &j2, err, sizeof err);
        CHECK(j1 && j1 == j2 && cJSON_GetObjectItem(j1, "a"), "a kept field is parsed once");
        ao_runstore_json_ref(s, "j2", "state", &j2, err, sizeof err);
        CHECK(j2 && cJSON_GetObjectItem(j2, "b") && cJSON_GetObjectItem(j1, "a"),
              "two runs' fields are kept side by side");
        ao_runstore_json_ref(s, "j1", "outbox", &j2, err, sizeof err);
        CHECK(!j2, "an absent field is no tree");
    }
    /* at most 64: the least recently used goes */
    {
        char key[64];
        for (int i = 0; i < 70; i++) {
            snprintf(key, sizeof key, "run:lru%d", i);
            ao_rs_hset(s, key, "beam", "[]", err, sizeof err);
            ao_rs_hget(s, key, "beam", &v, err, sizeof err);
            free(v);
        }
        trips_since();
        ao_rs_hget(s, "run:lru69", "beam", &v, err, sizeof err);
        free(v);
        CHECK(trips_since() == 0, "the most recent of 70 is kept");
        ao_rs_hget(s, "run:lru0", "beam", &v, err, sizeof err);
        free(v);
        CHECK(trips_since() == 1, "the first of 70 was let go (64 at most)");
    }
    ao_runstore_free(s);
    s = ao_runstore_file(NULL, err, sizeof err);
    ao_rs_keep(s, 2, kept);
    ao_rs_hset(s, "run:k", "state", "{}", err, sizeof err);
    trips_since();
    CHECK(s && ao_rs_hget(s, "run:k", "state", &v, err, sizeof err) == 1 && trips_since() == 0,
          "the file store: kept fields are a no-op");
    free(v);
    ao_runstore_free(s);
}

static long long count(struct ao_redis *r, const char *field)
{
    const char *argv[] = {"HGET", "accelopt:attempts:g", field};
    char err[256];
    redisReply *rep = ao_redis_argv(r, 3, argv, NULL, err, sizeof err);
    long long v = rep && rep->type == REDIS_REPLY_STRING ? atoll(rep->str) : 0;

    if (rep)
        freeReplyObject(rep);
    return v;
}

static void test_guard(struct ao_redis *r, struct ao_redis *other)
{
    struct ao_io *io = ao_io_stdio_new("test", stdin, stdout, stderr);
    struct ao_inmsg m1 = {.topic = "t", .partition = 0, .offset = 1},
                    m2 = {.topic = "t", .partition = 0, .offset = 2};

    if (!io || ao_attempts_guard(io, r, "g", 3) < 0) {
        CHECK(0, "a guard on a pipe");
        return;
    }
    CHECK(io->guard.begin(io->guard.ctx, io, &m1) == 1 && count(other, "t:0:1") == 1,
          "an input in hand has its count");
    io->guard.end(io->guard.ctx, &m1);
    CHECK(count(other, "t:0:1") == 1, "a handled input's count waits for the next round trip");
    CHECK(io->guard.begin(io->guard.ctx, io, &m2) == 1 && count(other, "t:0:1") == 0 &&
              count(other, "t:0:2") == 1,
          "the next input's count goes with the handled one's deletion");
    io->guard.end(io->guard.ctx, &m2);
    io->guard.idle(io->guard.ctx);
    CHECK(count(other, "t:0:2") == 0, "the input running dry deletes the last one's count");
    io->guard.begin(io->guard.ctx, io, &m1); /* and the stage dies with it in hand: no end */
    CHECK(io->guard.begin(io->guard.ctx, io, &m1) == 2, "a death in hand still counts: 2 the next time");
    io->guard.end(io->guard.ctx, &m1);
    ao_io_free(io); /* a clean stop deletes it */
    CHECK(count(other, "t:0:1") == 0, "a clean stop deletes the last handled input's count");
}

/* The memory folds a lesson it holds already (issue 69, item 4): stored
 * twice by two pairs it is one item, its evidence 2; a list with copies
 * (an import, an older memory) compacts to one. */
static void test_memory_fold(struct ao_redis *r)
{
#define LESSON_FMT "{\"id\":\"%s\",\"run\":\"r\",\"task\":\"matmul\",\"target\":\"cpu\"," \
                             "\"iter\":1,\"title\":\"Raise BLOCK_N\",\"summary\":\"s\",\"speedup\":1.2," \
                             "\"direction\":\"+\",\"created_at\":\"2026-11-0%dT00:00:00Z\"," \
                             "\"move\":{\"knob\":\"BLOCK_N\",\"from\":\"64\",\"to\":\"256\"}}"
    char a[600], b[600], c[600], err[256] = "";
    const char *ids[2] = {"c1", "c2"}, *texts[2];
    cJSON *items;
    int w1, w2, folded = -1;

    snprintf(a, sizeof a, LESSON_FMT, "p1", 1);
    snprintf(b, sizeof b, LESSON_FMT, "p2", 2);
    w1 = ao_memory_store(r, "memory:test", "pair-1", a, "{}", 16, err, sizeof err);
    w2 = ao_memory_store(r, "memory:test", "pair-2", b, "{}", 16, err, sizeof err);
    items = ao_memory_all(r, "memory:test", err, sizeof err);
    CHECK(w1 == 1 && w2 == 1 && items && cJSON_GetArraySize(items) == 1 &&
              ao_memory_evidence(cJSON_GetArrayItem(items, 0)) == 2,
          "a lesson stored by two pairs is one item, evidence 2 (%d items; %s)", items ? cJSON_GetArraySize(items) : -1,
          err);
    cJSON_Delete(items);
    snprintf(a, sizeof a, LESSON_FMT, "c1", 3);
    snprintf(c, sizeof c, LESSON_FMT, "c2", 4);
    texts[0] = c, texts[1] = a;
    CHECK(ao_memory_import(r, "memory:copies", ids, texts, 2, err, sizeof err) == 2, "two copies imported as they are");
    CHECK(ao_memory_compact(r, "memory:copies", &folded, err, sizeof err) == 0 && folded == 1,
          "compacted: one went (%d; %s)", folded, err);
    items = ao_memory_all(r, "memory:copies", err, sizeof err);
    CHECK(items && cJSON_GetArraySize(items) == 1 && ao_memory_evidence(cJSON_GetArrayItem(items, 0)) == 2,
          "one item left, evidence 2");
    cJSON_Delete(items);
    CHECK(ao_memory_compact(r, "memory:copies", &folded, err, sizeof err) == 0 && folded == 0,
          "compacted again: nothing moves");
}

int main(void)
{
    int port = free_port();
    pid_t pid = -1;
    char url[64], err[256] = "";
    struct ao_redis *r = NULL, *other = NULL;

    if (access("/usr/bin/redis-server", X_OK) != 0) {
        printf("1..0 # SKIP no redis-server\n");
        return 0;
    }
    for (int try = 0; try < 3 && !r; try++) { /* another may take the free port first */
        int gone = 0;
        if (try > 0)
            port = free_port();
        pid = start_redis(port);
        snprintf(url, sizeof url, "redis://127.0.0.1:%d", port);
        for (int i = 0; i < 250 && !r && !gone; i++) { /* until it listens (5 s) */
            struct timespec ts = {0, 20 * 1000000L};
            nanosleep(&ts, NULL);
            gone = waitpid(pid, NULL, WNOHANG) == pid;
            r = gone ? NULL : ao_redis_new(url, "accelopt:", err, sizeof err);
        }
        if (!r && !gone) {
            kill(pid, SIGTERM);
            waitpid(pid, NULL, 0);
        }
        if (!r)
            pid = -1;
    }
    other = r ? ao_redis_new(url, "accelopt:", err, sizeof err) : NULL;
    CHECK(r && other, "redis-server on port %d (%s)", port, r ? "up" : err);
    if (r && other) {
        test_pipeline(r);
        test_store(r, other);
        test_keep(r, other);
        test_guard(r, other);
        test_memory_fold(r);
    }
    ao_redis_free(r);
    ao_redis_free(other);
    if (pid > 0) {
        kill(pid, SIGTERM);
        waitpid(pid, NULL, 0);
    }
    return CHECK_DONE();
}
