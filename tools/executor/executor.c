/* executor.c - accelopt-executor: a plan in, K kernels out, each from its
 * own model call, with the code taken out of the reply; or a fix request
 * in (a failed kernel and why), its slot's next attempt out.  A plan that
 * repeats an earlier one, or a kernel the same as its parent or an earlier
 * sample, goes out without source as a duplicate: never profiled. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "agents/agent.h"
#include "core/alloc.h"
#include "core/exitcode.h"
#include "core/log.h"
#include "core/tokens.h"
#include "core/util.h"
#include "wire/msg.h"
#include "wire/names.h"
#include "wire/runconfig.h"
#include "wire/stage.h"

static const struct ao_option options[] = {
    {"samples", 'k', AO_OPT_INT, "2", "K", "kernels per plan when the run names none"},
    AO_AGENT_STAGE_OPTIONS("executor", "planner", "summarizer"),
    {"plans", 0, AO_OPT_INT, NULL, "X", NULL}, /* another stage's key */
    {"plan-mode", 0, AO_OPT_STR, NULL, "X", NULL}, /* another stage's key */
    {"memory-scope", 0, AO_OPT_STR, NULL, "X", NULL}, /* another stage's key */
    {"expn", 0, AO_OPT_INT, NULL, "X", NULL}, /* another stage's key */
    {"seed", 0, AO_OPT_INT, NULL, "X", NULL}, /* another stage's key */
    AO_STAGE_OPTIONS,
    AO_COMMON_OPTIONS,
};
#define NOPTS ((int)(sizeof options / sizeof options[0]))

static const char *const topics[] = {AO_TOPIC_PLANS, NULL};

struct executor {
    struct ao_agent agent;
    long samples;
};

/* A kernel the same as one already in hand goes no further: not the
 * parent unchanged, not an earlier sample of this plan, comments and
 * spacing apart (hashes[] are token hashes, tokens.h).  Sets
 * k->duplicate_of and k->error and drops the source; 0, or -1 where the
 * id prefix does not fit. */
static int drop_repeat(const struct ao_plan_msg *p, struct ao_kernel_msg *k,
                       char (*hashes)[65], long s, const char *kernel_prefix)
{
    char what[AO_ID_BUF], why[AO_ID_BUF + 100], parent[65] = "";

    what[0] = '\0';
    if (p->source)
        ao_token_hash(p->source, parent);
    if ((p->candidate_sha256 && strcmp(k->sha256, p->candidate_sha256) == 0) ||
        strcmp(hashes[s], parent) == 0) {
        ao_errf(what, sizeof what, "%s", p->candidate_id); /* a message's id: under AO_MSG_ID_MAX */
        ao_errf(why, sizeof why, "the rewrite is its parent unchanged (%s)", what);
    } else {
        for (long j = 0; j < s; j++)
            if (strcmp(hashes[j], hashes[s]) == 0) {
                if (ao_name(what, sizeof what, "%s.%ld", kernel_prefix, j) < 0)
                    return -1; /* the prefix was built to fit */
                ao_errf(why, sizeof why, "the same kernel as sample %ld of this plan (%s)", j, what);
                break;
            }
    }
    if (!what[0])
        return 0;
    free(k->source);
    k->source = NULL;
    k->duplicate_of = ao_strdup(what);
    k->error = ao_strdup(why);
    return 0;
}

/* A kernel's message as it was sent, kept in the run's store: a plan that
 * comes again (its offset not committed when a broker or a stage went
 * down) is answered from here, not asked of the model twice.  Best effort
 * both ways: without redis, or on an error, the model is asked. */
#define WRITTEN_TTL_S "2592000" /* a run's kernels go with it after a month at the latest */
static void keep_written(struct executor *ex, const char *run, const char *id, const cJSON *j)
{
    char key[AO_REDIS_KEY_MAX], e[AO_ERRLEN], *v;
    const char *set[4] = {"HSET", key, id, NULL}, *ttl[3] = {"EXPIRE", key, WRITTEN_TTL_S};
    struct redisReply *rep;

    if (!ex->agent.redis || !ao_redis_key(ex->agent.redis, key, sizeof key, AO_KEY_WRITTEN, run))
        return;
    set[3] = v = cJSON_PrintUnformatted(j);
    if (!(rep = ao_redis_argv(ex->agent.redis, 4, set, NULL, e, sizeof e)))
        ao_warn("%s: not kept for a plan that comes again: %s", id, e);
    else
        freeReplyObject(rep);
    if ((rep = ao_redis_argv(ex->agent.redis, 3, ttl, NULL, e, sizeof e)))
        freeReplyObject(rep);
    cJSON_free(v);
}

/* The kernel kept for id, written from parent, or NULL (none, another
 * parent's, or no store). */
static cJSON *written_before(struct executor *ex, const char *run, const char *id, const char *parent)
{
    char key[AO_REDIS_KEY_MAX], e[AO_ERRLEN];
    const char *get[3] = {"HGET", key, id};
    struct redisReply *rep;
    cJSON *j = NULL;

    if (!ex->agent.redis || !ao_redis_key(ex->agent.redis, key, sizeof key, AO_KEY_WRITTEN, run) ||
        !(rep = ao_redis_argv(ex->agent.redis, 3, get, NULL, e, sizeof e)))
        return NULL;
    if (rep->type == REDIS_REPLY_STRING)
        j = cJSON_Parse(rep->str);
    freeReplyObject(rep);
    if (j && (strcmp(ao_json_str(j, "id", ""), id) != 0 || /* not what it says it is */
              strcmp(ao_json_str(j, "parent", ""), parent ? parent : "") != 0)) {
        cJSON_Delete(j);
        j = NULL;
    }
    return j;
}

static int emit_kernel(struct ao_io *io, const char *target, const char *run, const cJSON *j, char *reason,
                       size_t len)
{
    char topic[AO_TOPIC_MAX];

    if (ao_name(topic, sizeof topic, AO_TOPIC_KERNELS, target) < 0) {
        snprintf(reason, len, "no topic for target '%.40s'", target);
        return -1;
    }
    return ao_io_emit_json(io, topic, run, j);
}

/* One plan being written: its samples, one kernel each (a fix request:
 * one attempt at its sample).  process() goes through it in steps: the
 * start, each sample (written before, or filled, written and sent), the
 * end. */
struct job {
    struct ao_io *io;
    struct ao_plan_msg p;
    struct ao_problem prob;
    const char *size;
    long samples;
    int fix, against_parent;
    long long rank;
    char prefix[AO_ID_BUF], hashes[AO_MAX_SAMPLES][65];
    char *reason;
    size_t len;
};

/* The plan decoded and checked, the problem loaded.  0, or -1 + reason. */
static int job_start(struct executor *ex, struct job *J, const cJSON *msg)
{
    struct ao_plan_msg *p = &J->p;
    char slot[64];

    if (ao_msg_decode(&ao_msg_plan, msg, p, J->reason, J->len) < 0)
        return -1;
    J->rank = p->rank == AO_ABSENT_INT ? 0 : p->rank;
    J->fix = p->attempt != AO_ABSENT_INT && p->attempt > 1;
    {
        struct ao_run_config cfg; /* checked at decode: it holds */
        if (ao_run_config_decode(p->config, &cfg, J->reason, J->len) < 0)
            return -1;
        J->samples = J->fix ? 1 : cfg.samples != AO_ABSENT_INT ? (long)cfg.samples : ex->samples;
        /* each kernel is measured head to head with its parent (issue 66),
         * unless the run decides on lone measurements (--no-compare) */
        J->against_parent = cfg.compare == AO_ABSENT_INT || cfg.compare != 0;
        ao_run_config_release(&cfg);
    }
    J->size = p->size ? p->size : ex->agent.size;
    if (J->samples < 1 || J->samples > AO_MAX_SAMPLES)
        return snprintf(J->reason, J->len, "samples must be 1 to %d, not %ld", AO_MAX_SAMPLES, J->samples), -1;
    if (!p->error && (!p->text || !p->source))
        return snprintf(J->reason, J->len, "a plan needs its text and the candidate's source, or an error"), -1;
    if (J->fix && (p->sample == AO_ABSENT_INT || p->sample < 0 || p->sample >= AO_MAX_SAMPLES ||
                   p->attempt > 64 || !p->failed_source || p->error || p->duplicate_of))
        return snprintf(J->reason, J->len, "a fix request needs its sample (0 to %d), the failed kernel and "
                        "the plan's text", AO_MAX_SAMPLES - 1), -1;
    if (!p->error && !p->duplicate_of && ex->agent.model->needs_problem &&
        ao_problem_load(p->env.target, p->env.task, p->task_sha256, J->size, &J->prob, J->reason, J->len) < 0)
        return -1;
    if (ao_name(slot, sizeof slot, "%lld.%lld", J->rank, p->index) < 0 ||
        ao_name(J->prefix, sizeof J->prefix, AO_ID_KERNEL, p->env.run, p->env.iter, slot) < 0)
        return snprintf(J->reason, J->len, "rank %lld or index %lld is out of range", J->rank, p->index), -1;
    return 0;
}

/* Kernel message k for slot and id, all but its source: a plan that
 * failed or repeats another gives an error in its place. */
static void kernel_fill(struct executor *ex, struct job *J, struct ao_kernel_msg *k, const char *id,
                        const char *slot)
{
    const struct ao_plan_msg *p = &J->p;
    char e[AO_ERRLEN];

    ao_msg_init(&ao_msg_kernel, k);
    k->parent_latency_ns = p->parent_latency_ns;
    k->baseline_latency_ns = p->baseline_latency_ns;
    k->attempt = J->fix ? p->attempt : 1;
    k->size = ao_strdup(J->size);
    k->slot = ao_strdup(slot);
    k->plan = ao_strdup(p->env.id);
    k->parent = ao_strdup(p->candidate_sha256);
    k->model = ao_strdup(ex->agent.conf.model);
    if (p->task_path)
        k->task_path = ao_strdup(p->task_path);
    if (p->task_sha256)
        k->task_sha256 = ao_strdup(p->task_sha256);
    if (p->text)
        k->plan_text = ao_strdup(p->text);
    ao_env_set(&k->env, "kernel", id, p->env.run, p->env.task, p->env.target, p->env.iter);
    if (p->memory_seen)
        k->memory_seen = cJSON_Duplicate(p->memory_seen, 1);
    if (p->error) {
        snprintf(e, sizeof e, "no plan: %s", p->error);
        k->error = ao_strdup(e);
        k->exhausted = p->exhausted > 0 ? 1 : -1; /* the search out of moves: not a failure */
        return;
    }
    if (p->duplicate_of) {
        snprintf(e, sizeof e, "the plan repeats %s: not sent to the model", p->duplicate_of);
        k->error = ao_strdup(e);
        k->duplicate_of = ao_strdup(p->duplicate_of);
        return;
    }
}

/* Sample s's kernel asked of the model (a fix request: the failed one
 * mended), hashed, a repeat of an earlier sample dropped, the parent's
 * source added to be measured against.  0, or -1 (reason set, or the
 * stage failed). */
static int kernel_write(struct executor *ex, struct job *J, struct ao_kernel_msg *k, long s,
                        struct ao_llm_usage *u)
{
    const struct ao_model_ops *m = ex->agent.model;
    char why[AO_ERRLEN], sha[65];

    if (!k->error && (J->fix ? m->fix(&ex->agent, &J->p, &J->prob, k, u, why, sizeof why)
                             : m->kernel(&ex->agent, &J->p, &J->prob, (int)s, k, u, why, sizeof why)) < 0)
        return ao_io_fail(J->io, "%s", why); /* the stage stops; the plan comes again */
    if (k->source) {
        ao_sha256_hex(k->source, strlen(k->source), sha);
        ao_token_hash(k->source, J->hashes[s]); /* comments and spacing apart */
        k->sha256 = ao_strdup(sha);
        if (!J->fix && drop_repeat(&J->p, k, J->hashes, s, J->prefix) < 0)
            return snprintf(J->reason, J->len, "the kernel's id prefix is too long"), -1;
    }
    if (!k->source && !k->error)
        return snprintf(J->reason, J->len, "the model gave neither a kernel nor why not"), -1;
    if (k->source && J->against_parent)
        k->baseline_source = ao_strdup(J->p.source);
    return 0;
}

/* Sample s: sent again as it was written before (this plan came again),
 * or written now, kept and sent.  0, or -1. */
static int sample_one(struct executor *ex, struct job *J, long s)
{
    const struct ao_plan_msg *p = &J->p;
    struct ao_kernel_msg k;
    struct ao_llm_usage u = {0};
    char id[AO_ID_BUF], slot[64];
    long sample = J->fix ? (long)p->sample : s;
    cJSON *j;
    int rc;

    J->hashes[s][0] = '\0';
    /* each fix attempt is a kernel of its own; the slot is the same */
    if (ao_name(slot, sizeof slot, "%lld.%lld.%ld", J->rank, p->index, sample) < 0 ||
        (J->fix ? ao_name(id, sizeof id, AO_ID_KERNEL_FIX, p->env.run, p->env.iter, slot, p->attempt)
                : ao_name(id, sizeof id, AO_ID_KERNEL, p->env.run, p->env.iter, slot)) < 0)
        return snprintf(J->reason, J->len, "the kernel's slot or id is out of range"), -1;
    if ((j = written_before(ex, p->env.run, id, p->candidate_sha256))) {
        const char *src = ao_json_str(j, "source", NULL);
        if (src)
            ao_token_hash(src, J->hashes[s]);
        ao_info("%s: written before; sent again as it was, the model not asked twice", id);
        rc = emit_kernel(J->io, p->env.target, p->env.run, j, J->reason, J->len);
        cJSON_Delete(j);
        return rc;
    }
    kernel_fill(ex, J, &k, id, slot);
    rc = kernel_write(ex, J, &k, s, &u);
    if (rc == 0) {
        k.tokens = ao_usage_json(&u);
        k.cost_usd = u.cost_usd;
        ao_info("%s: %s", id, k.error ? k.error : "kernel written");
        {
            j = ao_msg_encode(&ao_msg_kernel, &k);
            keep_written(ex, k.env.run, id, j);
            rc = emit_kernel(J->io, k.env.target, k.env.run, j, J->reason, J->len);
            cJSON_Delete(j);
        }
    }
    ao_msg_release(&ao_msg_kernel, &k);
    return rc;
}

static int process(void *ctx, struct ao_io *io, const cJSON *msg, char *reason, size_t len)
{
    struct executor *ex = ctx;
    struct job J = {.io = io, .reason = reason, .len = len};
    int rc = job_start(ex, &J, msg);

    for (long s = 0; rc == 0 && s < J.samples; s++)
        rc = sample_one(ex, &J, s);
    ao_problem_release(&J.prob);
    ao_msg_release(&ao_msg_plan, &J.p);
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
    if (ex.samples < 1 || ex.samples > AO_MAX_SAMPLES) {
        ao_err("--samples must be 1 to %d", AO_MAX_SAMPLES);
        return ao_stage_close(&s, AO_EXIT_USAGE);
    }
    return ao_agent_run(&s, &ex.agent, "executor", process, &ex, "plans", "kernels");
}
