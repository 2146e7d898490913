/* phase.h - where a run stands, as the selector keeps it in the run's state
 * (its "phase", by name: `accelopt status` and the report show it) */
#ifndef AO_PHASE_H
#define AO_PHASE_H

#include <cjson/cJSON.h>

enum ao_phase {
    AO_PHASE_NONE,     /* no run, or a state without a phase */
    AO_PHASE_BASELINE, /* the baseline sent, its result awaited */
    AO_PHASE_COLLECT,  /* an iteration open: its slots' results come in */
    AO_PHASE_MEMORY,   /* the iteration's pairs sent, their summaries awaited */
    AO_PHASE_FINAL,    /* the best kernel against the baseline, head to head */
    AO_PHASE_DONE,     /* the done message sent */
    AO_PHASE_COUNT
};

/* The name of p ("none" for AO_PHASE_NONE or out of range). */
const char *ao_phase_name(enum ao_phase p);
/* The phase of a run's state object (AO_PHASE_NONE when it has none, or
 * one of another name). */
enum ao_phase ao_phase_of(const cJSON *state);
/* Set the state's phase.  0, or -1 out of memory. */
int ao_phase_set(cJSON *state, enum ao_phase p);

#endif
