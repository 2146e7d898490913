/* gate.c - a counting semaphore per model server in Redis: a sorted set of
 * holders scored by when their lease ends, and a pause key with a TTL */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

#include "agents/gate.h"
#include "core/alloc.h"
#include "core/fiber.h"
#include "core/signals.h"
#include "core/util.h"
#include "wire/names.h"

struct ao_gate {
    struct ao_redis *r;
    char key[AO_REDIS_KEY_MAX], pause_key[AO_REDIS_KEY_MAX], wait_key[AO_REDIS_KEY_MAX];
    char token[40]; /* this process among the holders; each call's adds a number */
    unsigned long calls;
    int limit, urgent;
    long long lease_ms;
    double waited_s;
};

/* 0: entered; > 0: paused for that many ms; -1: full.  The server's clock
 * scores the leases, so machines whose clocks differ agree.  An urgent
 * caller that finds the server full says so in the waiters' set (for a
 * moment: it says it again at every try); a caller that is not urgent
 * leaves their places to them. */
static const char enter_script[] =
    "local p = redis.call('PTTL', KEYS[2])\n"
    "if p > 0 then return p end\n"
    "local t = redis.call('TIME')\n"
    "local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)\n"
    "redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)\n"
    "redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)\n"
    "local busy = redis.call('ZCARD', KEYS[1])\n"
    "if ARGV[4] == '1' then\n"
    "  if busy >= tonumber(ARGV[1]) then\n"
    "    redis.call('ZADD', KEYS[3], now + 1000, ARGV[3])\n"
    "    redis.call('PEXPIRE', KEYS[3], 1000)\n"
    "    return -1\n"
    "  end\n"
    "  redis.call('ZREM', KEYS[3], ARGV[3])\n"
    "elseif busy + redis.call('ZCARD', KEYS[3]) >= tonumber(ARGV[1]) then\n"
    "  return -1\n"
    "end\n"
    "redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[3])\n"
    "redis.call('PEXPIRE', KEYS[1], ARGV[2])\n"
    "return 0\n";

static const char pause_script[] =
    "if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[1]) then\n"
    "  redis.call('SET', KEYS[1], '1', 'PX', ARGV[1])\n"
    "end\n"
    "return 0\n";

struct ao_gate *ao_gate_new(struct ao_redis *r, const char *url, int limit, double lease_s, int urgent,
                            char *err, size_t errlen)
{
    struct ao_gate *g = ao_calloc(1, sizeof *g);
    unsigned char rnd[8];
    char hex[65], id[17];

    ao_sha256_hex(url, strlen(url), hex);
    snprintf(id, sizeof id, "%.16s", hex);
    if (!ao_redis_key(r, g->key, sizeof g->key, AO_KEY_GATE, id) ||
        !ao_redis_key(r, g->pause_key, sizeof g->pause_key, AO_KEY_GATE_PAUSE, id) ||
        !ao_redis_key(r, g->wait_key, sizeof g->wait_key, AO_KEY_GATE_WAIT, id)) {
        snprintf(err, errlen, "the redis prefix is too long for the model gate's keys");
        free(g);
        return NULL;
    }
    ao_random_bytes(rnd, sizeof rnd);
    for (size_t i = 0; i < sizeof rnd; i++)
        snprintf(g->token + 2 * i, 3, "%02x", rnd[i]);
    snprintf(g->token + 16, sizeof g->token - 16, ":%ld", (long)getpid());
    g->r = r;
    g->urgent = urgent;
    g->limit = limit > 0 ? limit : 1;
    g->lease_ms = (long long)(lease_s * 1000) > 1000 ? (long long)(lease_s * 1000) : 1000;
    return g;
}

void ao_gate_free(struct ao_gate *g)
{
    if (!g)
        return;
    free(g);
}

int ao_gate_enter(struct ao_gate *g, struct ao_gate_slot *s, char *err, size_t errlen)
{
    char lim[24], lease[24];
    const char *argv[10] = {"EVAL", enter_script, "3", g->key, g->pause_key, g->wait_key, lim, lease, s->token,
                            g->urgent ? "1" : "0"};
    int64_t start = ao_now_ns();
    unsigned spin = 0;

    s->held = 0;
    snprintf(s->token, sizeof s->token, "%s:%lu", g->token, ++g->calls);
    snprintf(lim, sizeof lim, "%d", g->limit);
    snprintf(lease, sizeof lease, "%lld", g->lease_ms);
    for (;;) {
        redisReply *rep = ao_redis_argv(g->r, 10, argv, NULL, err, errlen);
        long long v;
        if (!rep)
            return -1;
        v = rep->type == REDIS_REPLY_INTEGER ? rep->integer : -1;
        freeReplyObject(rep);
        if (v == 0) {
            s->held = 1;
            g->waited_s += (double)(ao_now_ns() - start) / 1e9;
            return 0;
        }
        if (ao_stop_requested()) {
            snprintf(err, errlen, "stopped while waiting for a free model call");
            return -1;
        }
        /* paused: sleep it out in slices; full: poll again soon, spread
         * over the waiters (no lock step) */
        ao_nap_ns((v > 0 ? (v < 200 ? v : 200) : 20 + (long long)(++spin * 7919 % 40)) * 1000000LL);
    }
}

void ao_gate_leave(struct ao_gate *g, struct ao_gate_slot *s)
{
    const char *argv[3] = {"ZREM", g->key, s->token};
    char err[256];
    redisReply *rep;

    if (!s->held)
        return;
    s->held = 0;
    if ((rep = ao_redis_argv(g->r, 3, argv, NULL, err, sizeof err))) /* else the lease frees it */
        freeReplyObject(rep);
}

void ao_gate_pause(struct ao_gate *g, double seconds)
{
    char ms[24], err[256];
    const char *argv[5] = {"EVAL", pause_script, "1", g->pause_key, ms};
    redisReply *rep;

    if (seconds <= 0)
        return;
    snprintf(ms, sizeof ms, "%lld", (long long)(seconds * 1000) + 1);
    if ((rep = ao_redis_argv(g->r, 5, argv, NULL, err, sizeof err)))
        freeReplyObject(rep);
}

double ao_gate_waited_s(const struct ao_gate *g)
{
    return g->waited_s;
}
