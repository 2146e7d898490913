/* measurement.h - what the profiler found of one kernel, apart from any
 * message: its verdict and its numbers.  The profiler fills one, the
 * profile cache keeps one (as JSON, by the field tables of msg.h), and
 * ao_result_of is the one place a result message is made from one. */
#ifndef AO_MEASUREMENT_H
#define AO_MEASUREMENT_H

#include <cjson/cJSON.h>

#include "wire/msg.h"
#include "wire/verdict.h"

struct ao_measurement {
    enum ao_verdict verdict;
    char *reason, *diagnostics;
    char *bound;       /* memory, matmul or elementwise: the roofline's largest term */
    char *calibration; /* the id of the peaks pct_of_peak is of */
    double latency_ns, latency_min_ns, spread; /* median, minimum, IQR/median of the timed calls */
    double t_min_ns, t_memory_ns, t_matmul_ns, t_elementwise_ns, pct_of_peak;
    double memory_bw_gbs; /* the bandwidth t_memory_ns takes: measured here for a working set of that size */
    double max_rel_l2, tolerance;
    /* the 1-minute load average per online CPU when it was measured: how
     * busy the machine was (issue 47: a model read drift as regressions) */
    double machine_load;
    /* the machine probe (probe.h) timed right after it: its mean round
     * against the calibration's (1 = as quiet as when calibrated), and its
     * spread now and then */
    double machine_slowdown, machine_spread, machine_spread_calibrated;
    long long repeats, wall_ns;
    int steady; /* the spread came under the target (-1: not measured) */
    cJSON *rel_l2, *sandbox, *timing;
    cJSON *head_to_head; /* the final measurement against the baseline: speedup and its interval */
    /* a device that times itself (trn): where the latency came from, how
     * many executions, and the profile's counters */
    cJSON *device_profile;
    cJSON *failure; /* a failure's class and code, where the target reads them (trn) */
};

/* Its fields, for ao_msg_init/release/encode and ao_record_decode. */
extern const struct ao_msg_type ao_rec_measurement;

/* Set every field absent (no verdict, NAN numbers). */
void ao_measurement_init(struct ao_measurement *m);
void ao_measurement_release(struct ao_measurement *m);
/* The measurement's own verdict, failed by the profiler itself. */
void ao_measurement_fail(struct ao_measurement *m, const char *why);

/* The result of kernel k: the envelope and provenance from k, the numbers
 * from m, the speedups over k's parent and baseline latencies (a final
 * head-to-head's from its own paired rounds), sha256 the hash of the source
 * measured (k's own when it has none), task_sha256 of the task it was
 * measured against (or NULL).  r is initialized here.  0, or -1 (out of
 * memory, or an id too long: err). */
int ao_result_of(const struct ao_kernel_msg *k, const struct ao_measurement *m, const char *sha256,
                 const char *task_sha256, int cached, struct ao_result_msg *r, char *err,
                 size_t errlen);

#endif
