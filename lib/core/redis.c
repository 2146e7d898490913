/* redis.c - a Redis connection that reconnects by itself (hiredis 0.14 does not) */
#include <stdarg.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <hiredis/hiredis.h>

#include "core/alloc.h"
#include "core/log.h"
#include "core/redis.h"
#include "core/signals.h"
#include "core/util.h"

struct ao_redis {
    redisContext *c;
    char host[256], password[256], prefix[64];
    int port, db;
};

static int parse_url(struct ao_redis *r, const char *url, char *err, size_t errlen)
{
    const char *p = url, *at, *colon, *slash;

    if (strncmp(p, "redis://", 8) == 0)
        p += 8;
    r->port = 6379;
    if ((at = strrchr(p, '@'))) {
        const char *pw = memchr(p, ':', (size_t)(at - p));
        pw = pw ? pw + 1 : p;
        if (ao_name(r->password, sizeof r->password, "%.*s", (int)(at - pw), pw) < 0)
            return ao_errf(err, errlen, "the redis URL's password is over %zu bytes", sizeof r->password - 1);
        p = at + 1;
    }
    slash = strchr(p, '/');
    colon = strchr(p, ':');
    if (colon && (!slash || colon < slash)) {
        if (ao_name(r->host, sizeof r->host, "%.*s", (int)(colon - p), p) < 0)
            r->host[0] = '\0'; /* a bad URL, below */
        r->port = atoi(colon + 1);
    } else if (ao_name(r->host, sizeof r->host, "%.*s", slash ? (int)(slash - p) : (int)strlen(p), p) < 0) {
        r->host[0] = '\0';
    }
    if (slash)
        r->db = atoi(slash + 1);
    if (!r->host[0] || r->port <= 0 || r->port > 65535) {
        snprintf(err, errlen, "bad redis URL (want redis://host:port[/db])");
        return -1;
    }
    return 0;
}

static int command_ok(redisContext *c, redisReply *rep)
{
    int ok = rep && rep->type != REDIS_REPLY_ERROR;
    (void)c;
    if (rep)
        freeReplyObject(rep);
    return ok;
}

static int connect_once(struct ao_redis *r, char *err, size_t errlen)
{
    struct timeval tv = {2, 0};

    if (r->c)
        redisFree(r->c);
    r->c = redisConnectWithTimeout(r->host, r->port, tv);
    if (!r->c || r->c->err) {
        snprintf(err, errlen, "cannot connect to redis '%s:%d': %s", r->host, r->port,
                 r->c ? r->c->errstr : "out of memory");
        goto fail;
    }
    redisSetTimeout(r->c, tv);
    if (r->password[0] && !command_ok(r->c, redisCommand(r->c, "AUTH %s", r->password))) {
        snprintf(err, errlen, "redis '%s:%d' refused the password", r->host, r->port);
        goto fail;
    }
    if (r->db && !command_ok(r->c, redisCommand(r->c, "SELECT %d", r->db))) {
        snprintf(err, errlen, "redis '%s:%d' refused database %d", r->host, r->port, r->db);
        goto fail;
    }
    return 0;
fail:
    if (r->c)
        redisFree(r->c);
    r->c = NULL;
    return -1;
}

struct ao_redis *ao_redis_new(const char *url, const char *prefix, char *err, size_t errlen)
{
    struct ao_redis *r = ao_calloc(1, sizeof *r);

    if (ao_name(r->prefix, sizeof r->prefix, "%s", prefix ? prefix : "accelopt:") < 0) {
        ao_errf(err, errlen, "the redis key prefix is over %zu bytes", sizeof r->prefix - 1);
        ao_redis_free(r);
        return NULL;
    }
    if (parse_url(r, url, err, errlen) < 0 || connect_once(r, err, errlen) < 0) {
        ao_redis_free(r);
        return NULL;
    }
    return r;
}

void ao_redis_free(struct ao_redis *r)
{
    if (!r)
        return;
    if (r->c)
        redisFree(r->c);
    memset(r->password, 0, sizeof r->password);
    free(r);
}

int ao_redis_get(struct ao_redis *r, const char *key, char **val, char *err, size_t errlen)
{
    char k[AO_REDIS_KEY_MAX];
    const char *argv[2] = {"GET", ao_redis_key(r, k, sizeof k, "%s", key)};
    redisReply *rep;
    int rc = -1;

    *val = NULL;
    if (!argv[1])
        return ao_errf(err, errlen, "redis key '%.60s...' is too long", key);
    if (!(rep = ao_redis_argv(r, 2, argv, NULL, err, errlen)))
        return -1;
    if (rep->type == REDIS_REPLY_NIL) {
        rc = 0;
    } else if (rep->type == REDIS_REPLY_STRING) {
        *val = ao_strndup(rep->str, rep->len);
        rc = 1;
    } else {
        snprintf(err, errlen, "redis GET: unexpected reply");
    }
    freeReplyObject(rep);
    return rc;
}

int ao_redis_set(struct ao_redis *r, const char *key, const char *val, char *err, size_t errlen)
{
    return ao_redis_set_ex(r, key, val, 0, err, errlen);
}

int ao_redis_set_ex(struct ao_redis *r, const char *key, const char *val, long ttl_s, char *err,
                    size_t errlen)
{
    char k[AO_REDIS_KEY_MAX], ttl[32];
    const char *argv[5] = {"SET", ao_redis_key(r, k, sizeof k, "%s", key), val, "EX", ttl};
    redisReply *rep;

    if (!argv[1])
        return ao_errf(err, errlen, "redis key '%.60s...' is too long", key);
    snprintf(ttl, sizeof ttl, "%ld", ttl_s);
    rep = ao_redis_argv(r, ttl_s > 0 ? 5 : 3, argv, NULL, err, errlen);

    if (!rep)
        return -1;
    freeReplyObject(rep);
    return 0;
}

/* Wait before reconnecting attempt `attempt` (from 1): with backoff, for as
 * long as it takes (a stage waits out a Redis restart instead of failing
 * the message in hand), until a stop is requested: then 0. */
static int backoff(int attempt, long long *down_since, long long *warned, const char *err)
{
    long ms = attempt < 5 ? 100L << (attempt - 1) : 1000;
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    long long now = ao_now_ns();

    if (ao_stop_requested())
        return 0; /* err says why it was down */
    if (!*down_since)
        *down_since = now;
    if (now - *warned > 30 * 1000000000LL) {
        ao_warn("%s; retrying", err);
        *warned = now;
    }
    nanosleep(&ts, NULL);
    return 1;
}

static void back_again(const struct ao_redis *r, long long down_since)
{
    if (down_since)
        ao_info("redis '%s:%d' is back after %.1f s", r->host, r->port,
                (double)(ao_now_ns() - down_since) / 1e9);
}

static void lost(struct ao_redis *r, char *err, size_t errlen)
{
    snprintf(err, errlen, "redis '%s:%d': %s", r->host, r->port, r->c->errstr);
    redisFree(r->c);
    r->c = NULL;
}

static void free_replies(int n, redisReply **replies)
{
    for (int i = 0; i < n; i++) {
        if (replies[i])
            freeReplyObject(replies[i]);
        replies[i] = NULL;
    }
}

/* every round trip of this process (all its threads), and the time spent
 * in them: a trace of a message says how much of its handling was Redis */
static long long trips, trip_ns;

void ao_redis_totals(long long *n, long long *ns)
{
    *n = __atomic_load_n(&trips, __ATOMIC_RELAXED);
    *ns = __atomic_load_n(&trip_ns, __ATOMIC_RELAXED);
}

static int pipeline(struct ao_redis *r, int n, const struct ao_redis_cmd *cmds,
                    redisReply **replies, char *err, size_t errlen);

int ao_redis_pipeline(struct ao_redis *r, int n, const struct ao_redis_cmd *cmds,
                      redisReply **replies, char *err, size_t errlen)
{
    long long t0 = ao_now_ns();
    int rc = pipeline(r, n, cmds, replies, err, errlen);

    __atomic_fetch_add(&trips, 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&trip_ns, ao_now_ns() - t0, __ATOMIC_RELAXED);
    return rc;
}

static int pipeline(struct ao_redis *r, int n, const struct ao_redis_cmd *cmds,
                    redisReply **replies, char *err, size_t errlen)
{
    long long down_since = 0, warned = 0;

    for (int i = 0; i < n; i++)
        replies[i] = NULL;
    for (int attempt = 0;; attempt++) {
        int i, sent = 1;
        if (attempt > 0 && !backoff(attempt, &down_since, &warned, err))
            return -1;
        if (!r->c && connect_once(r, err, errlen) < 0)
            continue;
        for (i = 0; i < n && sent; i++)
            sent = redisAppendCommandArgv(r->c, cmds[i].argc, cmds[i].argv, cmds[i].lens) == REDIS_OK;
        for (i = 0; i < n && sent; i++) { /* every reply is read, or the next command reads a stale one */
            void *rep = NULL;
            if (redisGetReply(r->c, &rep) != REDIS_OK) {
                sent = 0;
                break;
            }
            replies[i] = rep;
        }
        if (!sent) {
            free_replies(n, replies);
            lost(r, err, errlen);
            continue;
        }
        for (i = 0; i < n; i++) /* a Redis restarting from its AOF runs nothing yet: wait it out */
            if (replies[i]->type == REDIS_REPLY_ERROR && strncmp(replies[i]->str, "LOADING", 7) == 0)
                break;
        if (i < n) {
            snprintf(err, errlen, "redis '%s:%d': %s", r->host, r->port, replies[i]->str);
            free_replies(n, replies);
            continue;
        }
        back_again(r, down_since);
        for (i = 0; i < n; i++)
            if (replies[i]->type == REDIS_REPLY_ERROR) {
                snprintf(err, errlen, "redis %s failed: %s", cmds[i].argv[0], replies[i]->str);
                free_replies(n, replies);
                return -1;
            }
        return 0;
    }
}

struct redisReply *ao_redis_argv(struct ao_redis *r, int argc, const char **argv,
                                 const size_t *lens, char *err, size_t errlen)
{
    struct ao_redis_cmd c = {argc, argv, lens};
    redisReply *rep;

    return ao_redis_pipeline(r, 1, &c, &rep, err, errlen) < 0 ? NULL : rep;
}

char *ao_redis_url_masked(const char *url, char *buf, size_t len)
{
    const char *scheme = strncmp(url, "redis://", 8) == 0 ? "redis://" : "";
    const char *p = url + strlen(scheme), *at = strrchr(p, '@');

    if (at)
        snprintf(buf, len, "%s***@%s", scheme, at + 1);
    else
        snprintf(buf, len, "%s", url);
    return buf;
}

char *ao_redis_key(const struct ao_redis *r, char *buf, size_t len, const char *fmt, ...)
{
    va_list ap;
    int n = snprintf(buf, len, "%s", r->prefix), m = -1;

    if (n >= 0 && (size_t)n < len) {
        va_start(ap, fmt);
        m = vsnprintf(buf + n, len - (size_t)n, fmt, ap);
        va_end(ap);
    }
    if (m < 0 || (size_t)m >= len - (size_t)n) { /* never a cut key: it would be another's */
        if (len)
            buf[0] = '\0';
        return NULL;
    }
    return buf;
}

int ao_redis_listen(struct ao_redis *r, int n, const char *const *channels, char *err, size_t errlen)
{
    const char *argv[1 + 16];

    if (n < 1 || n > 16)
        return ao_errf(err, errlen, "1 to 16 channels");
    argv[0] = "SUBSCRIBE";
    for (int i = 0; i < n; i++)
        argv[1 + i] = channels[i];
    if (redisAppendCommandArgv(r->c, 1 + n, argv, NULL) != REDIS_OK)
        return ao_errf(err, errlen, "redis: %s", r->c->errstr);
    for (int i = 0; i < n; i++) { /* one confirmation a channel */
        redisReply *rep = NULL;
        if (redisGetReply(r->c, (void **)&rep) != REDIS_OK || !rep || rep->type != REDIS_REPLY_ARRAY) {
            if (rep)
                freeReplyObject(rep);
            return ao_errf(err, errlen, "redis refused SUBSCRIBE: %s", r->c->err ? r->c->errstr : "?");
        }
        freeReplyObject(rep);
    }
    return 0;
}

int ao_redis_fd(const struct ao_redis *r)
{
    return r->c ? r->c->fd : -1;
}

int ao_redis_heard(struct ao_redis *r)
{
    struct pollfd pf = {r->c ? r->c->fd : -1, POLLIN, 0};
    int n = 0;
    void *rep;

    if (pf.fd < 0 || r->c->err)
        return -1;
    if (poll(&pf, 1, 0) <= 0)
        return 0;
    /* readable: one read, which does not wait (a socket at EOF reads 0) */
    if (redisBufferRead(r->c) != REDIS_OK)
        return -1;
    while (redisGetReplyFromReader(r->c, &rep) == REDIS_OK && rep) {
        freeReplyObject(rep);
        n++;
    }
    return r->c->err ? -1 : n;
}
