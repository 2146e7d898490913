/* summarizer.c - accelopt-summarizer: a slow->fast pair in, an experience
 * out: distilled by the model, written to the memory together with the
 * pair's idempotency marker in one atomic step, then acked */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents/agent.h"
#include "agents/extract.h"
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

    if (!it)
        return NULL;
    for (int i = 0; drop[i]; i++)
        cJSON_DeleteItemFromObjectCaseSensitive(it, drop[i]);
    if (!cJSON_AddStringToObject(it, "id", e->item_id) ||
        (p->plan && !cJSON_AddStringToObject(it, "plan", p->plan)) ||
        (p->shape && !cJSON_AddStringToObject(it, "shape", p->shape))) {
        cJSON_Delete(it);
        return NULL;
    }
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

static int process(void *ctx, struct ao_io *io, const cJSON *msg, char *reason, size_t len)
{
    struct summarizer *sm = ctx;
    struct ao_pair_msg p;
    struct ao_experience_msg e;
    struct ao_summary s = {0};
    struct ao_llm_usage u = {0};
    cJSON *move = NULL, *ack = NULL, *item = NULL;
    char *kept = NULL, *ack_text = NULL, *item_text = NULL, key[AO_KEY_MAX], id[AO_ID_BUF], item_id[24], now[32];
    char hex[65], sumkey[AO_KEY_MAX] = "";
    int has_key, rc = -1;
    struct ao_run_config cfg;

    ao_msg_init(&ao_msg_experience, &e);
    if (ao_msg_decode(&ao_msg_pair, msg, &p, reason, len) < 0)
        return -1;
    if (ao_run_config_decode(p.config, &cfg, reason, len) < 0) { /* checked at decode: it holds */
        ao_msg_release(&ao_msg_pair, &p);
        return -1;
    }
    has_key = ao_memory_key(cfg.memory_scope ? cfg.memory_scope : sm->scope, p.env.target,
                            p.env.task, key, sizeof key, reason, len);
    if (has_key < 0)
        goto out;
    /* a pair seen before is acked again, from its marker, at no cost */
    if (sm->agent.redis) {
        int seen = ao_memory_marker(sm->agent.redis, p.env.id, &kept, reason, len);
        if (seen < 0) {
            rc = ao_io_fail(io, "cannot read a pair marker: %s", reason);
            goto out;
        }
        if (seen) {
            ao_info("%s: summarized before; acked again", p.env.id);
            rc = replay(io, p.env.run, kept, reason, len);
            goto out;
        }
    }
    /* the same two kernels, paired again (another slot, iteration or run):
     * one lesson, not one per pair; acked without a model call */
    if (sm->agent.redis && has_key && ao_name(sumkey, sizeof sumkey, AO_KEY_PAIRSUM, key, p.slow_sha256,
                                              p.fast_sha256) == 0) {
        char *before = NULL;
        int got = ao_redis_get(sm->agent.redis, sumkey, &before, reason, len);
        if (got < 0) {
            rc = ao_io_fail(io, "cannot read a pair's summary key: %s", reason);
            goto out;
        }
        if (got > 0 && !memory_holds(sm, key, before)) { /* pruned or cleared since: learn it again */
            free(before);
            got = 0;
        }
        if (got > 0) {
            char why[160];
            s.none = 1;
            snprintf(why, sizeof why, "the same slow and fast kernels were summarized before, as %.40s: "
                     "not summarized twice", before);
            free(before);
            if (!(e.reason = strdup(why)))
                goto oom;
            ao_info("%s: the same pair of kernels as an earlier one; acked without a model call", p.env.id);
            goto ack;
        }
    }
    {
        char why[AO_ERRLEN];
        if (sm->agent.model->summarize(&sm->agent, &p, &s, &move, &e.reason, &u, why, sizeof why) < 0) {
            rc = ao_io_fail(io, "%s", why); /* the stage stops; the pair comes again */
            goto out;
        }
    }
ack:
    if (ao_name(id, sizeof id, AO_ID_EXPERIENCE, p.env.id) < 0) {
        snprintf(reason, len, "the pair's id is too long for an experience's");
        goto out;
    }
    ao_sha256_hex(p.env.id, strlen(p.env.id), hex);
    snprintf(item_id, sizeof item_id, "mem:%.16s", hex);
    ao_utc_now(now, sizeof now);
    e.speedup = p.speedup;
    e.speedup_spread = p.speedup_spread;
    e.speedup_low = p.speedup_low;
    e.speedup_high = p.speedup_high;
    e.cost_usd = u.cost_usd;
    e.move = move;
    move = NULL;
    if (ao_env_set(&e.env, "experience", id, p.env.run, p.env.task, p.env.target, p.env.iter) < 0 ||
        !(e.pair_id = strdup(p.env.id)) || !(e.direction = strdup(p.direction)) ||
        !(e.slow_sha256 = strdup(p.slow_sha256)) || !(e.fast_sha256 = strdup(p.fast_sha256)) ||
        !(e.created_at = strdup(now)) || !(e.model = strdup(sm->agent.conf.model)) ||
        !(e.tokens = ao_usage_json(&u)) ||
        (!s.none && (!(e.item_id = strdup(item_id)) || !(e.title = strdup(s.title)) ||
                     !(e.summary = strdup(s.summary)) || !(e.before = strdup(s.before)) ||
                     !(e.after = strdup(s.after)))))
        goto oom;
    e.stored = 0;
    if (!s.none && !has_key) {
        e.reason = strdup("the run's memory is off (scope none)");
    } else if (!s.none && !sm->agent.redis) {
        if (!sm->warned++)
            ao_warn("no --redis: experiences are not kept in a memory");
        e.reason = strdup("no redis: the experience was not stored");
    } else if (!s.none) {
        e.stored = 1;
        if (!(item = memory_item(&e, &p)) || !(item_text = cJSON_PrintUnformatted(item)))
            goto oom;
    }
    if (!(ack = ao_msg_encode(&ao_msg_experience, &e)))
        goto oom;
    if (sm->agent.redis) {
        long expn = cfg.expn != AO_ABSENT_INT ? (long)cfg.expn : sm->expn;
        int w;
        if (!(ack_text = cJSON_PrintUnformatted(ack)))
            goto oom;
        w = ao_memory_store(sm->agent.redis, has_key ? key : "memory:off", p.env.id, item_text,
                            ack_text, (int)expn, reason, len);
        if (w < 0) {
            rc = ao_io_fail(io, "cannot write the memory: %s", reason);
            goto out;
        }
        if (w > 0 && e.stored && sumkey[0] && /* kept as long as the pair markers; best effort: a lesson twice at worst */
            ao_redis_set_ex(sm->agent.redis, sumkey, item_id, PAIRSUM_TTL_S, reason, len) < 0)
            ao_warn("%s: cannot mark its pair of kernels summarized: %s", p.env.id, reason);
        if (w == 0) { /* another replica got there first: send its ack */
            free(kept);
            kept = NULL;
            if (ao_memory_marker(sm->agent.redis, p.env.id, &kept, reason, len) <= 0) {
                rc = ao_io_fail(io, "cannot read a pair marker: %s", reason);
                goto out;
            }
            rc = replay(io, p.env.run, kept, reason, len);
            goto out;
        }
    }
    ao_info("%s: %s%s%s", p.env.id, e.stored ? "stored: " : "not stored: ",
            e.stored ? e.title : "", e.stored ? "" : (e.reason ? e.reason : "?"));
    rc = emit_json(io, p.env.run, ack, reason, len);
    goto out;
oom:
    snprintf(reason, len, "out of memory");
out:
    free(kept);
    free(ack_text);
    cJSON_free(item_text);
    cJSON_Delete(item);
    cJSON_Delete(ack);
    cJSON_Delete(move);
    ao_summary_release(&s);
    ao_msg_release(&ao_msg_experience, &e);
    ao_run_config_release(&cfg);
    ao_msg_release(&ao_msg_pair, &p);
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
