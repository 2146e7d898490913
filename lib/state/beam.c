/* beam.c - the kept kernels: their fields, decoded and encoded whole */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/rc.h"
#include "core/util.h"
#include "state/beam.h"

#define P(name, kind) {#name, kind, offsetof(struct ao_kernel_profile, name), 0, NULL}
static const struct ao_field profile_fields[] = {
    P(latency_min_ns, AO_F_NUM), P(spread, AO_F_NUM),      P(t_min_ns, AO_F_NUM),
    P(bound, AO_F_STR),          P(t_memory_ns, AO_F_NUM), P(memory_bw_gbs, AO_F_NUM), P(t_matmul_ns, AO_F_NUM),
    P(t_elementwise_ns, AO_F_NUM), P(speedup_vs_baseline, AO_F_NUM), P(max_rel_l2, AO_F_NUM),
    P(repeats, AO_F_INT),        P(machine_load, AO_F_NUM), P(machine_slowdown, AO_F_NUM),
    P(machine_spread, AO_F_NUM), P(machine_spread_calibrated, AO_F_NUM), P(counters, AO_F_JSON),
};
static const struct ao_msg_type profile_rec = {"profile", sizeof(struct ao_kernel_profile), profile_fields,
                                               (int)(sizeof profile_fields / sizeof profile_fields[0])};

#define M(name, kind) {#name, kind, offsetof(struct ao_beam_member, name), 0, NULL}
static const struct ao_field member_fields[] = {
    M(kernel_id, AO_F_STR), M(sha256, AO_F_STR),  M(source, AO_F_STR),
    M(parent, AO_F_STR),    M(plan, AO_F_STR),    M(plan_text, AO_F_STR),
    M(slot, AO_F_STR),      M(latency_ns, AO_F_NUM), M(pct_of_peak, AO_F_NUM),
    M(iter, AO_F_INT),
    /* "profile" is a record of its own: decoded apart */
};
static const struct ao_msg_type member_rec = {"beam member", sizeof(struct ao_beam_member), member_fields,
                                              (int)(sizeof member_fields / sizeof member_fields[0])};

static void member_init(struct ao_beam_member *m)
{
    ao_msg_init(&member_rec, m);
    ao_msg_init(&profile_rec, &m->profile);
}

void ao_beam_member_release(struct ao_beam_member *m)
{
    ao_msg_release(&profile_rec, &m->profile);
    ao_msg_release(&member_rec, m);
}

static int member_decode(const cJSON *j, struct ao_beam_member *m, char *err, size_t errlen)
{
    cJSON *rest = cJSON_IsObject(j) ? cJSON_Duplicate(j, 1) : NULL, *profile;
    struct ao_kernel_profile p;

    member_init(m);
    if (!rest) {
        snprintf(err, errlen, "a beam member is not a JSON object");
        return -1;
    }
    profile = cJSON_DetachItemFromObjectCaseSensitive(rest, "profile");
    if (ao_record_decode(&member_rec, rest, m, err, errlen) < 0 ||
        (profile && ao_record_decode(&profile_rec, profile, &p, err, errlen) < 0)) {
        cJSON_Delete(profile);
        cJSON_Delete(rest);
        ao_beam_member_release(m);
        return -1;
    }
    if (profile)
        m->profile = p;
    cJSON_Delete(profile);
    cJSON_Delete(rest);
    return 0;
}

cJSON *ao_kernel_profile_json(const struct ao_kernel_profile *p)
{
    return ao_msg_encode(&profile_rec, p);
}

cJSON *ao_beam_member_json(const struct ao_beam_member *m)
{
    cJSON *j = ao_msg_encode(&member_rec, m);

    cJSON_AddItemToObject(j, "profile", ao_kernel_profile_json(&m->profile));
    return j;
}

int ao_beam_member_copy(struct ao_beam_member *dst, const struct ao_beam_member *src)
{
    cJSON *j = ao_beam_member_json(src);
    char err[AO_ERRLEN];
    int rc = member_decode(j, dst, err, sizeof err); /* (our own member: it decodes) */

    cJSON_Delete(j);
    return rc;
}

static void dup(char **dst, const char *s)
{
    if (s)
        *dst = ao_strdup(s);
}

void ao_beam_member_of(struct ao_beam_member *m, const struct ao_result_msg *r, long long iter)
{
    struct ao_kernel_profile *p = &m->profile;

    member_init(m);
    m->latency_ns = r->latency_ns;
    m->pct_of_peak = r->pct_of_peak;
    m->iter = iter;
    p->latency_min_ns = r->latency_min_ns;
    p->spread = r->spread;
    p->t_min_ns = r->t_min_ns;
    p->t_memory_ns = r->t_memory_ns;
    p->memory_bw_gbs = r->memory_bw_gbs;
    p->t_matmul_ns = r->t_matmul_ns;
    p->t_elementwise_ns = r->t_elementwise_ns;
    p->speedup_vs_baseline = r->speedup_vs_baseline;
    p->max_rel_l2 = r->max_rel_l2;
    p->machine_load = r->machine_load;
    p->machine_slowdown = r->machine_slowdown;
    p->machine_spread = r->machine_spread;
    p->machine_spread_calibrated = r->machine_spread_calibrated;
    p->repeats = r->repeats;
    dup(&m->kernel_id, r->kernel_id);
    dup(&m->sha256, r->sha256);
    dup(&m->source, r->source);
    dup(&m->parent, r->parent);
    dup(&m->plan, r->plan);
    dup(&m->plan_text, r->plan_text);
    dup(&m->slot, r->slot);
    dup(&p->bound, r->bound);
    {
        const cJSON *c = cJSON_GetObjectItemCaseSensitive(r->device_profile, "counters");
        if (cJSON_IsObject(c))
            p->counters = cJSON_Duplicate(c, 1);
    }
}

void ao_beam_init(struct ao_beam *b)
{
    b->n = 0;
}

void ao_beam_release(struct ao_beam *b)
{
    for (int i = 0; i < b->n; i++)
        ao_beam_member_release(&b->m[i]);
    b->n = 0;
}

int ao_beam_decode(const cJSON *j, struct ao_beam *b, char *err, size_t errlen)
{
    const cJSON *it;
    char why[AO_ERRLEN];

    ao_beam_init(b);
    if (!cJSON_IsArray(j) || cJSON_GetArraySize(j) > AO_MAX_BEAM) {
        snprintf(err, errlen, "a beam is an array of at most %d kernels", AO_MAX_BEAM);
        return -1;
    }
    cJSON_ArrayForEach(it, j) {
        if (member_decode(it, &b->m[b->n], why, sizeof why) < 0) {
            snprintf(err, errlen, "the beam's kernel %d: %s", b->n, why);
            ao_beam_release(b);
            return -1;
        }
        b->n++;
    }
    return 0;
}

int ao_beam_load(struct ao_runstore *rs, const char *run, struct ao_beam *b, char *err, size_t errlen)
{
    char why[AO_ERRLEN];
    const cJSON *j;
    int rc = ao_runstore_json_ref(rs, run, "beam", &j, err, errlen);

    ao_beam_init(b);
    if (rc <= 0)
        return rc;
    rc = ao_beam_decode(j, b, why, sizeof why);
    if (rc < 0) {
        snprintf(err, errlen, "run '%.80s': its beam does not read back (%s)", run, why);
        return AO_RC_CORRUPT;
    }
    return 1;
}

cJSON *ao_beam_json(const struct ao_beam *b)
{
    cJSON *a = cJSON_CreateArray();

    for (int i = 0; i < b->n; i++)
        cJSON_AddItemToArray(a, ao_beam_member_json(&b->m[i]));
    return a;
}
