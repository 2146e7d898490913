/* msg.h - the wire messages (docs/PROTOCOL.md, "Messages"), mirrored from schemas/ */
#ifndef AO_MSG_H
#define AO_MSG_H

#include <limits.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "wire/record.h"

#define AO_MSG_VERSION 1
/* The envelope every message starts with. */
struct ao_env {
    char *type, *id, *run, *task, *target;
    char *sig; /* "hmac-sha256:<hex>" over the rest (sign.h); checked by the transport */
    long long v, iter;
};

struct ao_task_msg {
    struct ao_env env;
    char *spec, *size;
    cJSON *spec_inline, *config;
};

struct ao_candidate_msg {
    struct ao_env env;
    char *source, *sha256, *kernel_id, *size, *task_path, *task_sha256;
    long long rank;
    double latency_ns, pct_of_peak, baseline_latency_ns;
    cJSON *profile, *config;
};

struct ao_plan_msg {
    struct ao_env env;
    char *candidate_id, *candidate_sha256, *text, *error, *source, *size, *task_path, *task_sha256,
        *model;
    char *duplicate_of;                 /* an earlier plan's id: not sent to the executor's model */
    int exhausted;                      /* 1: no plan because the search is out of moves (-1 absent) */
    char *failed_source, *diagnostics;  /* a fix request: the kernel that failed, and why */
    long long index, rank, sample, attempt; /* a fix request names its slot's sample, attempt >= 2 */
    cJSON *memory_seen, *tokens, *config;
    double cost_usd, parent_latency_ns, baseline_latency_ns;
};

struct ao_kernel_msg {
    struct ao_env env;
    char *source, *sha256, *parent, *plan, *plan_text, *slot, *size, *task_path, *task_sha256,
        *error, *model;
    char *duplicate_of; /* the earlier plan or kernel it repeats: not profiled */
    int exhausted;      /* 1: no source because its plan's search is out of moves (-1 absent) */
    char *notes;        /* the model's words before its code: what it did beyond the plan */
    char *baseline_source; /* set: measure head to head against this (the parent, or the baseline at the run's end) */
    long long attempt;  /* 1, or the fix attempt */
    double parent_latency_ns, baseline_latency_ns, cost_usd;
    cJSON *tokens, *memory_seen; /* memory_seen: from the plan */
};

struct ao_result_msg {
    struct ao_env env;
    char *kernel_id, *sha256, *parent, *slot, *size, *status, *reason, *bound,
        *diagnostics, *calibration, *source, *plan, *plan_text, *task_sha256, *model;
    double latency_ns, latency_min_ns, spread, t_min_ns, pct_of_peak, speedup,
        speedup_vs_baseline, max_rel_l2, tolerance;
    double t_memory_ns, t_matmul_ns, t_elementwise_ns; /* the roofline's three terms */
    double memory_bw_gbs; /* the bandwidth t_memory_ns takes (the calibration's, for a working set that size) */
    double machine_load; /* the 1-minute load average per CPU when it was measured */
    double machine_slowdown, machine_spread, machine_spread_calibrated; /* the probe's, measurement.h */
    long long repeats, wall_ns, attempt, attempts;
    int steady, cached;
    cJSON *rel_l2, *sandbox, *timing, *tokens, *fixes, *memory_seen;
    char *notes; /* the kernel's: the model's words on what it did beyond the plan */
    cJSON *head_to_head; /* the final measurement against the baseline, if asked */
    cJSON *device_profile; /* the device's own timing and counters (trn) */
    cJSON *failure;        /* a failure's class and code (trn) */
    int exhausted; /* 1: no kernel because the search is out of moves, not a failure (-1 absent) */
};

struct ao_pair_msg {
    struct ao_env env;
    char *slow_source, *fast_source, *slow_sha256, *fast_sha256, *direction, *plan;
    char *shape; /* the size the pair was measured at: "tiny: M=64 N=64 K=64" */
    double speedup, speedup_spread;
    double speedup_low, speedup_high; /* head to head: the speedup's 95% interval */
    cJSON *slow_profile, *fast_profile, *config;
};

struct ao_experience_msg {
    struct ao_env env;
    char *pair_id, *title, *summary, *before, *after, *direction, *slow_sha256,
        *fast_sha256, *created_at, *item_id, *reason, *model;
    double speedup, speedup_spread, speedup_low, speedup_high, cost_usd;
    int stored;
    cJSON *move, *tokens;
};

struct ao_done_msg {
    struct ao_env env;
    char *stopped, *reason;
    cJSON *best, *history, *tokens;
    long long iterations, kernels_evaluated, slots_lost;
    /* the run's report writes these into done.json (the table's counts);
     * the selector's message leaves them absent */
    long long kernels_failed, kernels_duplicate;
    long long kernels_distinct, kernels_repeated, slots_empty; /* done.json's counts (the report's) */
    double cost_usd, speedup, pct_of_peak, baseline_latency_ns, slot_deadline_s;
    double speedup_low, speedup_high, search_speedup; /* the head-to-head's interval; the search's figure */
    /* the quoted figures, all from one measurement (the final head-to-head
     * where there was one); the search's own, labelled as such */
    double best_latency_ns, baseline_pct_of_peak, search_baseline_latency_ns;
    cJSON *head_to_head; /* the final head-to-head's figures, as measured */
    char *speedup_method; /* head_to_head, baseline (nothing beat it), no_gain, search or none */
    int memory_deadline_missed;
};

/* A memory item as `accelopt memory export` writes it and import reads it:
 * the item the summarizer stored, with the envelope's type and v. */
struct ao_memory_item_msg {
    struct ao_env env;
    char *pair_id, *title, *summary, *before, *after, *direction, *slow_sha256, *fast_sha256,
        *created_at, *plan, *model, *imported_at, *origin, *shape;
    double speedup, speedup_spread, speedup_low, speedup_high;
    cJSON *move;
    long long evidence;   /* pairs that taught it (state/memfold.h; absent: 1) */
    cJSON *evidence_ids;  /* the ids of the items folded into it */
};

struct ao_dlq_msg {
    struct ao_env env;
    char *stage, *reason, *payload, *received_at, *source_topic;
    long long payload_bytes;  /* the refused message's full size */
    char *payload_sha256;     /* and its hash: payload is a bounded excerpt */
};

extern const struct ao_msg_type ao_msg_task, ao_msg_candidate, ao_msg_plan, ao_msg_kernel,
    ao_msg_result, ao_msg_pair, ao_msg_experience, ao_msg_done, ao_msg_dlq, ao_msg_memory_item;

/* All message types, NULL-terminated, and lookup by name. */
extern const struct ao_msg_type *const ao_msg_types[];
const struct ao_msg_type *ao_msg_type_find(const char *name);

#define AO_RUN_ID_MAX 128
#define AO_MSG_ID_MAX 512
/* Is run a valid run id: 1 to AO_RUN_ID_MAX of [A-Za-z0-9._-], starting
 * with a letter or digit?  1 or 0. */
int ao_run_id_valid(const char *run);
/* A slot "rank.plan.sample" in canonical form (no sign, no leading zero,
 * each under 10000) into its numbers; 0 or -1. */
int ao_slot_parse(const char *slot, int *r, int *p, int *s);

/* Parse one message's raw text strictly: valid UTF-8 with no NUL and no
 * \u0000 escape, one JSON value with nothing after it, no key twice in an
 * object.  NULL with the reason in err. */
cJSON *ao_msg_parse(const char *raw, size_t len, char *err, size_t errlen);
int ao_msg_check_raw(const char *raw, size_t len, char *err, size_t errlen);
/* Length of the UTF-8 sequence at p (at most n bytes), 0 if invalid:
 * overlong forms, surrogates and code points past U+10FFFF are invalid. */
size_t ao_utf8_len(const unsigned char *p, size_t n);

/* Decode a JSON object into msg (initialised here).  Returns 0, or -1 with
 * err saying which field is wrong (the message goes to the dead letters). */
int ao_msg_decode(const struct ao_msg_type *t, const cJSON *j, void *msg,
                  char *err, size_t errlen);

/* A member of a JSON object: the number, or def when absent or not a
 * number; the string, or def. */
double ao_json_num(const cJSON *o, const char *name, double def);
const char *ao_json_str(const cJSON *o, const char *name, const char *def);

/* Fill an envelope; strings are copied. */
void ao_env_set(struct ao_env *env, const char *type, const char *id, const char *run,
               const char *task, const char *target, long long iter);

#endif
