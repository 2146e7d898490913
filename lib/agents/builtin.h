/* builtin.h - the builtin offline model (docs/AGENTS.md): a small,
 * deterministic search over the knobs a kernel declares, ranked by memory */
#ifndef AO_BUILTIN_H
#define AO_BUILTIN_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "agents/extract.h"

#define AO_MAX_KNOBS 16
#define AO_MAX_KNOB_VALUES 16

/* A knob: `#define NAME value  /\* knob: v1 v2 ... (note) *\/`. */
struct ao_knob {
    char name[32];
    int nvalues, cur;                       /* cur: index of the value, -1 if not listed */
    char values[AO_MAX_KNOB_VALUES][24];
    size_t off, len;                        /* where the value is in the source */
};

/* The knobs of a source, in order; returns how many (at most max). */
int ao_knobs_parse(const char *src, struct ao_knob *k, int max);

/* One plan of the builtin planner: move a knob `step` places along its
 * allowed values (up when positive). */
struct ao_move {
    char knob[32];
    int step;
};

/* Rank the moves of a source and fill at most n of them, best first:
 * moves that sped kernels up before (memory items with a "move", from this
 * task at full weight and from other tasks of the target at half) first,
 * untried moves next (every fourth plan explores one at random), moves whose
 * reverse sped kernels up last.  A move one of the ntried plans taken from
 * this source before made (its `move:` line) is not proposed again.
 * Deterministic for a seed.  Returns how many moves there were. */
int ao_builtin_plan(const char *src, const char *task, const cJSON *memory, unsigned long long seed,
                    const char *const *tried, int ntried, struct ao_move *moves, int n);

/* The plan text for a move of a source: a sentence for people and the
 * machine-readable line "move: NAME +STEP".  Caller frees. */
char *ao_builtin_plan_text(const char *src, const struct ao_move *m, const char *task,
                           const cJSON *memory);

/* Carry out a plan on a source: sample 0 takes the planned step, sample k
 * goes k places further the same way (clamped to the allowed values).
 * Returns the new source (caller frees) or NULL + reason. */
char *ao_builtin_apply(const char *src, const char *plan, int sample, char *reason, size_t len);

/* Distil a slow->fast pair whose sources differ in one knob: fills s and
 * returns the move as {"knob", "step", "from", "to"} (caller deletes); NULL
 * + reason (s->none set) when no single knob tells them apart. */
cJSON *ao_builtin_summarize(const char *slow, const char *fast, const char *task,
                            double speedup, const char *direction, struct ao_summary *s,
                            char *reason, size_t len);

#endif
