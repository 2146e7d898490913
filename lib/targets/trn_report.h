/* trn_report.h - what the Neuron tools say of an NKI kernel, read: the
 * failure class of a compiler or runtime message (docs/TARGETS.md, "Device facts"), and
 * the counters of a `neuron-profile view --output-format summary-json`
 * (docs/TARGETS.md, "Device facts").  Pure functions of text: tested here on
 * recorded fixtures of the documented shapes (tests/fixtures/trn). */
#ifndef AO_TRN_REPORT_H
#define AO_TRN_REPORT_H

#include <stddef.h>

#include <cjson/cJSON.h>

/* The failure class of a message from neuronx-cc, the NKI frontend, the
 * runtime or accelopt's NKI host emulation: sbuf_overflow, psum_overflow,
 * partition_limit, shape_limit, memory_space, output_dependency,
 * out_of_bounds, internal_compiler, api_version, device_oom, timeout,
 * no_kernel, or other.  code gets the tool's own code where the message
 * has one ("GCA035", "err_out_of_bound_access"), else "". */
const char *ao_trn_failure_class(const char *text, char *code, size_t codelen);

/* The counters AccelOpt shows its planner (docs/TARGETS.md), by the
 * profiler's own names, in its order. */
#define AO_TRN_NCOUNTERS 16
extern const char *const ao_trn_counter_names[AO_TRN_NCOUNTERS];

struct ao_trn_summary {
    double total_time_s;                /* on-device time of the execution */
    double counter[AO_TRN_NCOUNTERS];   /* NAN where the summary has none */
    int percent_scale;                  /* 1: the *_percent fields were 0-100, now fractions */
};

/* Read one summary-json: a JSON object whose first member is the summary
 * object (or an array holding it).  The *_percent fields become fractions
 * of 1: their scale is decided from hfu_estimated_percent against
 * hardware_flops / total_time and the TensorE's peak (peak_flops, the
 * profiler's own, per NeuronCore; 0: from the fields' range).  0, or -1 +
 * err when there is no positive total_time. */
int ao_trn_summary_parse(const char *json, double peak_flops, struct ao_trn_summary *s, char *err,
                         size_t errlen);

/* The counters as a JSON object (the profiler's names; fractions for the
 * *_percent fields; absent ones left out). */
cJSON *ao_trn_counters_json(const struct ao_trn_summary *s);

#endif
