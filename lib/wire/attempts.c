/* attempts.c - poison-message guard: hash attempts:<group>, field
 * <topic>:<partition>:<offset> -> times handed out.  The field is set
 * before the stage handles the input and deleted once it was handled (with
 * the next input's count, or when the input runs dry) or the stage stopped
 * cleanly, so only a death in hand leaves a count.  Several inputs may be
 * in hand at once (agents/flight.h): those handled wait in a list.  Then a
 * death counts against every input in hand, so the counts left when the
 * stage starts name suspects, each handled alone (suspect): an innocent
 * one is then handled and forgotten, and a poison one dies alone until it
 * is past the attempts. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "wire/attempts.h"
#include "core/alloc.h"
#include "core/log.h"
#include "core/redis.h"
#include "wire/names.h"

#define DONE_MAX 32

struct attempts {
    struct ao_redis *r;
    char key[AO_REDIS_KEY_MAX];
    char done[DONE_MAX][300]; /* inputs handled, their counts not yet deleted */
    int ndone;
    char **suspects; /* the counts there when the stage started */
    int nsuspects;
};

static void idle(void *ctx);

static void field(const struct ao_inmsg *m, char *buf, size_t len)
{
    snprintf(buf, len, "%s:%d:%lld", m->topic, m->partition, m->offset);
}

/* The count of the input handled before goes in the same round trip as
 * this one's: a stage in a burst pays one Redis round trip an input, not
 * two.  Until then that input reads as in hand, so a death in between
 * (in the commit of its outputs) counts against it, as one in its handling
 * would. */
static long begin(void *ctx, struct ao_io *io, const struct ao_inmsg *m)
{
    struct attempts *a = ctx;
    char f[300], err[512];
    const char *incr[4] = {"HINCRBY", a->key, f, "1"}, *del[2 + DONE_MAX] = {"HDEL", a->key};
    struct ao_redis_cmd cmds[2] = {{2 + a->ndone, del, NULL}, {4, incr, NULL}};
    redisReply *rep[2];
    int with_done = a->ndone > 0;
    long n;

    for (int i = 0; i < a->ndone; i++)
        del[2 + i] = a->done[i];
    field(m, f, sizeof f);
    if (ao_redis_pipeline(a->r, 1 + with_done, cmds + !with_done, rep, err, sizeof err) < 0)
        return ao_io_fail(io, "attempt count: %s", err);
    a->ndone = 0;
    n = rep[with_done]->type == REDIS_REPLY_INTEGER ? (long)rep[with_done]->integer : 1;
    for (int i = 0; i <= with_done; i++)
        freeReplyObject(rep[i]);
    return n;
}

static int suspect_at(const struct attempts *a, const struct ao_inmsg *m)
{
    char f[300];

    field(m, f, sizeof f);
    for (int i = 0; i < a->nsuspects; i++)
        if (strcmp(a->suspects[i], f) == 0)
            return i;
    return -1;
}

static int suspect(void *ctx, const struct ao_inmsg *m)
{
    return suspect_at(ctx, m) >= 0;
}

static void end(void *ctx, const struct ao_inmsg *m)
{
    struct attempts *a = ctx;
    int i = suspect_at(a, m);

    if (i >= 0) { /* handled: no longer a suspect */
        free(a->suspects[i]);
        a->suspects[i] = a->suspects[--a->nsuspects];
    }
    if (a->ndone == DONE_MAX)
        idle(ctx);
    field(m, a->done[a->ndone++], sizeof a->done[0]);
}

/* Nothing more to handle for now (or a clean stop): forget the last one. */
static void idle(void *ctx)
{
    struct attempts *a = ctx;
    char err[512];
    const char *argv[2 + DONE_MAX] = {"HDEL", a->key};
    redisReply *rep;

    if (!a->ndone)
        return;
    for (int i = 0; i < a->ndone; i++)
        argv[2 + i] = a->done[i];
    if ((rep = ao_redis_argv(a->r, 2 + a->ndone, argv, NULL, err, sizeof err)))
        freeReplyObject(rep);
    a->ndone = 0;
}

static void release(void *ctx)
{
    struct attempts *a = ctx;

    idle(ctx);
    for (int i = 0; i < a->nsuspects; i++)
        free(a->suspects[i]);
    free(a->suspects);
    free(ctx);
}

/* The counts a death left (best effort: without them no input is a
 * suspect, as before). */
static void load_suspects(struct attempts *a)
{
    char err[512];
    const char *argv[2] = {"HKEYS", a->key};
    redisReply *rep = ao_redis_argv(a->r, 2, argv, NULL, err, sizeof err);

    if (rep && rep->type == REDIS_REPLY_ARRAY && rep->elements > 0 &&
        (a->suspects = ao_calloc(rep->elements, sizeof *a->suspects)))
        for (size_t i = 0; i < rep->elements; i++)
            if (rep->element[i]->type == REDIS_REPLY_STRING &&
                (a->suspects[a->nsuspects] = ao_strdup(rep->element[i]->str)))
                a->nsuspects++;
    if (rep)
        freeReplyObject(rep);
    if (a->nsuspects)
        ao_info("%d input%s in hand when a stage of this group died: each handled alone", a->nsuspects,
                a->nsuspects == 1 ? " was" : "s were");
}

int ao_attempts_guard(struct ao_io *io, struct ao_redis *r, const char *group, long max)
{
    struct attempts *a = ao_calloc(1, sizeof *a);

    a->r = r;
    if (!ao_redis_key(r, a->key, sizeof a->key, AO_KEY_ATTEMPTS, group)) {
        free(a);
        return -1;
    }
    load_suspects(a);
    io->guard.begin = begin;
    io->guard.suspect = suspect;
    io->guard.end = end;
    io->guard.idle = idle;
    io->guard.release = release;
    io->guard.ctx = a;
    io->guard.max = max;
    return 0;
}
