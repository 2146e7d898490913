/* selector.h - the selector's parts, shared by its files (selector.c: main and
 * the dispatch; store.c, outbox.c, start.c, results.c, fixes.c, acks.c,
 * clock.c); sel_* are the selector's own.  Linked by unit tests without
 * main (tests/unit/test_selector.c). */
#ifndef AO_SELECTOR_H
#define AO_SELECTOR_H

#include <cjson/cJSON.h>

#include "core/config.h"
#include "core/redis.h"
#include "state/beam.h"
#include "state/runstate.h"
#include "state/runstore.h"
#include "state/select.h"
#include "wire/io.h"
#include "wire/msg.h"
#include "wire/names.h"
#include "wire/runconfig.h"
#include "wire/sign.h"

#define FIX_DIAG_MAX 4000 /* bytes of diagnostics a fix request carries */

struct selector {
    struct ao_config *cfg;
    struct ao_redis *redis;
    struct ao_runstore *store;
    double last_tick;
    unsigned resumed; /* the transport's generation whose runs were resumed */
    struct warned { char run[200]; long mark, reasked; struct warned *next; } *warned;
    struct ao_sign_key key; /* a result counts only with a profiler's signature */
    int resend;             /* the broker lost what was in flight: every run's phase is sent again */
    double reask_s;         /* --reask-after: a phase missing results this long goes again (0: never) */
    unsigned kept;          /* the transport's generation whose runs' state and beam are kept */
    struct kept_slots *slots; /* the open iterations' results as decoded when they came (store.c) */
};

/* The slots of the open iteration: candidates x plans x samples (1x1x1 for
 * the baseline). */
struct shape {
    int ranks, plans, samples;
};

/* --- store.c --- */
double sel_now_s(void);
/* The run's effective config: its task's, completed with the selector's
 * defaults, then checked whole (wire/runconfig.h): a default out of bounds
 * is refused as a task's value would be.  0, or -1 + reason. */
int sel_run_config(struct selector *sel, const cJSON *given, struct ao_run_config *out, char *reason,
                   size_t len);
/* Does the run keep a memory (its scope is not "none")? */
int sel_memory_on(const struct ao_run_state *st);
/* How long an iteration waits for a missing result (the run's slot deadline). */
double sel_slot_deadline(const struct ao_run_state *st);
/* A config's integer, or def where it is absent. */
long long sel_int_or(long long v, long long def);
/* The run's state: 1, 0 for no such run (st is left empty), or -1 with the
 * store's failure in io, or a state that does not decode in reason. */
int sel_load_state(struct selector *sel, const char *run, struct ao_run_state *st, struct ao_io *io,
                   char *reason, size_t len);
/* The run's beam: 0 (an empty beam for none), or -1 as sel_load_state. */
int sel_load_beam(struct selector *sel, const char *run, struct ao_beam *b, struct ao_io *io,
                  char *reason, size_t len);
cJSON *sel_load_json(struct selector *sel, const char *run, const char *field, struct ao_io *io);
/* The runs' state and beam are kept between messages while this replica
 * owns the runs (ao_rs_keep), and so are the open iterations' results as
 * they were decoded when they came: a rebalance forgets them.  Before any
 * read. */
void sel_keep_fresh(struct selector *sel, struct ao_io *io);
/* Keep r, the result just stored as it came in the slot of slots_key (the
 * iteration's hash): r is taken (left empty).  Out of memory: not kept. */
void sel_keep_result(struct selector *sel, const char *slots_key, const char *slot,
                     struct ao_result_msg *r);
/* The kept result of that slot, taken out (1), else 0 (read it from the store). */
int sel_take_result(struct selector *sel, const char *slots_key, const char *slot,
                    struct ao_result_msg *r);
/* Forget the kept results of slots_key (its iteration closed); NULL: all. */
void sel_forget_results(struct selector *sel, const char *slots_key);
int sel_store_json(struct selector *sel, const char *run, const char *field, const cJSON *v,
                   struct ao_io *io);
int sel_store_state(struct selector *sel, const char *run, const struct ao_run_state *st,
                    struct ao_io *io);
int sel_save(struct selector *sel, struct ao_io *io);
/* Send the run's pending outbox, flush, and mark it sent. */
int sel_send_outbox(struct selector *sel, struct ao_io *io, const char *run, const cJSON *outbox);
/* Commit a step: the new state, the beam (NULL: as it is), the messages
 * it sends. */
int sel_step(struct selector *sel, struct ao_io *io, const char *run, const struct ao_run_state *st,
             const struct ao_beam *beam, const cJSON *outbox);
/* A fix request's step: its messages are not the phase's (sel_step). */
int sel_step_fix(struct selector *sel, struct ao_io *io, const char *run, const struct ao_run_state *st,
                 const cJSON *outbox);
void sel_out_add(cJSON *outbox, const char *topic, const struct ao_msg_type *t, const void *msg);
/* --- outbox.c --- */
/* How uncertain a measurement's median is, relative: 1.58 IQR/median over
 * the square root of the calls (the notched box plot's 95% interval of a
 * median); what separates two processes of one kernel comes on top as
 * AO_NOISE_FLOOR (select.h). */
double sel_median_u(double spread, long long repeats);
int sel_differs(const char *a, const char *b);
char *sel_dup_or_null(const char *s);
void sel_env_from(struct ao_env *env, const char *type, const char *id, const char *run,
                 const struct ao_run_state *st, long long iter);
int sel_add_done(struct selector *sel, cJSON *outbox, const char *run, struct ao_run_state *st,
                 const struct ao_beam *beam, const char *stopped, const char *reason);
/* The final head-to-head's result: the done message.  A result that is not
 * it is ignored as late (or refused as not asked for). */
int sel_on_final(struct selector *sel, struct ao_io *io, const char *run, struct ao_run_state *st,
                 const struct ao_result_msg *r, char *reason, size_t len);
/* Why the run must stop now, or NULL. */
const char *sel_budget_stop(struct selector *sel, const char *run, const struct ao_run_state *st);
/* Has the run's wall time run out?  (No store read: the clock asks every second.) */
int sel_wall_time_out(const struct ao_run_state *st);
/* What a done's stop means, where its word alone does not say it
 * ("exhausted": the search had nothing new to try); else NULL. */
const char *sel_stop_reason(const char *stopped);
/* After iteration `iter` (and its memory): the next iteration, or the end. */
int sel_advance(struct selector *sel, struct ao_io *io, const char *run, struct ao_run_state *st,
                const struct ao_beam *beam);
/* --- start.c --- */
int sel_on_task(struct selector *sel, struct ao_io *io, const cJSON *msg, char *reason,
                size_t len);
/* --- results.c --- */
/* "r.p.s" into its numbers; 0 or -1. */
int sel_parse_slot(const char *slot, int *r, int *p, int *s);
struct shape sel_shape_of(const struct ao_run_state *st);
/* Every slot of the iteration has its result: choose, then pairs or on. */
int sel_close_iteration(struct selector *sel, struct ao_io *io, const char *run, struct ao_run_state *st,
                        const struct ao_beam *beam, const char *slots_key);
/* --- compare.c --- */
/* Does the run decide on comparisons (its config's `compare`, on unless 0)? */
int sel_compare_on(const struct ao_run_state *st);
/* A child's head-to-head with its parent, from its result: 1 (c filled),
 * 0 none (not ok, measured alone, or voided: c->have is 0). */
int sel_compare_of(const struct ao_result_msg *r, struct ao_sel_cmp *c);
/* --- fixes.c --- */
int sel_on_result(struct selector *sel, struct ao_io *io, const cJSON *msg, char *reason,
                  size_t len);
/* --- acks.c --- */
int sel_on_experience(struct selector *sel, struct ao_io *io, const cJSON *msg, char *reason,
                      size_t len);
/* The stage's tick: deadlines and budgets of every run in flight. */
int sel_tick(void *ctx, struct ao_io *io);

#endif
