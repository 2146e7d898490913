/* budget.h - a run's token and dollar budget, counted in Redis (shared by
 * every stage replica) or, without Redis, in this process */
#ifndef AO_BUDGET_H
#define AO_BUDGET_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "agents/llm.h"
#include "core/redis.h"

struct ao_budget {
    long long tokens; /* prompt + completion; 0: no limit */
    double usd;       /* 0: no limit */
};

/* A run's budget from its config object (NULL: no limits), decoded as the
 * config record (wire/runconfig.h); 0, or -1 + err. */
int ao_budget_from_config(const cJSON *config, struct ao_budget *b, char *err, size_t errlen);

struct ao_budget_book;

/* One call admitted by ao_budget_enter (a process may have several in
 * flight: agents/flight.h); the caller keeps it until ao_budget_leave. */
struct ao_budget_hold {
    char member[128]; /* token:n|role|lease_ms: the member of the run's calls in flight */
    char run[200];
    int held;
};

/* Counts in redis (hash run:<id>, fields tokens_prompt, tokens_completion,
 * cost_usd) when r is not NULL, else in this process. */
struct ao_budget_book *ao_budget_book_new(struct ao_redis *r);
void ao_budget_book_free(struct ao_budget_book *bk);

/* Before a call: with redis, every call is in the run's calls in flight
 * (a sorted set scored by when each lease ends) until ao_budget_leave, for
 * accelopt run and status to show.  A run with a budget: 0 go (the call is counted in
 * flight until ao_budget_leave), 1 the budget is spent (reason filled), -1
 * + reason when redis failed or a stop was requested.  With redis the
 * calls in flight of every process count: a call waits while they, each
 * costed at its role's mean call in the run so far (the first call of a
 * role alone, while that is not known), could spend what is left; so concurrent calls overshoot
 * the budget no more than one call at a time does.  lease_s: how long a
 * holder that died keeps its place. */
int ao_budget_enter(struct ao_budget_book *bk, const char *run, const char *role, const struct ao_budget *b,
                    double lease_s, struct ao_budget_hold *h, char *reason, size_t len);
/* After the call (admitted by ao_budget_enter), whatever came of it. */
void ao_budget_leave(struct ao_budget_book *bk, struct ao_budget_hold *h);
/* Add a call's usage to the run's counters, and (with redis) to the
 * counters of its role and iteration that a run's report shows:
 * tokens_prompt:<role>:<iter>, tokens_completion:<role>:<iter>,
 * cost_usd:<role>:<iter> in run:<id>.  0 or -1 + err. */
int ao_budget_charge(struct ao_budget_book *bk, const char *run, const char *role, long long iter,
                     const struct ao_llm_usage *u, char *err, size_t errlen);

#endif
