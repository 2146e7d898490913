/* model_builtin.c - the builtin offline model behind the agents' interface
 * (model.h): plans are knob moves ranked by the memory, kernels the moves
 * carried out, summaries the move between two kernels.  It needs no task
 * text, no network and no key, and fixes nothing. */
#include <string.h>

#include "agents/agent.h"
#include "agents/builtin.h"
#include "agents/model.h"
#include "core/alloc.h"
#include "core/util.h"
#include "wire/verdict.h"

#define MAX_MOVES 64

/* A run that names another model than the builtin for this role: the
 * builtin does not stand in for it (NULL: none named, or "builtin"). */
static char *refused(const struct ao_agent *a, const cJSON *config)
{
    char model[160], why[AO_ERRLEN];
    return ao_agent_model_for(a, config, model, sizeof model, why, sizeof why) < 0 ? ao_strdup(why) : NULL;
}

static int builtin_plan(struct ao_agent *a, const struct ao_plan_ask *q, struct ao_plan_msg *p,
                        struct ao_llm_usage *u, char *reason, size_t len)
{
    struct ao_move moves[MAX_MOVES];
    int n;

    (void)u;
    if ((p->error = refused(a, q->c->config)))
        return 0;
    n = ao_builtin_plan(q->c->source, q->c->env.task, q->memory, q->seed, q->tried, q->ntried, moves,
                        (int)(q->plans < MAX_MOVES ? q->plans : MAX_MOVES));
    if (q->index < n) {
        p->text = ao_builtin_plan_text(q->c->source, &moves[q->index], q->c->env.task, q->memory);
        return p->text ? 0 : ao_errf(reason, len, "the builtin planner wrote no plan for its move");
    }
    /* every move taken, by this wave or the run before it; or none to take */
    p->error = ao_strdup(n || q->ntried ? AO_SEARCH_NO_MORE_MOVES : AO_SEARCH_NO_KNOBS);
    p->exhausted = 1; /* what decides; the words are for people */
    return 0;
}

static int builtin_kernel(struct ao_agent *a, const struct ao_plan_msg *p, const struct ao_problem *prob,
                          int sample, struct ao_kernel_msg *k, struct ao_llm_usage *u, char *reason, size_t len)
{
    char why[AO_ERRLEN];

    (void)prob, (void)u;
    if ((k->error = refused(a, p->config)))
        return 0;
    (void)reason, (void)len;
    if (!(k->source = ao_builtin_apply(p->source, p->text, sample, why, sizeof why)))
        k->error = ao_strdup(why);
    return 0;
}

static int builtin_fix(struct ao_agent *a, const struct ao_plan_msg *p, const struct ao_problem *prob,
                       struct ao_kernel_msg *k, struct ao_llm_usage *u, char *reason, size_t len)
{
    (void)a, (void)p, (void)prob, (void)u, (void)reason, (void)len;
    k->error = ao_strdup("the builtin model does not fix kernels");
    return 0;
}

static int builtin_summarize(struct ao_agent *a, const struct ao_pair_msg *p, struct ao_summary *s, cJSON **move,
                             char **why, struct ao_llm_usage *u, char *reason, size_t len)
{
    char bad[AO_ERRLEN];

    (void)u, (void)reason, (void)len;
    if ((*why = refused(a, p->config)))
        return 0;
    if (!(*move = ao_builtin_summarize(p->slow_source, p->fast_source, p->env.task, p->speedup, p->direction, s,
                                       bad, sizeof bad)))
        *why = ao_strdup(bad);
    return 0;
}

const struct ao_model_ops ao_model_builtin = {
    .kind = "builtin",
    .needs_problem = 0,
    .plan = builtin_plan,
    .kernel = builtin_kernel,
    .fix = builtin_fix,
    .summarize = builtin_summarize,
};
