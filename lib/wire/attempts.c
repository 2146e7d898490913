/* attempts.c - poison-message guard: hash attempts:<group>, field
 * <topic>:<partition>:<offset> -> times handed out.  The field is set
 * before the stage handles the input and deleted once it was handled or
 * the stage stopped cleanly, so only a death in hand leaves a count. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "wire/attempts.h"
#include "core/redis.h"
#include "wire/names.h"

struct attempts {
    struct ao_redis *r;
    char key[AO_REDIS_KEY_MAX];
};

static void field(const struct ao_inmsg *m, char *buf, size_t len)
{
    snprintf(buf, len, "%s:%d:%lld", m->topic, m->partition, m->offset);
}

static long begin(void *ctx, struct ao_io *io, const struct ao_inmsg *m)
{
    struct attempts *a = ctx;
    char f[300], err[512];
    const char *argv[4] = {"HINCRBY", a->key, f, "1"};
    redisReply *rep;
    long n;

    field(m, f, sizeof f);
    if (!(rep = ao_redis_argv(a->r, 4, argv, NULL, err, sizeof err)))
        return ao_io_fail(io, "attempt count: %s", err);
    n = rep->type == REDIS_REPLY_INTEGER ? (long)rep->integer : 1;
    freeReplyObject(rep);
    return n;
}

static void end(void *ctx, const struct ao_inmsg *m)
{
    struct attempts *a = ctx;
    char f[300], err[512];
    const char *argv[3] = {"HDEL", a->key, f};
    redisReply *rep;

    field(m, f, sizeof f);
    if ((rep = ao_redis_argv(a->r, 3, argv, NULL, err, sizeof err)))
        freeReplyObject(rep);
}

static void release(void *ctx)
{
    free(ctx);
}

int ao_attempts_guard(struct ao_io *io, struct ao_redis *r, const char *group, long max)
{
    struct attempts *a = calloc(1, sizeof *a);

    if (!a)
        return -1;
    a->r = r;
    if (!ao_redis_key(r, a->key, sizeof a->key, AO_KEY_ATTEMPTS, group)) {
        free(a);
        return -1;
    }
    io->guard.begin = begin;
    io->guard.end = end;
    io->guard.release = release;
    io->guard.ctx = a;
    io->guard.max = max;
    return 0;
}
