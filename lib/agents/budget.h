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

/* Read budget_tokens and budget_usd from a run's config object (NULL: no
 * limits); 0, or -1 + err when they are not non-negative numbers. */
int ao_budget_from_config(const cJSON *config, struct ao_budget *b, char *err, size_t errlen);

struct ao_budget_book;

/* Counts in redis (hash run:<id>, fields tokens_prompt, tokens_completion,
 * cost_usd) when r is not NULL, else in this process.  NULL on OOM. */
struct ao_budget_book *ao_budget_book_new(struct ao_redis *r);
void ao_budget_book_free(struct ao_budget_book *bk);

/* Whether the run has spent its budget: 1 spent (reason filled), 0 not,
 * -1 + reason when redis failed.  The check and the charge are each one
 * atomic step; calls in flight when the budget runs out still finish, so a
 * run can overshoot by what its concurrent calls cost. */
int ao_budget_spent(struct ao_budget_book *bk, const char *run, const struct ao_budget *b,
                    char *reason, size_t len);
/* Add a call's usage to the run's counters, and (with redis) to the
 * counters of its role and iteration that a run's report shows:
 * tokens_prompt:<role>:<iter>, tokens_completion:<role>:<iter>,
 * cost_usd:<role>:<iter> in run:<id>.  0 or -1 + err. */
int ao_budget_charge(struct ao_budget_book *bk, const char *run, const char *role, long long iter,
                     const struct ao_llm_usage *u, char *err, size_t errlen);

#endif
