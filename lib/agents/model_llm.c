/* model_llm.c - the model client behind the agents' interface (model.h):
 * each answer is a chat call with the role's prompts, the reply parsed */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents/agent.h"
#include "agents/extract.h"
#include "agents/model.h"
#include "core/alloc.h"
#include "core/rc.h"
#include "core/rng.h"
#include "core/util.h"

#define MAX_PLAN_TEXT 8000

/* The candidate's profile as `name: value` lines, shuffled per call as the
 * reference does (so no counter sits first by habit).  Names, values and
 * units are those of results, history and done (explained in the system
 * prompt): pct_of_peak is a fraction there and here. */
static char *profile_text(const struct ao_candidate_msg *c, unsigned long long seed, long index)
{
    char *lines[64], idseed[200];
    int n = 0;
    struct ao_buf b = {0};
    struct ao_rng rng;

    if (asprintf(&lines[n], "latency_ns: %.0f", c->latency_ns) >= 0)
        n++;
    if (isfinite(c->pct_of_peak) && asprintf(&lines[n], "pct_of_peak: %.3g", c->pct_of_peak) >= 0)
        n++;
    n += ao_profile_lines(c->profile, lines + n, 64 - n);
    snprintf(idseed, sizeof idseed, "%s:%ld", c->sha256, index);
    ao_seed_from_text(rng.s, seed, idseed);
    for (int i = n - 1; i > 0; i--) {
        int j = (int)(ao_rng_unit(&rng) * (i + 1));
        char *t = lines[i];
        lines[i] = lines[j];
        lines[j] = t;
    }
    for (int i = 0; i < n; i++) {
        ao_buf_printf(&b, "%s\n", lines[i]);
        free(lines[i]);
    }
    return b.data ? b.data : ao_strdup("");
}

/* One call with the role's templates `name` and vars v: 0 with *reply, or
 * with why it failed in *failed (the slot fails); -1 + reason when the
 * stage must stop. */
static int ask(struct ao_agent *a, const char *name, const char *target, const char *run, long long iter,
               const cJSON *config, const struct ao_prompt_var *v, int n, char **reply, char **failed,
               struct ao_llm_usage *u, char *reason, size_t len)
{
    char *sys = NULL, *user = NULL;
    int call;
    struct ao_prompt_var all[16];

    *reply = *failed = NULL;
    if (n >= (int)(sizeof all / sizeof all[0]))
        return ao_errf(reason, len, "too many prompt variables");
    memcpy(all, v, sizeof *v * (size_t)n);
    all[n].name = "machine"; /* every role's prompt may say where its kernels run */
    all[n].value = ao_agent_machine(a, target);
    v = all;
    n++;
    if (ao_agent_prompts_as(a, name, target, v, n, &sys, &user, reason, len) < 0)
        return -1; /* the operator's to fix, not a failed slot */
    call = ao_agent_call(a, run, iter, config, sys, user, reply, u, reason, len);
    free(sys);
    free(user);
    if (call == AO_RC_LATER)
        return -1;
    if (call < 0)
        *failed = ao_strdup(reason);
    return 0;
}

static int llm_plan(struct ao_agent *a, const struct ao_plan_ask *q, struct ao_plan_msg *p,
                    struct ao_llm_usage *u, char *reason, size_t len)
{
    const struct ao_candidate_msg *c = q->c;
    char *profile = profile_text(c, q->shuffle_seed, q->index), *reply = NULL;
    struct ao_prompt_var v[] = {
        {"task", c->env.task}, {"problem", q->prob->reference}, {"convention", q->prob->convention},
        {"candidate", c->source}, {"profile", profile ? profile : ""}, {"memory", q->memory_text},
        {"earlier", q->earlier},
    };
    int rc = ask(a, a->conf.role, c->env.target, c->env.run, c->env.iter, c->config, v, (int)(sizeof v / sizeof v[0]),
                 &reply, &p->error, u, reason, len);

    if (rc == 0 && reply) {
        size_t n = strlen(reply);
        while (n && (reply[n - 1] == '\n' || reply[n - 1] == ' '))
            reply[--n] = '\0';
        if (n > MAX_PLAN_TEXT)
            strcpy(reply + MAX_PLAN_TEXT - 4, "...");
        p->text = reply;
        reply = NULL;
    }
    free(reply);
    free(profile);
    return rc;
}

/* What the model said before its code (issue 55: an executor says what it
 * did beyond or against the plan): the text before the first fence, after
 * any reasoning it closed, trimmed, at most NOTES_MAX bytes cut on a
 * character's start.  Data, like the code; NULL when there is none. */
#define NOTES_MAX 500
static char *notes_of(const char *reply)
{
    const char *s = reply, *e, *t;
    size_t n;

    if (!reply)
        return NULL;
    for (t = reply; (t = strstr(t, "</think>")); t += 8)
        s = t + 8;
    for (e = s; *e; e += strcspn(e, "\n") + (e[strcspn(e, "\n")] != 0))
        if (strncmp(e + strspn(e, " \t"), "```", 3) == 0 || strncmp(e + strspn(e, " \t"), "~~~", 3) == 0)
            break;
    s += strspn(s, " \t\r\n");
    while (e > s && strchr(" \t\r\n", e[-1]))
        e--;
    if ((n = (size_t)(e - s)) == 0)
        return NULL;
    if (n > NOTES_MAX)
        for (n = NOTES_MAX; n > 0 && (s[n] & 0xc0) == 0x80; n--)
            ;
    return ao_strndup(s, n);
}

/* A kernel out of a reply: k->source (with the words before it in
 * k->notes), or why not in k->error. */
static int take_code(const struct ao_plan_msg *p, char *reply, char *failed, struct ao_kernel_msg *k)
{
    char why[AO_ERRLEN];

    if (failed) {
        k->error = failed;
    } else if (!(k->source = ao_extract_code(reply, p->env.target, why, sizeof why))) {
        k->error = ao_strdup(why);
    } else {
        k->notes = notes_of(reply);
    }
    free(reply);
    return 0;
}

static int llm_kernel(struct ao_agent *a, const struct ao_plan_msg *p, const struct ao_problem *prob,
                      int sample, struct ao_kernel_msg *k, struct ao_llm_usage *u, char *reason, size_t len)
{
    struct ao_prompt_var v[] = {
        {"task", p->env.task}, {"problem", prob->reference}, {"convention", prob->convention},
        {"candidate", p->source}, {"plan", p->text},
    };
    char *reply, *failed;

    (void)sample; /* each sample is a call of its own: the model's temperature varies them */
    if (ask(a, "executor", p->env.target, p->env.run, p->env.iter, p->config, v, (int)(sizeof v / sizeof v[0]),
            &reply, &failed, u, reason, len) < 0)
        return -1;
    return take_code(p, reply, failed, k);
}

/* The failed kernel back to the model with why it failed.  The diagnostics
 * were trimmed by the selector; the key is taken out here too, in case any
 * text echoed it. */
static int llm_fix(struct ao_agent *a, const struct ao_plan_msg *p, const struct ao_problem *prob,
                   struct ao_kernel_msg *k, struct ao_llm_usage *u, char *reason, size_t len)
{
    char *diag = ao_strdup(p->diagnostics ? p->diagnostics : ""), *reply, *failed;
    struct ao_prompt_var v[] = {
        {"task", p->env.task}, {"problem", prob->reference}, {"convention", prob->convention},
        {"plan", p->text}, {"kernel", p->failed_source}, {"diagnostics", diag ? diag : ""},
    };
    int rc;

    if (diag && a->llm)
        ao_llm_redact(a->llm, diag);
    rc = ask(a, "fixer", p->env.target, p->env.run, p->env.iter, p->config, v, (int)(sizeof v / sizeof v[0]),
             &reply, &failed, u, reason, len);
    free(diag);
    return rc < 0 ? -1 : take_code(p, reply, failed, k);
}

/* Distil with the model: s, or s->none with why in *why. */
static int llm_summarize(struct ao_agent *a, const struct ao_pair_msg *p, struct ao_summary *s, cJSON **move,
                         char **why, struct ao_llm_usage *u, char *reason, size_t len)
{
    char *reply = NULL, *failed = NULL, speed[160], bad[AO_ERRLEN];
    int regression = p->direction && strcmp(p->direction, "-") == 0, rc;
    struct ao_buf pair = {0}; /* the speedup, which way, and the step as it was planned */
    char *slow_prof = ao_profile_text(p->slow_profile), *fast_prof = ao_profile_text(p->fast_profile);

    *move = NULL;
    snprintf(speed, sizeof speed, "%.3fx %s", p->speedup, regression ? "slower" : "faster");
    if (isfinite(p->speedup_low) && isfinite(p->speedup_high)) /* head to head (issue 47) */
        snprintf(speed + strlen(speed), sizeof speed - strlen(speed),
                 " head to head (95%% interval %.3f-%.3f, which leaves 1 out: a real difference, not noise)",
                 p->speedup_low, p->speedup_high);
    else if (isfinite(p->speedup_spread)) /* the gain and its uncertainty, in one unit (issue 47) */
        snprintf(speed + strlen(speed), sizeof speed - strlen(speed),
                 " (give or take %.0f%%: a gain of %.2f against an uncertainty of %.2f)",
                 100 * p->speedup_spread, p->speedup - 1, p->speedup_spread);
    if (regression)
        ao_buf_printf(&pair, "This pair is a REGRESSION: an optimization step rewrote the fast "
                      "kernel into the slow one, which is %s. Say what the step did and why it "
                      "hurt, so that it is avoided; begin the title with \"Avoid:\".", speed);
    else
        ao_buf_printf(&pair, "This pair is a WIN: an optimization step rewrote the slow kernel "
                      "into the fast one, which is %s. Say what the step did and why it helped, so "
                      "that it is repeated.", speed);
    if (p->plan && p->plan[0])
        ao_buf_printf(&pair, "\n\nThe step, as it was planned:\n%s", p->plan);
    /* which kernel the step produced: a regression's child is the slow one,
     * and its lesson is what not to do */
    struct ao_prompt_var v[] = {
        {"task", p->env.task}, {"slow", p->slow_source}, {"fast", p->fast_source},
        {"pair", pair.data ? pair.data : ""},
        {"slow_role", regression ? "the child: after the step" : "the parent: before the step"},
        {"fast_role", regression ? "the parent: before the step" : "the child: after the step"},
        {"slow_profile", slow_prof ? slow_prof : ""}, {"fast_profile", fast_prof ? fast_prof : ""},
    };
    rc = ask(a, a->conf.role, p->env.target, p->env.run, p->env.iter, p->config, v, (int)(sizeof v / sizeof v[0]),
             &reply, &failed, u, reason, len);
    ao_buf_release(&pair);
    if (rc == 0) {
        if (failed) {
            s->none = 1;
            *why = failed;
        } else if (ao_extract_summary(reply, s, bad, sizeof bad) < 0) {
            s->none = 1;
            *why = ao_strdup(bad);
        } else if (s->inconclusive) {
            *why = ao_strdup("the model found the pair inconclusive (the difference may be noise)");
        } else if (s->none) {
            *why = ao_strdup("the model found no optimization");
        }
    }
    free(reply);
    free(slow_prof);
    free(fast_prof);
    return rc;
}

const struct ao_model_ops ao_model_llm = {
    .kind = "llm",
    .needs_problem = 1,
    .plan = llm_plan,
    .kernel = llm_kernel,
    .fix = llm_fix,
    .summarize = llm_summarize,
};
