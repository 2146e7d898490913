/* beam.h - the kernels a run keeps (the run hash's "beam" field): each
 * with the measurement it was kept for.  Decoded whole where the selector
 * reads it, encoded whole where a step is taken; `done` carries its best
 * member as `best`, a candidate its member's profile. */
#ifndef AO_BEAM_H
#define AO_BEAM_H

#include <cjson/cJSON.h>

#include "state/runstore.h"
#include "wire/msg.h"
#include "wire/runconfig.h"

/* What the agents and the summarizer are shown of a kept kernel's
 * measurement (a candidate's `profile`); absent fields are NAN, NULL and
 * AO_ABSENT_INT. */
struct ao_kernel_profile {
    double latency_min_ns, spread, t_min_ns, t_memory_ns, memory_bw_gbs, t_matmul_ns, t_elementwise_ns,
        speedup_vs_baseline, max_rel_l2;
    double machine_load; /* the load per CPU when it was measured (result.json) */
    double machine_slowdown, machine_spread, machine_spread_calibrated; /* the probe's (result.json) */
    long long repeats;
    char *bound; /* memory, matmul or elementwise: the roofline term that binds */
    cJSON *counters; /* a device's own profile counters (trn: the profiler's names), or NULL */
};

struct ao_beam_member {
    char *kernel_id, *sha256, *source, *parent, *plan, *plan_text, *slot;
    double latency_ns, pct_of_peak;
    long long iter; /* the iteration that measured it */
    struct ao_kernel_profile profile;
};

/* The beam, best first. */
struct ao_beam {
    int n;
    struct ao_beam_member m[AO_MAX_BEAM];
};

void ao_beam_init(struct ao_beam *b);
void ao_beam_release(struct ao_beam *b);
/* A stored beam (a JSON array of members): 0, or -1 + err (b released). */
int ao_beam_decode(const cJSON *j, struct ao_beam *b, char *err, size_t errlen);
/* The run's beam from the run store: 1, 0 for none (an empty beam), -1 the
 * store failed, AO_RC_CORRUPT it does not decode (both + err). */
int ao_beam_load(struct ao_runstore *rs, const char *run, struct ao_beam *b, char *err, size_t errlen);
/* As JSON: the beam, one member, one profile. */
cJSON *ao_beam_json(const struct ao_beam *b);
cJSON *ao_beam_member_json(const struct ao_beam_member *m);
cJSON *ao_kernel_profile_json(const struct ao_kernel_profile *p);
/* dst (empty) made a copy of src.  0, or -1 (dst empty) where src does
 * not read back as a member. */
int ao_beam_member_copy(struct ao_beam_member *dst, const struct ao_beam_member *src);
/* The member a correct result becomes, measured in iteration iter. */
void ao_beam_member_of(struct ao_beam_member *m, const struct ao_result_msg *r, long long iter);
void ao_beam_member_release(struct ao_beam_member *m);

#endif
