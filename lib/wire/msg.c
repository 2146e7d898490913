/* msg.c - table-driven encoders/decoders for the wire messages */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "core/alloc.h"
#include "wire/msg.h"
#include "wire/runconfig.h"
#include "wire/verdict.h"

#define ENV_FIELDS(T)                                                   \
    {"type", AO_F_STR, offsetof(T, env.type), 1, NULL},                 \
    {"v", AO_F_INT, offsetof(T, env.v), 1, NULL},                       \
    {"id", AO_F_STR, offsetof(T, env.id), 1, NULL},                     \
    {"run", AO_F_STR, offsetof(T, env.run), 1, NULL},                   \
    {"task", AO_F_STR, offsetof(T, env.task), 1, NULL},                 \
    {"target", AO_F_STR, offsetof(T, env.target), 1, NULL},             \
    {"iter", AO_F_INT, offsetof(T, env.iter), 1, NULL},                 \
    {"sig", AO_F_STR, offsetof(T, env.sig), 0, NULL}

#define F(T, name, kind, req) {#name, kind, offsetof(T, name), req, NULL}
#define FE(T, name, req, en) {#name, AO_F_STR, offsetof(T, name), req, en}
#define TYPE(var, tname, T, fields) \
    const struct ao_msg_type var = {tname, sizeof(T), fields, (int)(sizeof fields / sizeof fields[0])}

static const char *const bounds[] = {"memory", "matmul", "elementwise", NULL};
static const char *const directions[] = {"+", "-", NULL};

static const struct ao_field task_fields[] = {
    ENV_FIELDS(struct ao_task_msg),
    F(struct ao_task_msg, spec, AO_F_STR, 0),
    F(struct ao_task_msg, spec_inline, AO_F_JSON, 0),
    F(struct ao_task_msg, size, AO_F_STR, 1),
    F(struct ao_task_msg, config, AO_F_JSON, 0),
};
TYPE(ao_msg_task, "task", struct ao_task_msg, task_fields);

static const struct ao_field candidate_fields[] = {
    ENV_FIELDS(struct ao_candidate_msg),
    F(struct ao_candidate_msg, kernel_id, AO_F_STR, 1),
    F(struct ao_candidate_msg, source, AO_F_STR, 1),
    F(struct ao_candidate_msg, sha256, AO_F_STR, 1),
    F(struct ao_candidate_msg, rank, AO_F_INT, 0),
    F(struct ao_candidate_msg, latency_ns, AO_F_NUM, 1),
    F(struct ao_candidate_msg, pct_of_peak, AO_F_NUM, 0),
    F(struct ao_candidate_msg, profile, AO_F_JSON, 0),
    F(struct ao_candidate_msg, size, AO_F_STR, 0),
    F(struct ao_candidate_msg, task_path, AO_F_STR, 0),
    F(struct ao_candidate_msg, task_sha256, AO_F_STR, 0),
    F(struct ao_candidate_msg, baseline_latency_ns, AO_F_NUM, 0),
    F(struct ao_candidate_msg, config, AO_F_JSON, 0),
};
TYPE(ao_msg_candidate, "candidate", struct ao_candidate_msg, candidate_fields);

static const struct ao_field plan_fields[] = {
    ENV_FIELDS(struct ao_plan_msg),
    F(struct ao_plan_msg, candidate_id, AO_F_STR, 1),
    F(struct ao_plan_msg, candidate_sha256, AO_F_STR, 1),
    F(struct ao_plan_msg, index, AO_F_INT, 1),
    F(struct ao_plan_msg, text, AO_F_STR, 0),
    F(struct ao_plan_msg, error, AO_F_STR, 0),
    F(struct ao_plan_msg, memory_seen, AO_F_JSON, 0),
    F(struct ao_plan_msg, tokens, AO_F_JSON, 0),
    F(struct ao_plan_msg, cost_usd, AO_F_NUM, 0),
    F(struct ao_plan_msg, source, AO_F_STR, 0),
    F(struct ao_plan_msg, size, AO_F_STR, 0),
    F(struct ao_plan_msg, task_path, AO_F_STR, 0),
    F(struct ao_plan_msg, task_sha256, AO_F_STR, 0),
    F(struct ao_plan_msg, parent_latency_ns, AO_F_NUM, 0),
    F(struct ao_plan_msg, baseline_latency_ns, AO_F_NUM, 0),
    F(struct ao_plan_msg, config, AO_F_JSON, 0),
    F(struct ao_plan_msg, model, AO_F_STR, 0),
    F(struct ao_plan_msg, rank, AO_F_INT, 0),
    F(struct ao_plan_msg, duplicate_of, AO_F_STR, 0),
    F(struct ao_plan_msg, exhausted, AO_F_BOOL, 0),
    F(struct ao_plan_msg, sample, AO_F_INT, 0),
    F(struct ao_plan_msg, attempt, AO_F_INT, 0),
    F(struct ao_plan_msg, failed_source, AO_F_STR, 0),
    F(struct ao_plan_msg, diagnostics, AO_F_STR, 0),
};
TYPE(ao_msg_plan, "plan", struct ao_plan_msg, plan_fields);

static const struct ao_field kernel_fields[] = {
    ENV_FIELDS(struct ao_kernel_msg),
    F(struct ao_kernel_msg, size, AO_F_STR, 1),
    F(struct ao_kernel_msg, source, AO_F_STR, 0),
    F(struct ao_kernel_msg, sha256, AO_F_STR, 0),
    F(struct ao_kernel_msg, error, AO_F_STR, 0),
    F(struct ao_kernel_msg, parent, AO_F_STR, 0),
    F(struct ao_kernel_msg, plan, AO_F_STR, 0),
    F(struct ao_kernel_msg, plan_text, AO_F_STR, 0),
    F(struct ao_kernel_msg, memory_seen, AO_F_JSON, 0),
    F(struct ao_kernel_msg, baseline_source, AO_F_STR, 0),
    F(struct ao_kernel_msg, slot, AO_F_STR, 0),
    F(struct ao_kernel_msg, task_path, AO_F_STR, 0),
    F(struct ao_kernel_msg, task_sha256, AO_F_STR, 0),
    F(struct ao_kernel_msg, parent_latency_ns, AO_F_NUM, 0),
    F(struct ao_kernel_msg, baseline_latency_ns, AO_F_NUM, 0),
    F(struct ao_kernel_msg, tokens, AO_F_JSON, 0),
    F(struct ao_kernel_msg, cost_usd, AO_F_NUM, 0),
    F(struct ao_kernel_msg, model, AO_F_STR, 0),
    F(struct ao_kernel_msg, duplicate_of, AO_F_STR, 0),
    F(struct ao_kernel_msg, exhausted, AO_F_BOOL, 0),
    F(struct ao_kernel_msg, notes, AO_F_STR, 0),
    F(struct ao_kernel_msg, attempt, AO_F_INT, 0),
};
TYPE(ao_msg_kernel, "kernel", struct ao_kernel_msg, kernel_fields);

static const struct ao_field result_fields[] = {
    ENV_FIELDS(struct ao_result_msg),
    F(struct ao_result_msg, kernel_id, AO_F_STR, 1),
    F(struct ao_result_msg, sha256, AO_F_STR, 0),
    F(struct ao_result_msg, parent, AO_F_STR, 0),
    F(struct ao_result_msg, slot, AO_F_STR, 0),
    F(struct ao_result_msg, size, AO_F_STR, 1),
    FE(struct ao_result_msg, status, 1, ao_verdict_names),
    F(struct ao_result_msg, reason, AO_F_STR, 0),
    F(struct ao_result_msg, latency_ns, AO_F_NUM, 0),
    F(struct ao_result_msg, latency_min_ns, AO_F_NUM, 0),
    F(struct ao_result_msg, spread, AO_F_NUM, 0),
    F(struct ao_result_msg, repeats, AO_F_INT, 0),
    F(struct ao_result_msg, steady, AO_F_BOOL, 0),
    F(struct ao_result_msg, rel_l2, AO_F_JSON, 0),
    F(struct ao_result_msg, max_rel_l2, AO_F_NUM, 0),
    F(struct ao_result_msg, tolerance, AO_F_NUM, 0),
    F(struct ao_result_msg, t_min_ns, AO_F_NUM, 0),
    F(struct ao_result_msg, t_memory_ns, AO_F_NUM, 0),
    F(struct ao_result_msg, memory_bw_gbs, AO_F_NUM, 0),
    F(struct ao_result_msg, t_matmul_ns, AO_F_NUM, 0),
    F(struct ao_result_msg, t_elementwise_ns, AO_F_NUM, 0),
    F(struct ao_result_msg, machine_load, AO_F_NUM, 0),
    F(struct ao_result_msg, machine_slowdown, AO_F_NUM, 0),
    F(struct ao_result_msg, machine_spread, AO_F_NUM, 0),
    F(struct ao_result_msg, machine_spread_calibrated, AO_F_NUM, 0),
    F(struct ao_result_msg, pct_of_peak, AO_F_NUM, 0),
    FE(struct ao_result_msg, bound, 0, bounds),
    F(struct ao_result_msg, speedup, AO_F_NUM, 0),
    F(struct ao_result_msg, speedup_vs_baseline, AO_F_NUM, 0),
    F(struct ao_result_msg, diagnostics, AO_F_STR, 0),
    F(struct ao_result_msg, sandbox, AO_F_JSON, 0),
    F(struct ao_result_msg, calibration, AO_F_STR, 0),
    F(struct ao_result_msg, cached, AO_F_BOOL, 0),
    F(struct ao_result_msg, exhausted, AO_F_BOOL, 0),
    F(struct ao_result_msg, wall_ns, AO_F_INT, 0),
    F(struct ao_result_msg, timing, AO_F_JSON, 0),
    F(struct ao_result_msg, source, AO_F_STR, 0),
    F(struct ao_result_msg, plan, AO_F_STR, 0),
    F(struct ao_result_msg, plan_text, AO_F_STR, 0),
    F(struct ao_result_msg, memory_seen, AO_F_JSON, 0),
    F(struct ao_result_msg, notes, AO_F_STR, 0),
    F(struct ao_result_msg, head_to_head, AO_F_JSON, 0),
    F(struct ao_result_msg, device_profile, AO_F_JSON, 0),
    F(struct ao_result_msg, failure, AO_F_JSON, 0),
    F(struct ao_result_msg, task_sha256, AO_F_STR, 0),
    F(struct ao_result_msg, model, AO_F_STR, 0),
    F(struct ao_result_msg, attempt, AO_F_INT, 0),
    F(struct ao_result_msg, tokens, AO_F_JSON, 0),
    F(struct ao_result_msg, attempts, AO_F_INT, 0),
    F(struct ao_result_msg, fixes, AO_F_JSON, 0),
};
TYPE(ao_msg_result, "result", struct ao_result_msg, result_fields);

static const struct ao_field pair_fields[] = {
    ENV_FIELDS(struct ao_pair_msg),
    F(struct ao_pair_msg, slow_source, AO_F_STR, 1),
    F(struct ao_pair_msg, fast_source, AO_F_STR, 1),
    F(struct ao_pair_msg, slow_sha256, AO_F_STR, 1),
    F(struct ao_pair_msg, fast_sha256, AO_F_STR, 1),
    F(struct ao_pair_msg, slow_profile, AO_F_JSON, 0),
    F(struct ao_pair_msg, fast_profile, AO_F_JSON, 0),
    F(struct ao_pair_msg, speedup, AO_F_NUM, 1),
    F(struct ao_pair_msg, speedup_spread, AO_F_NUM, 0),
    F(struct ao_pair_msg, speedup_low, AO_F_NUM, 0),
    F(struct ao_pair_msg, speedup_high, AO_F_NUM, 0),
    FE(struct ao_pair_msg, direction, 1, directions),
    F(struct ao_pair_msg, plan, AO_F_STR, 0),
    F(struct ao_pair_msg, shape, AO_F_STR, 0),
    F(struct ao_pair_msg, config, AO_F_JSON, 0),
};
TYPE(ao_msg_pair, "pair", struct ao_pair_msg, pair_fields);

static const struct ao_field experience_fields[] = {
    ENV_FIELDS(struct ao_experience_msg),
    F(struct ao_experience_msg, pair_id, AO_F_STR, 1),
    F(struct ao_experience_msg, stored, AO_F_BOOL, 1),
    F(struct ao_experience_msg, title, AO_F_STR, 0),
    F(struct ao_experience_msg, summary, AO_F_STR, 0),
    F(struct ao_experience_msg, before, AO_F_STR, 0),
    F(struct ao_experience_msg, after, AO_F_STR, 0),
    F(struct ao_experience_msg, speedup, AO_F_NUM, 0),
    F(struct ao_experience_msg, speedup_spread, AO_F_NUM, 0),
    F(struct ao_experience_msg, speedup_low, AO_F_NUM, 0),
    F(struct ao_experience_msg, speedup_high, AO_F_NUM, 0),
    FE(struct ao_experience_msg, direction, 0, directions),
    F(struct ao_experience_msg, slow_sha256, AO_F_STR, 0),
    F(struct ao_experience_msg, fast_sha256, AO_F_STR, 0),
    F(struct ao_experience_msg, created_at, AO_F_STR, 0),
    F(struct ao_experience_msg, item_id, AO_F_STR, 0),
    F(struct ao_experience_msg, move, AO_F_JSON, 0),
    F(struct ao_experience_msg, reason, AO_F_STR, 0),
    F(struct ao_experience_msg, tokens, AO_F_JSON, 0),
    F(struct ao_experience_msg, cost_usd, AO_F_NUM, 0),
    F(struct ao_experience_msg, model, AO_F_STR, 0),
};
TYPE(ao_msg_experience, "experience", struct ao_experience_msg, experience_fields);

static const struct ao_field done_fields[] = {
    ENV_FIELDS(struct ao_done_msg),
    F(struct ao_done_msg, stopped, AO_F_STR, 1),
    F(struct ao_done_msg, iterations, AO_F_INT, 1),
    F(struct ao_done_msg, kernels_evaluated, AO_F_INT, 1),
    F(struct ao_done_msg, kernels_failed, AO_F_INT, 0),
    F(struct ao_done_msg, kernels_duplicate, AO_F_INT, 0),
    F(struct ao_done_msg, kernels_distinct, AO_F_INT, 0),
    F(struct ao_done_msg, kernels_repeated, AO_F_INT, 0),
    F(struct ao_done_msg, slots_empty, AO_F_INT, 0),
    F(struct ao_done_msg, best, AO_F_JSON, 0),
    F(struct ao_done_msg, speedup, AO_F_NUM, 0),
    F(struct ao_done_msg, pct_of_peak, AO_F_NUM, 0),
    F(struct ao_done_msg, history, AO_F_JSON, 0),
    F(struct ao_done_msg, tokens, AO_F_JSON, 0),
    F(struct ao_done_msg, cost_usd, AO_F_NUM, 0),
    F(struct ao_done_msg, memory_deadline_missed, AO_F_BOOL, 0),
    F(struct ao_done_msg, reason, AO_F_STR, 0),
    F(struct ao_done_msg, baseline_latency_ns, AO_F_NUM, 0),
    F(struct ao_done_msg, slot_deadline_s, AO_F_NUM, 0),
    F(struct ao_done_msg, slots_lost, AO_F_INT, 0),
    F(struct ao_done_msg, speedup_low, AO_F_NUM, 0),
    F(struct ao_done_msg, speedup_high, AO_F_NUM, 0),
    F(struct ao_done_msg, search_speedup, AO_F_NUM, 0),
    F(struct ao_done_msg, speedup_method, AO_F_STR, 0),
    F(struct ao_done_msg, best_latency_ns, AO_F_NUM, 0),
    F(struct ao_done_msg, baseline_pct_of_peak, AO_F_NUM, 0),
    F(struct ao_done_msg, search_baseline_latency_ns, AO_F_NUM, 0),
    F(struct ao_done_msg, head_to_head, AO_F_JSON, 0),
};
TYPE(ao_msg_done, "done", struct ao_done_msg, done_fields);

static const struct ao_field dlq_fields[] = {
    ENV_FIELDS(struct ao_dlq_msg),
    F(struct ao_dlq_msg, stage, AO_F_STR, 1),
    F(struct ao_dlq_msg, reason, AO_F_STR, 1),
    F(struct ao_dlq_msg, payload, AO_F_STR, 1),
    F(struct ao_dlq_msg, payload_bytes, AO_F_INT, 0),
    F(struct ao_dlq_msg, payload_sha256, AO_F_STR, 0),
    F(struct ao_dlq_msg, source_topic, AO_F_STR, 0),
    F(struct ao_dlq_msg, received_at, AO_F_STR, 1),
};
TYPE(ao_msg_dlq, "dlq", struct ao_dlq_msg, dlq_fields);

static const struct ao_field memory_item_fields[] = {
    ENV_FIELDS(struct ao_memory_item_msg),
    F(struct ao_memory_item_msg, title, AO_F_STR, 1),
    F(struct ao_memory_item_msg, summary, AO_F_STR, 1),
    F(struct ao_memory_item_msg, speedup, AO_F_NUM, 1),
    FE(struct ao_memory_item_msg, direction, 1, directions),
    F(struct ao_memory_item_msg, created_at, AO_F_STR, 1),
    F(struct ao_memory_item_msg, pair_id, AO_F_STR, 0),
    F(struct ao_memory_item_msg, before, AO_F_STR, 0),
    F(struct ao_memory_item_msg, after, AO_F_STR, 0),
    F(struct ao_memory_item_msg, speedup_spread, AO_F_NUM, 0),
    F(struct ao_memory_item_msg, speedup_low, AO_F_NUM, 0),
    F(struct ao_memory_item_msg, speedup_high, AO_F_NUM, 0),
    F(struct ao_memory_item_msg, slow_sha256, AO_F_STR, 0),
    F(struct ao_memory_item_msg, fast_sha256, AO_F_STR, 0),
    F(struct ao_memory_item_msg, plan, AO_F_STR, 0),
    F(struct ao_memory_item_msg, model, AO_F_STR, 0),
    F(struct ao_memory_item_msg, move, AO_F_JSON, 0),
    F(struct ao_memory_item_msg, imported_at, AO_F_STR, 0),
    F(struct ao_memory_item_msg, origin, AO_F_STR, 0),
    F(struct ao_memory_item_msg, shape, AO_F_STR, 0),
    F(struct ao_memory_item_msg, evidence, AO_F_INT, 0),
    F(struct ao_memory_item_msg, evidence_ids, AO_F_JSON, 0),
};
TYPE(ao_msg_memory_item, "memory_item", struct ao_memory_item_msg, memory_item_fields);

const struct ao_msg_type *const ao_msg_types[] = {
    &ao_msg_task, &ao_msg_candidate, &ao_msg_plan, &ao_msg_kernel, &ao_msg_result,
    &ao_msg_pair, &ao_msg_experience, &ao_msg_done, &ao_msg_dlq, &ao_msg_memory_item, NULL};

const struct ao_msg_type *ao_msg_type_find(const char *name)
{
    for (int i = 0; ao_msg_types[i]; i++)
        if (strcmp(ao_msg_types[i]->name, name) == 0)
            return ao_msg_types[i];
    return NULL;
}

/* --- the raw text, before cJSON sees it --- */

size_t ao_utf8_len(const unsigned char *p, size_t n)
{
    unsigned c = p[0];
    size_t k;
    unsigned long cp;

    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf)
        k = 2, cp = c & 0x1f;
    else if (c >= 0xe0 && c <= 0xef)
        k = 3, cp = c & 0x0f;
    else if (c >= 0xf0 && c <= 0xf4)
        k = 4, cp = c & 0x07;
    else
        return 0;
    if (k > n)
        return 0;
    for (size_t i = 1; i < k; i++) {
        if ((p[i] & 0xc0) != 0x80)
            return 0;
        cp = (cp << 6) | (p[i] & 0x3f);
    }
    if ((k == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
        (k == 4 && (cp < 0x10000 || cp > 0x10ffff)))
        return 0;
    return k;
}

int ao_msg_check_raw(const char *raw, size_t len, char *err, size_t errlen)
{
    const unsigned char *p = (const unsigned char *)raw;
    int in_str = 0;

    for (size_t i = 0; i < len;) {
        size_t k = ao_utf8_len(p + i, len - i);
        if (k == 0) {
            snprintf(err, errlen, "invalid UTF-8 at byte %zu", i);
            return -1;
        }
        if (p[i] == 0) {
            snprintf(err, errlen, "a NUL byte at byte %zu", i);
            return -1;
        }
        if (in_str && p[i] == '\\' && i + 1 < len) {
            /* a \u0000 escape would cut the string short in the decoder */
            if (p[i + 1] == 'u' && i + 5 < len && memcmp(p + i + 2, "0000", 4) == 0) {
                snprintf(err, errlen, "a \\u0000 in a string at byte %zu", i);
                return -1;
            }
            i += 2;
            continue;
        }
        if (p[i] == '"')
            in_str = !in_str;
        i += k;
    }
    return 0;
}

/* FNV-1a from a per-process random basis, so that nobody can choose keys
 * that all land in one bucket */
static uint64_t key_hash(const char *s)
{
    static uint64_t basis;
    uint64_t h;

    if (!basis && getrandom(&basis, sizeof basis, 0) != (ssize_t)sizeof basis)
        basis = 14695981039346656037ull;
    basis |= 1;
    for (h = basis; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

/* Is a key of the object j there twice?  Names it.  Linear time: an open
 * addressing table of the keys (pairs compared only for a handful). */
static const char *object_duplicate(const cJSON *j)
{
    const cJSON *a, **tab;
    size_t n = 0, cap = 16;

    for (a = j->child; a; a = a->next)
        n++;
    if (n <= 8) {
        for (a = j->child; a; a = a->next)
            for (const cJSON *b = a->next; b; b = b->next)
                if (a->string && b->string && strcmp(a->string, b->string) == 0)
                    return a->string;
        return NULL;
    }
    while (cap < 2 * n)
        cap *= 2;
    tab = ao_calloc(cap, sizeof *tab);
    for (a = j->child; a; a = a->next) {
        size_t i;
        if (!a->string)
            continue;
        for (i = key_hash(a->string) & (cap - 1); tab[i]; i = (i + 1) & (cap - 1))
            if (strcmp(tab[i]->string, a->string) == 0) {
                free(tab);
                return a->string;
            }
        tab[i] = a;
    }
    free(tab);
    return NULL;
}

/* Does any object in j have a key twice?  Names the first found. */
static const char *duplicate_key(const cJSON *j)
{
    const char *d;

    if (cJSON_IsObject(j) && (d = object_duplicate(j)))
        return d;
    for (const cJSON *a = j ? j->child : NULL; a; a = a->next)
        if ((cJSON_IsObject(a) || cJSON_IsArray(a)) && (d = duplicate_key(a)))
            return d;
    return NULL;
}

cJSON *ao_msg_parse(const char *raw, size_t len, char *err, size_t errlen)
{
    const char *end = NULL, *dup;
    cJSON *j;

    if (ao_msg_check_raw(raw, len, err, errlen) < 0)
        return NULL;
    if (!(j = cJSON_ParseWithLengthOpts(raw, len, &end, 0))) {
        snprintf(err, errlen, "not valid JSON near byte %ld",
                 (long)(cJSON_GetErrorPtr() ? cJSON_GetErrorPtr() - raw : 0));
        return NULL;
    }
    for (; end && end < raw + len; end++)
        if (!strchr(" \t\r\n", *end)) {
            snprintf(err, errlen, "trailing bytes after the JSON value at byte %ld",
                     (long)(end - raw));
            cJSON_Delete(j);
            return NULL;
        }
    if ((dup = duplicate_key(j))) {
        snprintf(err, errlen, "the key '%.40s' appears twice in one object", dup);
        cJSON_Delete(j);
        return NULL;
    }
    return j;
}

/* A run's config travels in several messages and every stage reads it:
 * it is checked where it enters, field by field (wire/runconfig.h). */
static int check_config(const cJSON *c, char *err, size_t errlen)
{
    struct ao_run_config rc;

    if (ao_run_config_decode(c, &rc, err, errlen) < 0)
        return -1;
    ao_run_config_release(&rc);
    return 0;
}

int ao_run_id_valid(const char *run)
{
    size_t n = 0;

    if (!run || !((*run >= 'a' && *run <= 'z') || (*run >= 'A' && *run <= 'Z') ||
                  (*run >= '0' && *run <= '9')))
        return 0;
    for (const char *p = run; *p; p++, n++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              *p == '.' || *p == '_' || *p == '-'))
            return 0;
    return n <= AO_RUN_ID_MAX;
}

/* one part of a slot: "0", or digits without a leading zero, under 10000 */
static const char *slot_part(const char *s, int *v)
{
    int n = 0;

    if (*s == '0') {
        *v = 0;
        return s + 1;
    }
    if (*s < '1' || *s > '9')
        return NULL;
    for (*v = 0; *s >= '0' && *s <= '9'; s++) {
        if (++n > 4)
            return NULL;
        *v = *v * 10 + (*s - '0');
    }
    return s;
}

int ao_slot_parse(const char *slot, int *r, int *p, int *s)
{
    const char *c = slot;

    if (!c || !(c = slot_part(c, r)) || *c++ != '.' || !(c = slot_part(c, p)) || *c++ != '.' ||
        !(c = slot_part(c, s)) || *c)
        return -1;
    return 0;
}

/* Ids are parsed once, here at the edge: a run id is a name (it is part of
 * every Redis key and file name of the run), a slot is canonical "r.p.s"
 * (so "00.0.0" can never be another copy of slot 0.0.0), and a message id
 * is printable and bounded. */
static int check_ids(const struct ao_msg_type *t, const cJSON *j, const void *msg, char *err,
                     size_t errlen)
{
    const struct ao_env *e = msg;
    const char *slot = ao_json_str(j, "slot", NULL);
    int a, b, c;

    if (!ao_run_id_valid(e->run) && !(strcmp(t->name, "dlq") == 0 && !e->run[0])) {
        snprintf(err, errlen, "run id '%.80s' is not a name of at most %d letters, digits, '.', "
                 "'_' and '-' (starting with a letter or digit)", e->run, AO_RUN_ID_MAX);
        return -1;
    }
    if (strlen(e->id) > AO_MSG_ID_MAX) {
        snprintf(err, errlen, "message id of %zu bytes is over %d", strlen(e->id), AO_MSG_ID_MAX);
        return -1;
    }
    for (const unsigned char *p = (const unsigned char *)e->id; *p; p++)
        if (*p < 0x20 || *p == 0x7f) {
            snprintf(err, errlen, "message id holds a control character");
            return -1;
        }
    for (int i = 0; i < t->nfields; i++) { /* ids of other messages: bounded as this one's */
        const struct ao_field *f = &t->fields[i];
        size_t n = strlen(f->name);
        const char *v = f->kind == AO_F_STR ? *(char *const *)((const char *)msg + f->offset) : NULL;
        if (n > 3 && strcmp(f->name + n - 3, "_id") == 0 && v && strlen(v) > AO_MSG_ID_MAX) {
            snprintf(err, errlen, "%s of %zu bytes is over %d", f->name, strlen(v), AO_MSG_ID_MAX);
            return -1;
        }
    }
    if (slot && ao_slot_parse(slot, &a, &b, &c) < 0) {
        snprintf(err, errlen, "slot '%.40s' is not of the form rank.plan.sample (whole numbers "
                 "without leading zeros)", slot);
        return -1;
    }
    return 0;
}

int ao_msg_decode(const struct ao_msg_type *t, const cJSON *j, void *msg,
                  char *err, size_t errlen)
{
    if (!cJSON_IsObject(j)) {
        ao_msg_init(t, msg);
        snprintf(err, errlen, "message is not a JSON object");
        return -1;
    }
    if (ao_record_decode_as(t, " message", j, msg, err, errlen) < 0)
        return -1;
    if (strcmp(((struct ao_env *)msg)->type, t->name) != 0) {
        snprintf(err, errlen, "message type '%.40s' where '%s' was expected",
                 ((struct ao_env *)msg)->type, t->name);
        goto fail;
    }
    if (((struct ao_env *)msg)->v != AO_MSG_VERSION) {
        snprintf(err, errlen, "message version %lld: this stage speaks version %d",
                 ((struct ao_env *)msg)->v, AO_MSG_VERSION);
        goto fail;
    }
    if (((struct ao_env *)msg)->iter < 0) {
        snprintf(err, errlen, "iteration %lld is negative", ((struct ao_env *)msg)->iter);
        goto fail;
    }
    {
        const cJSON *c = cJSON_GetObjectItemCaseSensitive(j, "config");
        if (c && check_config(c, err, errlen) < 0)
            goto fail;
    }
    if (check_ids(t, j, msg, err, errlen) < 0)
        goto fail;
    return 0;
fail:
    ao_msg_release(t, msg);
    return -1;
}

static void dup_or_null(char **dst, const char *s)
{
    free(*dst);
    *dst = s ? ao_strdup(s) : NULL;
}

void ao_env_set(struct ao_env *env, const char *type, const char *id, const char *run, const char *task,
                const char *target, long long iter)
{
    env->v = AO_MSG_VERSION;
    env->iter = iter;
    dup_or_null(&env->type, type);
    dup_or_null(&env->id, id);
    dup_or_null(&env->run, run);
    dup_or_null(&env->task, task);
    dup_or_null(&env->target, target);
}

double ao_json_num(const cJSON *o, const char *name, double def)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
    return cJSON_IsNumber(v) ? v->valuedouble : def;
}

const char *ao_json_str(const cJSON *o, const char *name, const char *def)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
    return cJSON_IsString(v) ? v->valuestring : def;
}
