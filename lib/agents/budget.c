/* budget.c - a run's token and dollar budget */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

#include "agents/budget.h"
#include "core/alloc.h"
#include "core/fiber.h"
#include "core/signals.h"
#include "core/util.h"
#include "wire/runconfig.h"
#include "wire/names.h"

struct local { /* a run's counts when there is no redis */
    char run[128];
    long long tokens;
    double usd;
    struct local *next;
};

struct ao_budget_book {
    struct ao_redis *r;
    struct local *runs;
    char token[40];    /* this process in a run's calls in flight */
    unsigned long calls; /* numbers each call's member: several may be in flight */
};

int ao_budget_from_config(const cJSON *config, struct ao_budget *b, char *err, size_t errlen)
{
    struct ao_run_config c;

    memset(b, 0, sizeof *b);
    if (ao_run_config_decode(config, &c, err, errlen) < 0) /* the record, its bounds */
        return -1;
    b->tokens = c.budget_tokens == AO_ABSENT_INT ? 0 : c.budget_tokens;
    b->usd = isnan(c.budget_usd) ? 0 : c.budget_usd;
    ao_run_config_release(&c);
    return 0;
}

struct ao_budget_book *ao_budget_book_new(struct ao_redis *r)
{
    struct ao_budget_book *bk = ao_calloc(1, sizeof *bk);
    unsigned char rnd[8];

    bk->r = r;
    ao_random_bytes(rnd, sizeof rnd);
    for (size_t i = 0; i < sizeof rnd; i++)
        snprintf(bk->token + 2 * i, 3, "%02x", rnd[i]);
    snprintf(bk->token + 16, sizeof bk->token - 16, ":%ld", (long)getpid());
    return bk;
}

void ao_budget_book_free(struct ao_budget_book *bk)
{
    if (!bk)
        return;
    while (bk->runs) {
        struct local *n = bk->runs->next;
        free(bk->runs);
        bk->runs = n;
    }
    free(bk);
}

static struct local *local_run(struct ao_budget_book *bk, const char *run)
{
    struct local *l;
    for (l = bk->runs; l; l = l->next)
        if (strcmp(l->run, run) == 0)
            return l;
    l = ao_calloc(1, sizeof *l);
    snprintf(l->run, sizeof l->run, "%s", run);
    l->next = bk->runs;
    bk->runs = l;
    return l;
}

/* Admit a call of a run with a budget.  KEYS: the run's hash, its calls
 * in flight (a sorted set of "holder|role" scored by when each lease
 * ends).  ARGV: budget tokens, budget dollars (0: none), this call's
 * member, the lease.  Returns {0} admitted, {1, tokens, usd} spent, {2}
 * wait: the calls in flight, each costed at its role's mean call in this
 * run, could spend what is left (or one's cost is not known yet: no call
 * of its role has come back). */
static const char enter_script[] =
    "local t = redis.call('TIME')\n"
    "local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)\n"
    "redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)\n"
    "local v = redis.call('HMGET', KEYS[1], 'tokens_prompt', 'tokens_completion', 'cost_usd')\n"
    "local tok = (tonumber(v[1]) or 0) + (tonumber(v[2]) or 0)\n"
    "local usd = tonumber(v[3]) or 0\n"
    "local bt, bu = tonumber(ARGV[1]), tonumber(ARGV[2])\n"
    "if (bt > 0 and tok >= bt) or (bu > 0 and usd >= bu) then\n"
    "  return {1, tostring(tok), tostring(usd)}\n"
    "end\n"
    "local ft, fu = tok, usd\n"
    "for _, m in ipairs(redis.call('ZRANGE', KEYS[2], 0, -1)) do\n"
    "  local role = string.match(m, '^[^|]*|([^|]*)') or ''\n"
    "  local r = redis.call('HMGET', KEYS[1], 'calls_r:' .. role, 'tokens_r:' .. role, 'usd_r:' .. role)\n"
    "  local n = tonumber(r[1]) or 0\n"
    "  if n == 0 then return {2} end\n"
    "  ft = ft + (tonumber(r[2]) or 0) / n\n"
    "  fu = fu + (tonumber(r[3]) or 0) / n\n"
    "end\n"
    "if (bt > 0 and ft >= bt) or (bu > 0 and fu >= bu) then return {2} end\n"
    "redis.call('ZADD', KEYS[2], now + tonumber(ARGV[4]), ARGV[3])\n"
    "redis.call('PEXPIRE', KEYS[2], ARGV[4])\n"
    "return {0}\n";

static int spent_reason(const struct ao_budget *b, long long tokens, double usd, char *reason, size_t len)
{
    if (b->tokens && tokens >= b->tokens) {
        snprintf(reason, len, "the run's token budget is spent (%lld of %lld)", tokens, b->tokens);
        return 1;
    }
    if (b->usd && usd >= b->usd) {
        snprintf(reason, len, "the run's dollar budget is spent ($%.4f of $%.4f)", usd, b->usd);
        return 1;
    }
    return 0;
}

/* A call of a run without a budget, only shown in flight (accelopt run's
 * line, accelopt status).  KEYS: its calls in flight; ARGV: the member,
 * the lease. */
static const char watch_script[] =
    "local t = redis.call('TIME')\n"
    "local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)\n"
    "redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)\n"
    "redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])\n"
    "redis.call('PEXPIRE', KEYS[1], ARGV[2])\n"
    "return 0\n";

int ao_budget_enter(struct ao_budget_book *bk, const char *run, const char *role, const struct ao_budget *b,
                    double lease_s, struct ao_budget_hold *h, char *reason, size_t len)
{
    char key[AO_REDIS_KEY_MAX], fl[AO_REDIS_KEY_MAX], bt[24], bu[40], lease[24];
    long long lease_ms = (long long)(lease_s * 1000) + 1000;

    h->held = 0;
    if (!bk->r && !b->tokens && !b->usd)
        return 0;
    if (!bk->r) { /* one process, one call at a time */
        struct local *l = local_run(bk, run);
        return spent_reason(b, l->tokens, l->usd, reason, len);
    }
    if (!ao_redis_key(bk->r, key, sizeof key, AO_KEY_RUN, run) ||
        !ao_redis_key(bk->r, fl, sizeof fl, AO_KEY_INFLIGHT, run))
        return ao_errf(reason, len, "run id '%.40s...' is too long for a key", run);
    /* "holder|role|lease": whoever reads the set knows when each call began */
    snprintf(h->member, sizeof h->member, "%s:%lu|%.30s|%lld", bk->token, ++bk->calls, role ? role : "model",
             lease_ms);
    snprintf(lease, sizeof lease, "%lld", lease_ms);
    if (!b->tokens && !b->usd) { /* shown, not limited: a failure here costs the call nothing */
        const char *argv[5] = {"EVAL", watch_script, "1", fl, h->member};
        const char *args[6] = {argv[0], argv[1], argv[2], argv[3], argv[4], lease};
        char e[AO_ERRLEN];
        redisReply *rep = ao_redis_argv(bk->r, 6, args, NULL, e, sizeof e);
        if (rep) {
            h->held = 1;
            snprintf(h->run, sizeof h->run, "%s", run);
            freeReplyObject(rep);
        }
        return 0;
    }
    {
        const char *argv[9] = {"EVAL", enter_script, "2", key, fl, bt, bu, h->member, lease};
        unsigned spin = 0;
        snprintf(bt, sizeof bt, "%lld", b->tokens);
        snprintf(bu, sizeof bu, "%.10f", b->usd);
        for (;;) {
            redisReply *rep = ao_redis_argv(bk->r, 9, argv, NULL, reason, len);
            long long v;
            int rc = 0;
            if (!rep)
                return -1;
            v = rep->type == REDIS_REPLY_ARRAY && rep->elements >= 1 ? rep->element[0]->integer : 0;
            if (v == 1 && rep->elements == 3)
                rc = spent_reason(b, strtoll(rep->element[1]->str, NULL, 10), strtod(rep->element[2]->str, NULL),
                                  reason, len);
            freeReplyObject(rep);
            if (v == 0) {
                h->held = 1; /* h->member names this call until it leaves */
                snprintf(h->run, sizeof h->run, "%s", run);
                return 0;
            }
            if (v == 1)
                return rc ? 1 : 0;
            if (ao_stop_requested())
                return snprintf(reason, len, "stopped while the run's calls in flight came back"), -1;
            /* wait for the calls in flight to come back */
            ao_nap_ns((30 + (long long)(++spin * 7919 % 50)) * 1000000LL);
        }
    }
}

void ao_budget_leave(struct ao_budget_book *bk, struct ao_budget_hold *h)
{
    char fl[AO_REDIS_KEY_MAX], err[256];
    const char *argv[3] = {"ZREM", fl, h->member};
    redisReply *rep;

    if (!h->held)
        return;
    h->held = 0;
    if (ao_redis_key(bk->r, fl, sizeof fl, AO_KEY_INFLIGHT, h->run) &&
        (rep = ao_redis_argv(bk->r, 3, argv, NULL, err, sizeof err))) /* else its lease ends */
        freeReplyObject(rep);
}

/* ARGV[4]: "<role>:<iter>", the suffix of the per-role counters; ARGV[5]:
 * the role, whose mean call ao_budget_enter costs its calls in flight at */
static const char charge_script[] =
    "redis.call('HINCRBY', KEYS[1], 'tokens_prompt', ARGV[1])\n"
    "redis.call('HINCRBY', KEYS[1], 'tokens_completion', ARGV[2])\n"
    "redis.call('HINCRBYFLOAT', KEYS[1], 'cost_usd', ARGV[3])\n"
    "redis.call('HINCRBY', KEYS[1], 'tokens_prompt:' .. ARGV[4], ARGV[1])\n"
    "redis.call('HINCRBY', KEYS[1], 'tokens_completion:' .. ARGV[4], ARGV[2])\n"
    "redis.call('HINCRBYFLOAT', KEYS[1], 'cost_usd:' .. ARGV[4], ARGV[3])\n"
    "redis.call('HINCRBY', KEYS[1], 'calls_r:' .. ARGV[5], 1)\n"
    "redis.call('HINCRBY', KEYS[1], 'tokens_r:' .. ARGV[5], ARGV[1] + ARGV[2])\n"
    "redis.call('HINCRBYFLOAT', KEYS[1], 'usd_r:' .. ARGV[5], ARGV[3])\n"
    "return 1\n";

int ao_budget_charge(struct ao_budget_book *bk, const char *run, const char *role, long long iter,
                     const struct ao_llm_usage *u, char *err, size_t errlen)
{
    if (!u->prompt && !u->completion && !u->cost_usd)
        return 0;
    if (bk->r) {
        char key[AO_REDIS_KEY_MAX], p[24], c[24], d[40], who[80], r[48];
        const char *argv[9] = {"EVAL", charge_script, "1", key, p, c, d, who, r};
        redisReply *rep;
        if (!ao_redis_key(bk->r, key, sizeof key, AO_KEY_RUN, run))
            return ao_errf(err, errlen, "run id '%.40s...' is too long for a key", run);
        snprintf(p, sizeof p, "%lld", u->prompt);
        snprintf(c, sizeof c, "%lld", u->completion);
        snprintf(d, sizeof d, "%.10f", u->cost_usd);
        snprintf(who, sizeof who, "%.40s:%lld", role ? role : "model", iter);
        snprintf(r, sizeof r, "%.30s", role ? role : "model");
        if (!(rep = ao_redis_argv(bk->r, 9, argv, NULL, err, errlen)))
            return -1;
        freeReplyObject(rep);
        return 0;
    }
    struct local *l = local_run(bk, run);
    l->tokens += u->prompt + u->completion;
    l->usd += u->cost_usd;
    return 0;
}
