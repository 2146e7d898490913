/* model.h - the model behind an agent stage, one interface for both kinds:
 * the model client (an LLM behind the OpenAI-compatible API: prompts in,
 * replies parsed; model_llm.c) and the builtin offline model (knob moves;
 * model_builtin.c).  A stage asks for a plan, a kernel, a fix or a
 * summary; which model answers is the agent's config, not the stage's. */
#ifndef AO_MODEL_H
#define AO_MODEL_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "agents/extract.h"
#include "agents/llm.h"
#include "wire/msg.h"

struct ao_agent;
struct ao_problem;

/* What a plan is asked with: the candidate, the memory (its items and
 * their text for a prompt), the titles of the plans already made for it,
 * the task (NULL when the model needs none), the run's seed (the builtin's
 * choices), the stage's (the shuffle of a prompt's profile lines), and
 * which plan of how many this is. */
struct ao_plan_ask {
    const struct ao_candidate_msg *c;
    const cJSON *memory;
    const char *memory_text, *earlier;
    const struct ao_problem *prob;
    unsigned long long seed, shuffle_seed;
    long index, plans;
    const char *const *tried; /* the plans taken from this kernel before in the run */
    int ntried;
};

/* Each operation answers into its message (a plan's text, a kernel's
 * source, a summary) or says why it has none (p->error, k->error, s->none
 * with *why): 0 either way.  -1 + reason only when the stage must stop and
 * take the message again later (prompts that cannot be rendered, a stop
 * requested, redis gone). */
struct ao_model_ops {
    const char *kind;  /* "llm" or "builtin" */
    int needs_problem; /* its prompts show the task: the stage loads it first */
    int (*plan)(struct ao_agent *a, const struct ao_plan_ask *q, struct ao_plan_msg *p,
                struct ao_llm_usage *u, char *reason, size_t len);
    /* sample `sample` of the plan p */
    int (*kernel)(struct ao_agent *a, const struct ao_plan_msg *p, const struct ao_problem *prob,
                  int sample, struct ao_kernel_msg *k, struct ao_llm_usage *u, char *reason, size_t len);
    /* the failed kernel of a fix request p, and why it failed, back to the model */
    int (*fix)(struct ao_agent *a, const struct ao_plan_msg *p, const struct ao_problem *prob,
               struct ao_kernel_msg *k, struct ao_llm_usage *u, char *reason, size_t len);
    /* a slow->fast pair distilled; *move: the builtin's machine-readable move (or NULL) */
    int (*summarize)(struct ao_agent *a, const struct ao_pair_msg *p, struct ao_summary *s, cJSON **move,
                     char **why, struct ao_llm_usage *u, char *reason, size_t len);
};

extern const struct ao_model_ops ao_model_llm, ao_model_builtin;

#endif
