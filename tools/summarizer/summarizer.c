/* summarizer.c - accelopt-summarizer: a slow->fast pair in, an experience
 * out: distilled by the model, written to the memory together with the
 * pair's idempotency marker in one atomic step, then acked */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents/agent.h"
#include "agents/extract.h"
#include "core/alloc.h"
#include "core/exitcode.h"
#include "core/log.h"
#include "core/util.h"
#include "state/memory.h"
#include "wire/msg.h"
#include "wire/names.h"
#include "wire/runconfig.h"
#include "wire/stage.h"

static const struct ao_option options[] = {
    {"memory-scope", 0, AO_OPT_STR, "target", "SCOPE", "memory to write: target, task, none or a name"},
    {"expn", 0, AO_OPT_INT, "16", "N", "memory capacity (items) when the run names none"},
    AO_AGENT_STAGE_OPTIONS("summarizer", "planner", "executor"),
    {"plans", 0, AO_OPT_INT, NULL, "X", NULL}, /* another stage's key */
    {"plan-mode", 0, AO_OPT_STR, NULL, "X", NULL}, /* another stage's key */
    {"samples", 0, AO_OPT_INT, NULL, "X", NULL}, /* another stage's key */
    {"seed", 0, AO_OPT_INT, NULL, "X", NULL}, /* another stage's key */
    AO_STAGE_OPTIONS,
    AO_COMMON_OPTIONS,
};
#define NOPTS ((int)(sizeof options / sizeof options[0]))

static const char *const topics[] = {AO_TOPIC_PAIRS, NULL};
#define PAIRSUM_TTL_S (30L * 86400) /* as long as a pair's marker (state/memory.c) */

struct summarizer {
    struct ao_agent agent;
    long expn;
    const char *scope;
    int warned;
};

static int emit_json(struct ao_io *io, const char *run, cJSON *ack, char *reason, size_t len)
{
    if (ao_io_emit_json(io, AO_TOPIC_EXPERIENCES, run, ack) < 0) {
        snprintf(reason, len, "%s", io->err);
        return -1;
    }
    return 0;
}

/* Re-send the ack kept in a pair's marker (the pair was handled before). */
static int replay(struct ao_io *io, const char *run, const char *kept, char *reason, size_t len)
{
    cJSON *ack = cJSON_Parse(kept);
    int rc;

    if (!cJSON_IsObject(ack)) {
        cJSON_Delete(ack);
        return ao_io_fail(io, "the marker of a pair of run '%s' is not JSON", run);
    }
    rc = emit_json(io, run, ack, reason, len);
    cJSON_Delete(ack);
    return rc;
}

/* The memory item (what the planner will read) for a distilled pair. */
static cJSON *memory_item(const struct ao_experience_msg *e, const struct ao_pair_msg *p)
{
    cJSON *it = ao_msg_encode(&ao_msg_experience, e);
    static const char *const drop[] = {"type", "v", "stored", "reason", "tokens",
                                       "cost_usd", "item_id", "id", NULL};

    for (int i = 0; drop[i]; i++)
        cJSON_DeleteItemFromObjectCaseSensitive(it, drop[i]);
    cJSON_AddStringToObject(it, "id", e->item_id);
    if (p->plan)
        cJSON_AddStringToObject(it, "plan", p->plan);
    if (p->shape)
        cJSON_AddStringToObject(it, "shape", p->shape);
    ao_memory_item_clip(it); /* what export writes, import must take */
    return it;
}

/* Does the memory at key still hold the item? */
static int memory_holds(struct summarizer *sm, const char *key, const char *item_id)
{
    char e[AO_ERRLEN];
    cJSON *items = ao_memory_all(sm->agent.redis, key, e, sizeof e);
    const cJSON *it;
    int found = 0;

    cJSON_ArrayForEach(it, items) {
        found |= strcmp(ao_json_str(it, "id", ""), item_id) == 0;
    }
    cJSON_Delete(items);
    return found;
}

/* One pair being summarized.  process() goes through it in steps: the
 * start, an ack sent again for a pair seen before, the same two kernels
 * met before (no model call), the summary, the experience filled, kept in
 * the memory, and sent; `done` once a step has sent the answer itself. */
struct job {
    struct ao_io *io;
    struct ao_pair_msg p;
    struct ao_experience_msg e;
    struct ao_run_config cfg;
    struct ao_summary s;
    struct ao_llm_usage u;
    cJSON *move, *ack, *item;
    char *kept, *ack_text, *item_text;
    char key[AO_KEY_MAX], sumkey[AO_KEY_MAX], item_id[24];
    int has_key, done;
    char *reason;
    size_t len;
};

static int job_start(struct summarizer *sm, struct job *J, const cJSON *msg)
{
    ao_msg_init(&ao_msg_experience, &J->e);
    if (ao_msg_decode(&ao_msg_pair, msg, &J->p, J->reason, J->len) < 0 ||
        ao_run_config_decode(J->p.config, &J->cfg, J->reason, J->len) < 0) /* checked at decode: it holds */
        return -1;
    J->has_key = ao_memory_key(J->cfg.memory_scope ? J->cfg.memory_scope : sm->scope, J->p.env.target,
                               J->p.env.task, J->key, sizeof J->key, J->reason, J->len);
    return J->has_key < 0 ? -1 : 0;
}

static void job_end(struct job *J)
{
    free(J->kept);
    free(J->ack_text);
    cJSON_free(J->item_text);
    cJSON_Delete(J->item);
    cJSON_Delete(J->ack);
    cJSON_Delete(J->move);
    ao_summary_release(&J->s);
    ao_msg_release(&ao_msg_experience, &J->e);
    ao_run_config_release(&J->cfg);
    ao_msg_release(&ao_msg_pair, &J->p);
}

/* A pair seen before is acked again, from its marker, at no cost. */
static int acked_before(struct summarizer *sm, struct job *J)
{
    int seen;

    if (!sm->agent.redis)
        return 0;
    if ((seen = ao_memory_marker(sm->agent.redis, J->p.env.id, &J->kept, J->reason, J->len)) < 0)
        return ao_io_fail(J->io, "cannot read a pair marker: %s", J->reason);
    if (!seen)
        return 0;
    ao_info("%s: summarized before; acked again", J->p.env.id);
    J->done = 1;
    return replay(J->io, J->p.env.run, J->kept, J->reason, J->len);
}

/* The same two kernels, paired again (another slot, iteration or run):
 * one lesson, not one per pair; acked without a model call (J->s.none). */
static int paired_before(struct summarizer *sm, struct job *J)
{
    const struct ao_pair_msg *p = &J->p;
    char *before = NULL, why[160];
    int got;

    if (!sm->agent.redis || !J->has_key ||
        ao_name(J->sumkey, sizeof J->sumkey, AO_KEY_PAIRSUM, J->key, p->slow_sha256, p->fast_sha256) < 0) {
        J->sumkey[0] = '\0';
        return 0;
    }
    if ((got = ao_redis_get(sm->agent.redis, J->sumkey, &before, J->reason, J->len)) < 0)
        return ao_io_fail(J->io, "cannot read a pair's summary key: %s", J->reason);
    if (got > 0 && !memory_holds(sm, J->key, before)) /* pruned or cleared since: learn it again */
        got = 0;
    if (got > 0) {
        J->s.none = 1;
        snprintf(why, sizeof why, "the same slow and fast kernels were summarized before, as %.40s: "
                 "not summarized twice", before);
        J->e.reason = ao_strdup(why);
        ao_info("%s: the same pair of kernels as an earlier one; acked without a model call", p->env.id);
    }
    free(before);
    return 0;
}

/* The experience (the ack) from the pair and its summary, and the memory
 * item it becomes where it is stored.  -1: reason set. */
static int experience_fill(struct summarizer *sm, struct job *J)
{
    const struct ao_pair_msg *p = &J->p;
    struct ao_experience_msg *e = &J->e;
    const struct ao_summary *s = &J->s;
    char id[AO_ID_BUF], hex[65], now[32];

    if (ao_name(id, sizeof id, AO_ID_EXPERIENCE, p->env.id) < 0)
        return snprintf(J->reason, J->len, "the pair's id is too long for an experience's"), -1;
    ao_sha256_hex(p->env.id, strlen(p->env.id), hex);
    snprintf(J->item_id, sizeof J->item_id, "mem:%.16s", hex);
    ao_utc_now(now, sizeof now);
    e->speedup = p->speedup;
    e->speedup_spread = p->speedup_spread;
    e->speedup_low = p->speedup_low;
    e->speedup_high = p->speedup_high;
    e->cost_usd = J->u.cost_usd;
    e->move = J->move;
    J->move = NULL;
    e->stored = 0;
    e->pair_id = ao_strdup(p->env.id);
    e->direction = ao_strdup(p->direction);
    e->slow_sha256 = ao_strdup(p->slow_sha256);
    e->fast_sha256 = ao_strdup(p->fast_sha256);
    e->created_at = ao_strdup(now);
    e->model = ao_strdup(sm->agent.conf.model);
    if (!s->none) {
        e->item_id = ao_strdup(J->item_id);
        e->title = ao_strdup(s->title);
        e->summary = ao_strdup(s->summary);
        e->before = ao_strdup(s->before);
        e->after = ao_strdup(s->after);
    }
    ao_env_set(&e->env, "experience", id, p->env.run, p->env.task, p->env.target, p->env.iter);
    e->tokens = ao_usage_json(&J->u);
    if (!s->none && !J->has_key) {
        e->reason = ao_strdup("the run's memory is off (scope none)");
    } else if (!s->none && !sm->agent.redis) {
        if (!sm->warned++)
            ao_warn("no --redis: experiences are not kept in a memory");
        e->reason = ao_strdup("no redis: the experience was not stored");
    } else if (!s->none) {
        e->stored = 1;
        J->item = memory_item(e, p);
        J->item_text = cJSON_PrintUnformatted(J->item);
    }
    J->ack = ao_msg_encode(&ao_msg_experience, e);
    return 0;
}

/* The experience kept in the memory with its ack (the pair's marker),
 * where there is redis; where another replica got there first, its ack is
 * sent instead (done). */
static int experience_keep(struct summarizer *sm, struct job *J)
{
    long expn = J->cfg.expn != AO_ABSENT_INT ? (long)J->cfg.expn : sm->expn;
    int w;

    if (!sm->agent.redis)
        return 0;
    J->ack_text = cJSON_PrintUnformatted(J->ack);
    w = ao_memory_store(sm->agent.redis, J->has_key ? J->key : "memory:off", J->p.env.id, J->item_text,
                        J->ack_text, (int)expn, J->reason, J->len);
    if (w < 0)
        return ao_io_fail(J->io, "cannot write the memory: %s", J->reason);
    if (w > 0 && J->e.stored && J->sumkey[0] && /* kept as long as the pair markers; best effort: a lesson twice at worst */
        ao_redis_set_ex(sm->agent.redis, J->sumkey, J->item_id, PAIRSUM_TTL_S, J->reason, J->len) < 0)
        ao_warn("%s: cannot mark its pair of kernels summarized: %s", J->p.env.id, J->reason);
    if (w > 0)
        return 0;
    free(J->kept); /* another replica got there first: send its ack */
    J->kept = NULL;
    if (ao_memory_marker(sm->agent.redis, J->p.env.id, &J->kept, J->reason, J->len) <= 0)
        return ao_io_fail(J->io, "cannot read a pair marker: %s", J->reason);
    J->done = 1;
    return replay(J->io, J->p.env.run, J->kept, J->reason, J->len);
}

static int process(void *ctx, struct ao_io *io, const cJSON *msg, char *reason, size_t len)
{
    struct summarizer *sm = ctx;
    struct job J = {.io = io, .reason = reason, .len = len};
    int rc = job_start(sm, &J, msg);
    char why[AO_ERRLEN];

    if (rc == 0)
        rc = acked_before(sm, &J);
    if (rc == 0 && !J.done)
        rc = paired_before(sm, &J);
    if (rc == 0 && !J.done && !J.s.none &&
        sm->agent.model->summarize(&sm->agent, &J.p, &J.s, &J.move, &J.e.reason, &J.u, why, sizeof why) < 0)
        rc = ao_io_fail(io, "%s", why); /* the stage stops; the pair comes again */
    if (rc == 0 && !J.done)
        rc = experience_fill(sm, &J);
    if (rc == 0 && !J.done)
        rc = experience_keep(sm, &J);
    if (rc == 0 && !J.done) {
        ao_info("%s: %s%s%s", J.p.env.id, J.e.stored ? "stored: " : "not stored: ", J.e.stored ? J.e.title : "",
                J.e.stored ? "" : (J.e.reason ? J.e.reason : "?"));
        rc = emit_json(io, J.p.env.run, J.ack, reason, len);
    }
    job_end(&J);
    return rc;
}

int main(int argc, char **argv)
{
    struct ao_stage s;
    struct summarizer sm = {0};
    int code;

    if (!ao_stage_open(&s, "accelopt-summarizer",
                       "accelopt-summarizer [options] < pairs.jsonl > experiences.jsonl", options,
                       NOPTS, topics, argc, argv, &code))
        return ao_stage_close(&s, code);
    sm.expn = ao_config_int(&s.cfg, "expn");
    sm.scope = ao_config_str(&s.cfg, "memory-scope");
    if (sm.expn < 1) {
        ao_err("--expn must be at least 1");
        return ao_stage_close(&s, AO_EXIT_USAGE);
    }
    return ao_agent_run(&s, &sm.agent, "summarizer", process, &sm, "pairs", "experiences");
}
