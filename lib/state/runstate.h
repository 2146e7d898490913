/* runstate.h - a run's state as the selector keeps it (the run hash's
 * "state" field, docs/PROTOCOL.md): where the run stands, its counts, its
 * clock, its config.  Decoded whole where it is read and encoded whole where
 * a step is taken, by the field tables of msg.h; nothing reads it by key
 * name.  `accelopt status` and the report read the same record. */
#ifndef AO_RUNSTATE_H
#define AO_RUNSTATE_H

#include <cjson/cJSON.h>

#include "state/runstate.h"
#include "state/runstore.h"
#include "wire/msg.h"
#include "wire/runconfig.h"

/* Where a run stands (its "phase", by name: `accelopt status` and the
 * report show it). */
enum ao_phase {
    AO_PHASE_NONE,     /* no run, or a state without a phase */
    AO_PHASE_BASELINE, /* the baseline sent, its result awaited */
    AO_PHASE_COLLECT,  /* an iteration open: its slots' results come in */
    AO_PHASE_COMPARE,  /* a run from before issue 66: its children measured again beside their parents (its clock closes it) */
    AO_PHASE_MEMORY,   /* the iteration's pairs sent, their summaries awaited */
    AO_PHASE_FINAL,    /* the best kernel against the baseline, head to head */
    AO_PHASE_DONE,     /* the done message sent */
    AO_PHASE_COUNT
};

/* Absent fields are AO_ABSENT_INT, NAN, NULL, -1 (the boolean) and
 * AO_PHASE_NONE. */
struct ao_run_state {
    enum ao_phase phase;
    char *task, *target, *size, *task_path, *task_sha256;
    char *baseline_sha256;           /* the one kernel iteration 0 takes */
    char *final_stop, *final_kernel; /* phase final: why the search stopped, the kernel measured */
    char *stopped;                   /* phase done: why the run ended */
    long long iter;                  /* the open (or last) iteration; 0 is the baseline's */
    long long completed;             /* iterations whose beam is chosen */
    long long candidates;            /* the open iteration's candidates */
    long long kernels, failures, lost; /* results counted so far, failed, never came */
    double baseline_ns;              /* the baseline's latency, from iteration 0 */
    double started, opened, progress; /* the run's start, its iteration's, its last result's (epoch s) */
    double deadline;                 /* phase memory: when the run goes on without its acks */
    int memory_deadline_missed;      /* a boolean: -1 absent */
    cJSON *history;                  /* array: each closed iteration, as `done` carries it */
    cJSON *pairs;                    /* array: the pair ids phase memory waits for */
    cJSON *compares;                 /* array: the slots phase compare waits for */
    struct ao_run_config config;     /* the task's config, completed with the selector's defaults */
};

extern const struct ao_msg_type ao_rec_run_state;

/* The name of p ("none" for AO_PHASE_NONE or out of range). */
const char *ao_phase_name(enum ao_phase p);

void ao_run_state_init(struct ao_run_state *s);
void ao_run_state_release(struct ao_run_state *s);
/* Decode a stored state: every field of its type, the config within its
 * bounds, no unknown field, the fields every run has present.  0, or -1 +
 * err (s released). */
int ao_run_state_decode(const cJSON *j, struct ao_run_state *s, char *err, size_t errlen);
/* s as a JSON object (absent fields left out). */
cJSON *ao_run_state_json(const struct ao_run_state *s);
/* A run's state from the run store: 1 decoded, 0 no such run (s left
 * empty), -1 the store failed, AO_RC_CORRUPT it does not decode (both + err). */
int ao_run_state_load(struct ao_runstore *rs, const char *run, struct ao_run_state *s, char *err,
                      size_t errlen);
/* The last entry of the history (the iteration closed last), or NULL. */
cJSON *ao_run_state_last(const struct ao_run_state *s);

#endif
