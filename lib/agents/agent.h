/* agent.h - what the planner, executor and summarizer share: their model
 * (an LLM or the builtin one), Redis, the budget, prompts and the problem */
#ifndef AO_AGENT_H
#define AO_AGENT_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "agents/budget.h"
#include "agents/llm.h"
#include "agents/model.h"
#include "agents/prompt.h"
#include "core/config.h"
#include "core/redis.h"
#include "wire/stage.h"

#define AO_AGENT_OPTIONS                                                                     \
    {"redis", 0, AO_OPT_STR, NULL, "URL", "redis for the memory and run budgets (redis://host:port)"}, \
    {"redis-prefix", 0, AO_OPT_STR, "accelopt:", "PREFIX", "prefix of every redis key"},     \
    {"prompts", 0, AO_OPT_STR, NULL, "DIR", "prompt templates (default: the installed prompts/)"}, \
    {"size", 0, AO_OPT_STR, "tiny", "CLASS", "size class when a message names none"},         \
    {"calls", 'j', AO_OPT_INT, "16", "N", "messages in hand at once, each with its model call in flight, "   \
     "in this one process (the input waits at N)"},                                           \
    {"machine", 0, AO_OPT_STR, NULL, "FILE", "the machine the kernels run on, described for the prompts "  \
     "(default: this one's CPU, caches and calibrated peaks; give a file where the profilers run elsewhere)"}

/* The options of the agent stage of role R (O1, O2: the other two roles,
 * whose keys a shared config file may hold). */
#define AO_AGENT_STAGE_OPTIONS(R, O1, O2)                                                   \
    AO_AGENT_OPTIONS, AO_LLM_OPTIONS, AO_LLM_ROLE_OPTIONS(R), AO_LLM_OTHER_ROLE_OPTIONS(O1), \
        AO_LLM_OTHER_ROLE_OPTIONS(O2)

struct ao_agent {
    struct ao_llm_conf conf;
    const struct ao_model_ops *model; /* what answers: the model client or the builtin */
    struct ao_llm *llm;            /* the model client's connection (NULL for the builtin) */
    struct ao_gate *gate;          /* the server's calls in flight (NULL: no redis, no count) */
    struct ao_redis *redis;        /* NULL: no memory, budgets in this process */
    struct ao_budget_book *book;
    const char *prompts, *size;    /* borrowed from the config */
    const char *machine_path;      /* --machine, or NULL: this machine */
    char *machine, machine_target[16]; /* the prompts' description, for that target */
    const char *role;              /* planner, executor, summarizer: for the usage counters */
    struct ao_llm_usage total;     /* this process's calls, for the log */
};

/* Set up a role's agent from a stage's config.  Returns 0, or -1 + err with
 * *usage set when the config was at fault (exit 2) rather than the world. */
int ao_agent_init(struct ao_agent *a, const struct ao_config *c, const char *role, int *usage,
                  char *err, size_t errlen);
/* Logs what this process's calls cost, then frees. */
void ao_agent_release(struct ao_agent *a);

/* The rest of an agent stage's main: set up the role's agent a (part of
 * ctx), run the stage's loop, release both; returns the exit code. */
int ao_agent_run(struct ao_stage *s, struct ao_agent *a, const char *role, ao_process_fn process,
                 void *ctx, const char *what_in, const char *what_out);

/* Render the role's system and user templates for a target.  Every value
 * must appear in one of them.  0 with both malloc'd, or -1 + err. */
int ao_agent_prompts(const struct ao_agent *a, const char *target, const struct ao_prompt_var *v,
                     int n, char **system, char **user, char *err, size_t errlen);
/* The same with the templates of another name (the executor's "fixer"). */
int ao_agent_prompts_as(const struct ao_agent *a, const char *name, const char *target,
                        const struct ao_prompt_var *v, int n, char **system, char **user,
                        char *err, size_t errlen);

/* The model a message's run names for a's role, into model ("" when it
 * names none: the role's own).  0, or -1 + reason when the run names one
 * this stage does not serve (its --llm-models), or its config is bad. */
int ao_agent_model_for(const struct ao_agent *a, const cJSON *config, char *model, size_t mlen,
                       char *reason, size_t len);

/* One model call, refused when the run's budget is spent; the usage is
 * charged to the run and added to u.  0 with *reply; -1 + reason when the
 * call failed (the slot fails); AO_RC_LATER + reason when the stage should stop
 * instead (a stop was requested, or redis failed), so that the message is
 * handled again later rather than failed. */
int ao_agent_call(struct ao_agent *a, const char *run, long long iter, const cJSON *config,
                  const char *system,
                  const char *user, char **reply, struct ao_llm_usage *u, char *reason,
                  size_t len);

/* {"prompt": N, "completion": N} (caller deletes). */
cJSON *ao_usage_json(const struct ao_llm_usage *u);

/* The machine the target's kernels run on, in words for the prompts
 * (agents/machine.h), made once per target; "" when it cannot be said. */
const char *ao_agent_machine(struct ao_agent *a, const char *target);

/* What a prompt shows of the task. */
struct ao_problem {
    char *reference;  /* the reference implementation's source */
    char *convention; /* the prototype, the tensors, the sizes and the rules */
};

/* Load the problem of a task, found by name in this machine's task roots
 * (and the same task as the sender's, given its hash; task_sha256 may be
 * NULL), at a size class.  0 or -1 + err. */
int ao_problem_load(const char *target, const char *task, const char *task_sha256,
                    const char *size, struct ao_problem *p, char *err, size_t errlen);
void ao_problem_release(struct ao_problem *p);

/* A profile object's numbers, strings and booleans as `name: value` lines
 * in lines[0..max) (each malloc'd; whole numbers printed whole); how many. */
int ao_profile_lines(const cJSON *profile, char **lines, int max);
/* The same lines joined, each ending in a newline (caller frees). */
char *ao_profile_text(const cJSON *profile);

/* The memory items as the planner's prompt shows them (caller frees). */
char *ao_memory_text(const cJSON *items);

#endif
