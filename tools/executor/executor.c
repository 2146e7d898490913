/* executor.c - accelopt-executor: a plan in, K kernels out, each from its
 * own model call, with the code taken out of the reply */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "builtin.h"
#include "exitcode.h"
#include "extract.h"
#include "log.h"
#include "msg.h"
#include "stage.h"
#include "util.h"

#define MAX_SAMPLES 16

static const struct ao_option options[] = {
    {"samples", 'k', AO_OPT_INT, "2", "K", "kernels per plan when the run names none"},
    AO_AGENT_STAGE_OPTIONS("executor", "planner", "summarizer"),
    {"plans", 0, AO_OPT_INT, NULL, "X", NULL}, /* another stage's key */
    {"memory-scope", 0, AO_OPT_STR, NULL, "X", NULL}, /* another stage's key */
    {"expn", 0, AO_OPT_INT, NULL, "X", NULL}, /* another stage's key */
    {"seed", 0, AO_OPT_INT, NULL, "X", NULL}, /* another stage's key */
    AO_STAGE_OPTIONS,
    AO_COMMON_OPTIONS,
};
#define NOPTS ((int)(sizeof options / sizeof options[0]))

static const char *const topics[] = {"accelopt.plans", NULL};

struct executor {
    struct ao_agent agent;
    long samples;
};

/* Sample k of a plan from the model: fills k->source or k->error; -1 with
 * io->err set when the stage must stop (prompts broken, a stop came). */
static int llm_kernel(struct executor *ex, const struct ao_plan_msg *p,
                      const struct ao_problem *prob, struct ao_kernel_msg *k,
                      struct ao_llm_usage *u, struct ao_io *io)
{
    char *sys = NULL, *user = NULL, *reply = NULL, reason[AO_ERRLEN];
    struct ao_prompt_var v[] = {
        {"task", p->env.task}, {"problem", prob->reference}, {"convention", prob->convention},
        {"candidate", p->source}, {"plan", p->text},
    };
    int rc = -1, call;

    if (ao_agent_prompts(&ex->agent, p->env.target, v, (int)(sizeof v / sizeof v[0]), &sys, &user,
                         reason, sizeof reason) < 0) {
        ao_io_fail(io, "%s", reason);
        goto out;
    }
    call = ao_agent_call(&ex->agent, p->env.run, p->config, sys, user, &reply, u, reason,
                         sizeof reason);
    if (call == -2) {
        ao_io_fail(io, "%s", reason);
        goto out;
    }
    if (call < 0 || !(k->source = ao_extract_code(reply, p->env.target, reason, sizeof reason)))
        k->error = strdup(reason);
    rc = 0;
out:
    free(sys);
    free(user);
    free(reply);
    return rc;
}

static int process(void *ctx, struct ao_io *io, const cJSON *msg, char *reason, size_t len)
{
    struct executor *ex = ctx;
    struct ao_plan_msg p;
    struct ao_problem prob = {0};
    const char *size;
    char id[400], slot[64];
    long samples;
    int rc = -1;

    if (ao_msg_decode(&ao_msg_plan, msg, &p, reason, len) < 0)
        return -1;
    samples = (long)ao_json_num(p.config, "samples", (double)ex->samples);
    size = p.size ? p.size : ex->agent.size;
    if (samples < 1 || samples > MAX_SAMPLES) {
        snprintf(reason, len, "samples must be 1 to %d, not %ld", MAX_SAMPLES, samples);
        goto out;
    }
    if (!p.error && (!p.text || !p.source)) {
        snprintf(reason, len, "a plan needs its text and the candidate's source, or an error");
        goto out;
    }
    if (!p.error && !ex->agent.conf.builtin &&
        ao_problem_load(p.env.task, p.task_sha256, size, &prob, reason, len) < 0)
        goto out;
    for (long s = 0; s < samples; s++) {
        struct ao_kernel_msg k;
        struct ao_llm_usage u = {0};
        cJSON *j = NULL;
        int erc = 0;
        long long rank = p.rank == AO_ABSENT_INT ? 0 : p.rank;

        ao_msg_init(&ao_msg_kernel, &k);
        snprintf(slot, sizeof slot, "%lld.%lld.%ld", rank, p.index, s);
        snprintf(id, sizeof id, "kernel:%s:%lld:%s", p.env.run, p.env.iter, slot);
        k.parent_latency_ns = p.parent_latency_ns;
        k.baseline_latency_ns = p.baseline_latency_ns;
        if (ao_env_set(&k.env, "kernel", id, p.env.run, p.env.task, p.env.target, p.env.iter) < 0 ||
            !(k.size = strdup(size)) || !(k.slot = strdup(slot)) || !(k.plan = strdup(p.env.id)) ||
            !(k.parent = strdup(p.candidate_sha256)) || !(k.model = strdup(ex->agent.conf.model)) ||
            (p.task_path && !(k.task_path = strdup(p.task_path))) ||
            (p.task_sha256 && !(k.task_sha256 = strdup(p.task_sha256))) ||
            (p.text && !(k.plan_text = strdup(p.text)))) {
            ao_msg_release(&ao_msg_kernel, &k);
            snprintf(reason, len, "out of memory");
            goto out;
        }
        if (p.error) {
            char e[AO_ERRLEN];
            snprintf(e, sizeof e, "no plan: %s", p.error);
            k.error = strdup(e);
        } else if (ex->agent.conf.builtin) {
            char e[AO_ERRLEN];
            if (!(k.source = ao_builtin_apply(p.source, p.text, (int)s, e, sizeof e)))
                k.error = strdup(e);
        } else if (llm_kernel(ex, &p, &prob, &k, &u, io) < 0) {
            erc = -1;
        }
        if (!erc && k.source) {
            char hex[65];
            ao_sha256_hex(k.source, strlen(k.source), hex);
            k.sha256 = strdup(hex);
        }
        if (!erc && ((!k.source && !k.error) || (k.source && !k.sha256))) {
            snprintf(reason, len, "out of memory");
            erc = -1;
        }
        if (!erc) {
            k.tokens = ao_usage_json(&u);
            k.cost_usd = u.cost_usd;
            ao_info("%s: %s", id, k.error ? k.error : "kernel written");
            if (!(j = ao_msg_encode(&ao_msg_kernel, &k))) {
                snprintf(reason, len, "out of memory encoding a kernel");
                erc = -1;
            } else {
                char topic[80];
                snprintf(topic, sizeof topic, "accelopt.kernels.%s", k.env.target);
                erc = ao_io_emit_json(io, topic, k.env.run, j);
            }
        }
        cJSON_Delete(j);
        ao_msg_release(&ao_msg_kernel, &k);
        if (erc < 0)
            goto out;
    }
    rc = 0;
out:
    ao_problem_release(&prob);
    ao_msg_release(&ao_msg_plan, &p);
    return rc;
}

int main(int argc, char **argv)
{
    struct ao_stage s;
    struct executor ex = {0};
    int code;

    if (!ao_stage_open(&s, "accelopt-executor",
                       "accelopt-executor [options] < plans.jsonl > kernels.jsonl", options,
                       NOPTS, topics, argc, argv, &code))
        return ao_stage_close(&s, code);
    ex.samples = ao_config_int(&s.cfg, "samples");
    if (ex.samples < 1 || ex.samples > MAX_SAMPLES) {
        ao_err("--samples must be 1 to %d", MAX_SAMPLES);
        return ao_stage_close(&s, AO_EXIT_USAGE);
    }
    return ao_agent_run(&s, &ex.agent, "executor", process, &ex, "plans", "kernels");
}
