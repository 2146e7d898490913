/* budget.c - a run's token and dollar budget */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "agents/budget.h"
#include "core/util.h"
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
};

int ao_budget_from_config(const cJSON *config, struct ao_budget *b, char *err, size_t errlen)
{
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(config, "budget_tokens");
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(config, "budget_usd");

    memset(b, 0, sizeof *b);
    if ((t && (!cJSON_IsNumber(t) || t->valuedouble < 0)) ||
        (d && (!cJSON_IsNumber(d) || d->valuedouble < 0))) {
        snprintf(err, errlen, "budget_tokens and budget_usd must be non-negative numbers");
        return -1;
    }
    b->tokens = t ? (long long)t->valuedouble : 0;
    b->usd = d ? d->valuedouble : 0;
    return 0;
}

struct ao_budget_book *ao_budget_book_new(struct ao_redis *r)
{
    struct ao_budget_book *bk = calloc(1, sizeof *bk);
    if (bk)
        bk->r = r;
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
    if ((l = calloc(1, sizeof *l))) {
        snprintf(l->run, sizeof l->run, "%s", run);
        l->next = bk->runs;
        bk->runs = l;
    }
    return l;
}

static const char spent_script[] =
    "local v = redis.call('HMGET', KEYS[1], 'tokens_prompt', 'tokens_completion', 'cost_usd')\n"
    "return {tostring((tonumber(v[1]) or 0) + (tonumber(v[2]) or 0)), tostring(tonumber(v[3]) or 0)}\n";

int ao_budget_spent(struct ao_budget_book *bk, const char *run, const struct ao_budget *b,
                    char *reason, size_t len)
{
    long long tokens = 0;
    double usd = 0;

    if (!b->tokens && !b->usd)
        return 0;
    if (bk->r) {
        char key[AO_REDIS_KEY_MAX];
        const char *argv[4] = {"EVAL", spent_script, "1", key};
        redisReply *rep;
        if (!ao_redis_key(bk->r, key, sizeof key, AO_KEY_RUN, run))
            return ao_errf(reason, len, "run id '%.40s...' is too long for a key", run);
        if (!(rep = ao_redis_argv(bk->r, 4, argv, NULL, reason, len)))
            return -1;
        if (rep->type == REDIS_REPLY_ARRAY && rep->elements == 2 &&
            rep->element[0]->type == REDIS_REPLY_STRING) {
            tokens = strtoll(rep->element[0]->str, NULL, 10);
            usd = strtod(rep->element[1]->str, NULL);
        }
        freeReplyObject(rep);
    } else {
        struct local *l = local_run(bk, run);
        if (l)
            tokens = l->tokens, usd = l->usd;
    }
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

/* ARGV[4]: "<role>:<iter>", the suffix of the per-role counters */
static const char charge_script[] =
    "redis.call('HINCRBY', KEYS[1], 'tokens_prompt', ARGV[1])\n"
    "redis.call('HINCRBY', KEYS[1], 'tokens_completion', ARGV[2])\n"
    "redis.call('HINCRBYFLOAT', KEYS[1], 'cost_usd', ARGV[3])\n"
    "redis.call('HINCRBY', KEYS[1], 'tokens_prompt:' .. ARGV[4], ARGV[1])\n"
    "redis.call('HINCRBY', KEYS[1], 'tokens_completion:' .. ARGV[4], ARGV[2])\n"
    "redis.call('HINCRBYFLOAT', KEYS[1], 'cost_usd:' .. ARGV[4], ARGV[3])\n"
    "return 1\n";

int ao_budget_charge(struct ao_budget_book *bk, const char *run, const char *role, long long iter,
                     const struct ao_llm_usage *u, char *err, size_t errlen)
{
    if (!u->prompt && !u->completion && !u->cost_usd)
        return 0;
    if (bk->r) {
        char key[AO_REDIS_KEY_MAX], p[24], c[24], d[40], who[80];
        const char *argv[8] = {"EVAL", charge_script, "1", key, p, c, d, who};
        redisReply *rep;
        if (!ao_redis_key(bk->r, key, sizeof key, AO_KEY_RUN, run))
            return ao_errf(err, errlen, "run id '%.40s...' is too long for a key", run);
        snprintf(p, sizeof p, "%lld", u->prompt);
        snprintf(c, sizeof c, "%lld", u->completion);
        snprintf(d, sizeof d, "%.10f", u->cost_usd);
        snprintf(who, sizeof who, "%.40s:%lld", role ? role : "model", iter);
        if (!(rep = ao_redis_argv(bk->r, 8, argv, NULL, err, errlen)))
            return -1;
        freeReplyObject(rep);
        return 0;
    }
    struct local *l = local_run(bk, run);
    if (!l) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    l->tokens += u->prompt + u->completion;
    l->usd += u->cost_usd;
    return 0;
}
