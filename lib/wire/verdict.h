/* verdict.h - what became of a kernel: the typed result statuses */
#ifndef AO_VERDICT_H
#define AO_VERDICT_H

/* AO_V_NONE is "no verdict yet" (0, so `if (status)` reads as "decided"). */
enum ao_verdict {
    AO_V_NONE,
    AO_V_OK,
    AO_V_COMPILE_ERROR,
    AO_V_INCORRECT,
    AO_V_TIMEOUT,
    AO_V_CRASH,
    AO_V_REJECTED,       /* broke a rule, or measured faster than the machine allows */
    AO_V_NO_CODE,        /* the executor produced no source */
    AO_V_INTERNAL_ERROR, /* the profiler itself failed */
    AO_V_LOST,           /* no result came before the slot deadline (the selector's) */
    AO_V_DUPLICATE,      /* the plan or kernel repeated an earlier one */
    AO_V_COUNT
};

/* The wire names, in enum order from AO_V_OK, NULL-terminated: verdict v
 * is ao_verdict_names[v - 1] (result.status's enum in schemas/result.json). */
extern const char *const ao_verdict_names[];

/* The name of v ("none" for AO_V_NONE or a value out of range). */
const char *ao_verdict_name(enum ao_verdict v);
/* The verdict of a wire name; AO_V_NONE if it is none of them. */
enum ao_verdict ao_verdict_of(const char *name);
/* A failure a model may be asked to fix: compile error, incorrect, time-out, crash. */
int ao_verdict_fixable(enum ao_verdict v);

/* Why the builtin planner gives no plan, in words for people: every knob
 * move was tried, or the kernel declares none.  Such a slot is the search
 * running out, not a kernel that failed: the plan, its kernel and its
 * result say so in a field of their own ("exhausted"), and nothing decides
 * on these words. */
#define AO_SEARCH_NO_MORE_MOVES "the builtin planner has no more knob moves for this kernel"
#define AO_SEARCH_NO_KNOBS "the kernel declares no knobs the builtin planner can move"

#endif
