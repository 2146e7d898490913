/* measurement.c - a kernel's measurement, and the result made from it */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "measure/measurement.h"
#include "core/alloc.h"
#include "core/util.h"
#include "wire/names.h"

_Static_assert(sizeof(enum ao_verdict) == sizeof(int), "a verdict is kept as an int (AO_F_ENUM)");

static const char *const bounds[] = {"memory", "matmul", "elementwise", NULL};

#define M(name, kind) {#name, kind, offsetof(struct ao_measurement, name), 0, NULL}
static const struct ao_field fields[] = {
    {"status", AO_F_ENUM, offsetof(struct ao_measurement, verdict), 1, ao_verdict_names},
    M(reason, AO_F_STR),
    M(diagnostics, AO_F_STR),
    {"bound", AO_F_STR, offsetof(struct ao_measurement, bound), 0, bounds},
    M(calibration, AO_F_STR),
    M(latency_ns, AO_F_NUM),
    M(latency_min_ns, AO_F_NUM),
    M(spread, AO_F_NUM),
    M(t_min_ns, AO_F_NUM),
    M(t_memory_ns, AO_F_NUM),
    M(memory_bw_gbs, AO_F_NUM),
    M(t_matmul_ns, AO_F_NUM),
    M(t_elementwise_ns, AO_F_NUM),
    M(pct_of_peak, AO_F_NUM),
    M(max_rel_l2, AO_F_NUM),
    M(tolerance, AO_F_NUM),
    M(machine_load, AO_F_NUM),
    M(machine_slowdown, AO_F_NUM),
    M(machine_spread, AO_F_NUM),
    M(machine_spread_calibrated, AO_F_NUM),
    M(repeats, AO_F_INT),
    M(wall_ns, AO_F_INT),
    M(steady, AO_F_BOOL),
    M(rel_l2, AO_F_JSON),
    M(sandbox, AO_F_JSON),
    M(timing, AO_F_JSON),
    M(head_to_head, AO_F_JSON),
    M(device_profile, AO_F_JSON),
    M(failure, AO_F_JSON),
};
const struct ao_msg_type ao_rec_measurement = {"measurement", sizeof(struct ao_measurement), fields,
                                               (int)(sizeof fields / sizeof fields[0])};

void ao_measurement_init(struct ao_measurement *m)
{
    ao_msg_init(&ao_rec_measurement, m);
}

void ao_measurement_release(struct ao_measurement *m)
{
    ao_msg_release(&ao_rec_measurement, m);
}

void ao_measurement_fail(struct ao_measurement *m, const char *why)
{
    m->verdict = AO_V_INTERNAL_ERROR;
    free(m->reason);
    m->reason = ao_strdup(why);
}

static void dup_str(char **dst, const char *src)
{
    if (src)
        *dst = ao_strdup(src);
}

static void dup_json(cJSON **dst, const cJSON *src)
{
    if (src)
        *dst = cJSON_Duplicate(src, 1);
}

int ao_result_of(const struct ao_kernel_msg *k, const struct ao_measurement *m, const char *sha256,
                 const char *task_sha256, int cached, struct ao_result_msg *r, char *err,
                 size_t errlen)
{
    char id[AO_ID_BUF];

    ao_msg_init(&ao_msg_result, r);
    /* the result's id is the kernel's, so a replayed kernel gives the same id */
    if (ao_name(id, sizeof id, AO_ID_RESULT, k->env.id) < 0)
        return ao_errf(err, errlen, "the kernel's id is too long for a result's");
    ao_env_set(&r->env, "result", id, k->env.run, k->env.task, k->env.target, k->env.iter);
    dup_str(&r->kernel_id, k->env.id);
    dup_str(&r->sha256, sha256 ? sha256 : k->sha256);
    dup_str(&r->parent, k->parent);
    dup_str(&r->slot, k->slot);
    dup_str(&r->size, k->size);
    dup_str(&r->source, k->source);
    dup_str(&r->plan, k->plan);
    dup_str(&r->plan_text, k->plan_text);
    dup_str(&r->notes, k->notes);
    dup_str(&r->task_sha256, task_sha256);
    dup_str(&r->model, k->model);
    dup_json(&r->tokens, k->tokens);
    dup_json(&r->memory_seen, k->memory_seen);
    dup_str(&r->status, ao_verdict_name(m->verdict));
    dup_str(&r->reason, m->reason);
    dup_str(&r->diagnostics, m->diagnostics);
    dup_str(&r->bound, m->bound);
    dup_str(&r->calibration, m->calibration);
    dup_json(&r->rel_l2, m->rel_l2);
    dup_json(&r->sandbox, m->sandbox);
    dup_json(&r->timing, m->timing);
    dup_json(&r->head_to_head, m->head_to_head);
    dup_json(&r->device_profile, m->device_profile);
    dup_json(&r->failure, m->failure);
    r->attempt = k->attempt;
    r->exhausted = !k->source && k->exhausted > 0 ? 1 : -1; /* no kernel: the search ran out */
    r->latency_ns = m->latency_ns;
    r->latency_min_ns = m->latency_min_ns;
    r->spread = m->spread;
    r->t_min_ns = m->t_min_ns;
    r->t_memory_ns = m->t_memory_ns;
    r->memory_bw_gbs = m->memory_bw_gbs;
    r->t_matmul_ns = m->t_matmul_ns;
    r->t_elementwise_ns = m->t_elementwise_ns;
    r->pct_of_peak = m->pct_of_peak;
    r->max_rel_l2 = m->max_rel_l2;
    r->tolerance = m->tolerance;
    r->machine_load = m->machine_load;
    r->machine_slowdown = m->machine_slowdown;
    r->machine_spread = m->machine_spread;
    r->machine_spread_calibrated = m->machine_spread_calibrated;
    r->repeats = m->repeats;
    r->wall_ns = m->wall_ns;
    r->steady = m->steady;
    r->cached = cached;
    if (m->head_to_head) { /* the median of its paired ratios: against the parent it names, */
        if (k->parent)       /* or the final one's baseline */
            r->speedup = ao_json_num(m->head_to_head, "speedup", NAN);
        else
            r->speedup_vs_baseline = ao_json_num(m->head_to_head, "speedup", NAN);
    } else if (m->verdict == AO_V_OK && m->latency_ns > 0) {
        if (isfinite(k->parent_latency_ns))
            r->speedup = k->parent_latency_ns / m->latency_ns;
        if (isfinite(k->baseline_latency_ns))
            r->speedup_vs_baseline = k->baseline_latency_ns / m->latency_ns;
    }
    return 0;
}
