/* profiler_int.h - the profiler's parts, shared by its files (profile.c the
 * policy, h2h.c, pools.c, inputs.c, drive.c, timing.c, spots.c, tensors.c);
 * not an API: prof_* are internal to lib/profiler, whose API is profile.h
 * and profstage.h. */
#ifndef AO_PROFILER_INT_H
#define AO_PROFILER_INT_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "core/rng.h"
#include "core/task.h"
#include "core/util.h"
#include "measure/calib.h"
#include "measure/job.h"
#include "profiler/profile.h"
#include "measure/stats.h"

#define NOMINAL_CHECKS 3
#define PASSED_MAX 64 /* sources a pool remembers passing its check sets */
/* Timed calls checked against the reference: a uniform sample of all of
 * them (reservoir sampling, decided by our generator before each call), so
 * every timed call is equally liable, whenever the timing ends.  A kernel
 * wrong on a fraction f of its timed calls passes with probability
 * (1-f)^CHECKED_TIMED: 1.6% at f = 1/2, and it must be fast on over half of
 * them to move the median.  Cost: this many reference calls per measurement
 * (docs/BENCHMARKS.md). */
#define CHECKED_TIMED 6
/* The final head-to-head checks more of its rounds: its figure is the one
 * quoted, it runs once per task, and its budget of reference time is
 * scaled to match: (1-f)^12 is 0.07% at f = 0.45 (issue 46) */
#define CHECKED_H2H 12
#define CHECKED_MAX CHECKED_H2H
/* ... but never more reference time than this per measurement (a slow
 * reference at a large size: silu at the cpu size takes ~0.5 s a call),
 * and never fewer than CHECKED_MIN: (1-f)^3 is 12.5% at f = 1/2 */
#define CHECKED_MIN 3
#define CHECK_BUDGET_S 2.0
#define POOLS_MIN_BYTES (3ull << 30) /* older pools are dropped past this, or a quarter of memory */
#define STRESS_CHECK 2 /* this check set draws from the stress distributions */
/* A head-to-head's opening rounds at most (h2h.c opening): the check sets
 * before the stress one, at the nominal shape, drawn as timed inputs are */
#define OPENING_ROUNDS 2
_Static_assert(OPENING_ROUNDS <= STRESS_CHECK, "opening rounds are on nominal check sets");
#define WAKE_ROUNDS 31 /* wake-up samples before the kernel's first call */
#define WAKE_SAMPLES_MAX AO_JOB_WAKES /* and one before each timed call */
/* A call under the roofline is impossible, but the peaks are measured too:
 * only a call this much under it is refused (cheats skip far more work). */
#define ROOFLINE_SLACK 0.05
#define FRESH_CALIB_S 300 /* a fresh measurement of the machine stands this long */
#define DIAG_MAX 3000

/* One set of tensors: inputs, and the reference outputs where known. */
struct dataset {
    long long dims[AO_MAX_DIMS];
    float *t[AO_MAX_TENSORS];
};

/* Inputs and references for one task and size, kept for the profiler's life. */
struct pool {
    struct pool *next;
    char key[700];
    struct ao_task task;
    long long dims[AO_MAX_DIMS];
    struct dataset check[NOMINAL_CHECKS + 1]; /* the last one at another shape */
    int nchecks;
    char harness[600];                        /* the target's trusted part of the runner */
    char refdir[700];                         /* the reference, built, for the timed checks */
    long long ref_ns;                         /* its fastest call at the nominal shape */
    /* on a device that times itself: what the host's clock adds to the
     * device's time around one execution of the (trusted) reference at
     * the nominal shape, the median of its profiled calls; 0 unknown */
    long long launch_ns;
    size_t bytes;                             /* memory its tensors hold */
    /* the reference's process for the timed calls' checks, kept up
     * between profiles (prof_ref_outputs): one pool's at a time */
    struct ao_job ref;
    int ref_up;
    int ref_starts; /* how many it took so far (timing.reference_starts) */
    /* the sources that passed these check sets (prof_correctness), the
     * latest PASSED_MAX, with what the sets found */
    struct passed {
        char digest[65];
        double max_err;
        cJSON *errors;
    } passed[PASSED_MAX];
    int passed_next;
};

struct ao_profiler {
    struct ao_profiler_opts o;
    const struct ao_target *tg;
    struct pool *built; /* a build-only harness, kept for the next build of its task */
    char root[600];
    struct pool *pools;
    /* two random streams: rng draws the inputs (which a kernel sees),
     * choice draws every decision a kernel must not predict (which calls
     * are checked, the order of a round, the placement of tensors, the
     * unannounced check shape), so no output of the one tells the other */
    struct ao_rng rng, choice;
    int draw_parts; /* a large timed draw's parts, each on a thread (prof_draw_parts) */
    void *bpf;
    size_t bpf_len;
    unsigned seq;
    struct ao_calib fresh; /* the machine measured again, for a kernel under the roofline */
    long long fresh_at;    /* when (0: never) */
};

/* The timing of one measurement */
/* Profiled executions read per measurement on a device that times itself
 * (target.h device_time: each a neuron-profile view, seconds), chosen at
 * random among all the timed ones after they ran. */
#define DEVICE_VIEWS 10

/* Sampled calls voided because the profiler was away at their `done`
 * (job.h watch_void), each replaced by another: at most this many per
 * measurement, past which they count as any call (a machine that busy is
 * reported: timing.calls_voided) */
#define WATCH_VOIDS_MAX 64

/* What a measurement's checks at secret positions came to (spots.c). */
struct spots_tally {
    int calls;           /* checked */
    long long positions; /* output elements a call */
    long long ns;        /* gathering, the small problems, the comparisons */
    double max_err;      /* the largest relative L2 error of a call */
};

struct timed {
    struct ao_stats st;   /* the latency: the profiler's clock, or the device's own */
    struct ao_stats host; /* the profiler's clock, where the device's is the latency */
    cJSON *profile;       /* the device's profile of the median execution viewed */
    int views, profiled;  /* executions viewed, of those profiled */
    struct ao_stats device; /* the runner's own timer (a GPU's events), if it has one */
    struct ao_stats events; /* a cuda runner's CUDA events around each call, beside */
    long long kernel_ns; /* total time inside kernel calls, checks included */
    long long wake_ns;   /* taken off every call: continuing the stopped runner */
    long long wake_u_ns; /* how sure that is: the lowest wake-ups' own spread */
    long long check_ns;  /* checking the sampled timed calls against the reference */
    /* the runner's own clock (prof_runner_clock), where it is the latency:
     * which (the header's device_clock), how many calls our clock raised,
     * and the allowance it was held to (the reference's launch overhead) */
    int clock, raised;
    long long launch_ns;
    long long empty_dev_ns; /* the empty call's device time, taken off each call's */
    int voided;          /* sampled calls voided and drawn again (WATCH_VOIDS_MAX) */
    struct spots_tally spots;
};

/* Which timed call each kept sample came from, the state of the input
 * generator its inputs were drawn from (drawn again, the same, for the
 * reference: 32 bytes kept instead of a set of inputs, 117 MB for silu)
 * and the kernel's outputs (out[k].t[ninputs..]). */
struct sample {
    int call[CHECKED_MAX];
    struct ao_rng seed[CHECKED_MAX];
    struct dataset out[CHECKED_MAX];
    int n;    /* kept so far */
    int size; /* to keep (sample_size) */
    long long check_ns; /* what checking them took */
};

/* --- tensors.c --- */
/* n floats, 64-byte aligned, not zeroed: a freed one of the same size
 * where one is kept (no fresh pages to fault in), else new.  NULL when
 * out of memory. */
float *prof_tensor_alloc(size_t n);
void prof_tensor_free(float *p);
/* every kept block given back (the profiler's end) */
void prof_tensors_release(void);

/* --- inputs.c --- */
void prof_fill(struct ao_rng *r, const struct ao_dist *x, float *p, size_t n);
/* Inputs of timed calls, drawn fresh for every call from generators seeded
 * secretly for that call; the verified timed sets are drawn the same way,
 * so a kernel cannot tell a checked timed call from an unchecked one. */
void prof_fill_timed(struct ao_rng *r, const struct ao_dist *x, float *p, size_t n);
/* the same over up to `threads` threads (large tensors only): a device
 * target's, whose inputs need not start in the runner's core's caches */
void prof_fill_timed_wide(struct ao_rng *r, const struct ao_dist *x, float *p, size_t n,
                          int threads);
/* How many parts a timed draw of n values is cut into (each drawn on a
 * thread of its own, from a generator of its own): a device target's as
 * prof_host_threads; a host kernel's large draw (past the caches, issue
 * 66) over draw_parts, small ones whole from the runner's core.  A draw
 * and its redraw to compare take the same parts, so the same values. */
int prof_timed_parts(const struct ao_target *tg, int draw_parts, size_t n);
/* A profiler's draw_parts: every core it may use (eight at most) where it
 * is the machine's one unpinned profiler; 1 where it is pinned (the other
 * cores time other profilers' kernels) or its target's tensors are copied
 * to a device (prof_host_threads then) */
int prof_draw_parts(const struct ao_profiler_opts *o, const struct ao_target *tg);
/* The parts of a pass over n values of a job's tensors between its calls
 * (copies, poison, comparisons; the runner stopped): as its timed draws */
int prof_pass_parts(const struct ao_job *j, size_t n);
/* d = s, n floats, over up to `threads` threads; by streaming stores where
 * n is past the caches */
void prof_copy_wide(float *d, const float *s, size_t n, int threads);
/* Do a and b differ anywhere in n floats (bit for bit)?  Over threads. */
int prof_differ_wide(const float *a, const float *b, size_t n, int threads);
/* prof_fill over up to `threads` threads (the check sets of a device target) */
void prof_fill_wide(struct ao_rng *r, const struct ao_dist *x, float *p, size_t n, int threads);
/* n floats at p set to the bit pattern word, over up to `threads` threads */
void prof_poison(float *p, size_t n, uint32_t word, int threads);
/* ||k - r|| / ||r|| in double (||k - r|| where r is all zero), +inf where k
 * has a value not finite; over up to `threads` threads */
double prof_rel_l2(const float *k, const float *r, size_t n, int threads);
/* how many threads those may use for this target (1: the cpu's; drive.c) */
int prof_host_threads(const struct ao_target *tg);
/* d's tensors at dims, which: PROF_INPUTS, PROF_OUTPUTS or both (those d
 * has already are kept).  0, or -1 out of memory. */
#define PROF_INPUTS 1
#define PROF_OUTPUTS 2
int prof_dataset_alloc(const struct ao_task *t, struct dataset *d, const long long *dims, int which);
/* A timed call's inputs drawn from the generator r into d (the same state
 * draws the same values) */
void prof_draw_timed(struct ao_rng *r, const struct ao_profiler *p, const struct ao_task *t,
                     struct dataset *d);
void prof_dataset_free(struct dataset *d);
/* Compare outputs of a call against a reference; sets j->status on failure. */
int prof_check_outputs(struct ao_job *j, const struct ao_task *t, float **out,
                       const struct dataset *ref, const char *set, cJSON *errors,
                       double *max_err);

/* --- drive.c --- */
/* The one rule checked on the source text: its size. */
int prof_static_check(const char *src, char *reason, size_t len);
/* A fresh job directory holding the kernel source and the task's harness. */
int prof_prepare_job(struct ao_profiler *p, struct pool *pl, struct ao_job *j, const char *source,
                     char *err, size_t errlen);
/* The hashes of the harness files in a job directory, appended to b: with
 * the target's basis and the source, all a trusted build depends on. */
void prof_harness_basis(const struct ao_profiler *p, const char *dir, struct ao_buf *b);
/* Build the job's kernel into its runner inside a sandbox, then apply the
 * target's rules to what was built.  On a verdict (compile error, rejected
 * object) sets j->status; -1 only on our failure. */
int prof_compile_job(struct ao_profiler *p, struct ao_job *j, char **diag, long long *compile_ns,
                     char *err, size_t errlen);
/* One empty command, timed the way a real call is: kept as a sample, the
 * estimate lowered to it if lower.  0 or -1. */
int prof_wake_sample(struct ao_job *j, const char *phase);
int prof_measure_wake(struct ao_job *j);
/* One call: inputs written (copied from in[], or drawn fresh from rng when
 * in is NULL), outputs poisoned, both handed to the runner's device by the
 * target, the call timed by ao_job_run; where out is given, every tensor
 * brought back and the outputs copied out into out[] while the runner is
 * stopped (a device's tensors stay there otherwise).
 * Returns elapsed ns, or -1 with j->status set. */
long long prof_job_call(struct ao_job *j, const long long *dims, float *const *in,
                        struct ao_rng *rng, uint32_t poison, float **out, const char *phase);
/* ... and with note, each input told to note->fn once in place (spots.c
 * notes the elements it will hold), and the call watched as one whose
 * outputs are read.  A callback: the job's driver knows nothing of what
 * is noted, so it needs nothing above it. */
struct prof_note {
    void (*fn)(void *ctx, int i, const float *x);
    void *ctx;
};
/* poison for the rounds whose kernel's calls are checked at secret
 * positions (spots.c): none, on both sides alike.  An output the kernel
 * leaves holds its last call's value, wrong for the new inputs, and the
 * poison's pass over the outputs cost as much as drawing the inputs
 * (issue 66: 20 ms a call for silu at the cpu size) */
#define PROF_NO_POISON 0u
long long prof_job_call_guarded(struct ao_job *j, const long long *dims, float *const *in, struct ao_rng *rng,
                                uint32_t poison, float **out, const struct prof_note *note, const char *phase);
/* Did the call leave its inputs as they were given?  Names the first one not. */
const char *prof_inputs_changed(struct ao_job *j, const long long *dims, float *const *in);
/* Start a job's runner with a fresh secret order of tensor positions. */
int prof_start_job(struct ao_profiler *p, struct ao_job *j, const struct ao_task *t,
                   const long long *dims, double timeout_s, int hold, char *err, size_t errlen);

/* --- pools.c --- */
/* The kept reference process on one problem of the task's kind at sizes
 * d->dims no larger than the pool's (spots.c): d's inputs in, its outputs
 * out.  0, or -1 + err. */
int prof_ref_call(struct ao_profiler *p, struct pool *pl, struct dataset *d, char *err, size_t errlen);
/* The reference's outputs for n sets of inputs, in a process of the
 * pool's built reference, kept for the next profile of the task (issue
 * 71: a CUDA context and a pinned region each time cost a GPU profile up
 * to a second), one pool's at a time; a kept one that fails is started
 * afresh and the set tried again.  draw(ctx, k, in) writes set k's inputs into in
 * (the task's inputs at the nominal shape), and each(ctx, k, ref) gets the
 * reference's outputs on them (ref's outputs hold set k's until the next)
 * and returns -1 to stop there (it found a verdict).  0, or -1 + err when
 * the reference itself failed. */
int prof_ref_outputs(struct ao_profiler *p, struct pool *pl, int n,
                     void (*draw)(void *ctx, int k, struct dataset *in),
                     int (*each)(void *ctx, int k, const struct dataset *ref), void *ctx,
                     char *err, size_t errlen);
/* The target's trusted part of the task's runner, in a directory of its own. */
int prof_build_harness(struct ao_profiler *p, struct pool *pl, char *err, size_t errlen);
void prof_pool_free(struct pool *pl);
struct pool *prof_pool_get(struct ao_profiler *p, const struct ao_task *t, const char *size,
                           char *err, size_t errlen);

/* --- profile.c: what a lone measurement and a head-to-head (h2h.c) share --- */
/* *dst = a copy of s (NULL: none). */
void prof_set_str(char **dst, const char *s);
/* The result's verdict from the job's: status, reason, the errors of the
 * checks (taken from *errors), the wall time since t0, how busy the
 * machine was. */
void prof_set_verdict(struct ao_measurement *r, const struct ao_job *j, const struct ao_task *t,
                      const struct ao_calib *c, double max_err, cJSON **errors, long long t0);
/* The roofline held at min_ns (profile.c says how): 0, with j->status set
 * where it refused the kernel; or -1 + err. */
int prof_roofline_hold(struct ao_profiler *p, const struct ao_task *t, const struct pool *pl, double min_ns,
                       long long wake_u_ns, double median_ns, struct ao_measurement *r, struct ao_job *j,
                       int *rechecked, char *err, size_t errlen);

/* The device's metrics of an `ok` kernel (the target's device_metrics:
 * cuda), from one untimed call in a process of its own built in kj's
 * directory, into r->device_profile: the ns it took, 0 where none. */
long long prof_metrics_pass(struct ao_profiler *p, struct pool *pl, struct ao_job *kj,
                            struct ao_measurement *r, double latency_ns);

/* --- spots.c: every timed call checked at secret positions (issue 66) --- */
struct spots {
    int on;    /* the task has independent sizes, and the outputs are on the host */
    int cells; /* elementwise: flat positions (cell), else a grid of indices (idx) */
    long long sub[AO_MAX_DIMS];  /* the small problem's sizes */
    long long positions;         /* output elements checked a call */
    long long *idx[AO_MAX_DIMS]; /* per independent size, this call's indices */
    long long *cell;
    long long *off;                  /* a grid's flat offsets into one tensor (gather) */
    size_t *guard_at[AO_MAX_TENSORS]; /* input elements noted before the call */
    float *guard_val[AO_MAX_TENSORS];
    struct dataset part;             /* the small problem: inputs, the reference's outputs */
    float *got[AO_MAX_TENSORS];      /* the kernel's outputs at the positions */
    int calls;                       /* checked so far */
    long long check_ns;
    double max_err;
};
/* The small problem for calls of about call_ns (s zeroed first): s->on
 * says whether there is one. */
void prof_spots_plan(const struct ao_profiler *p, const struct pool *pl, long long call_ns, struct spots *s);
int prof_spots_alloc(const struct pool *pl, struct spots *s);
void prof_spots_tally(const struct spots *s, struct spots_tally *t);
/* The tally into a result: its timing's spots_* fields, and the largest
 * error as a rel_l2 entry ("timed-spots") per the task's first output. */
void prof_spots_json(const struct spots_tally *s, const struct ao_task *t, cJSON *timing, cJSON *errors);
void prof_spots_free(const struct ao_task *t, struct spots *s);
/* Before a call: which input elements to note (prof_spots_guard), then
 * input i's noted once in place (prof_spots_note, told by drive.c). */
void prof_spots_guard(struct ao_profiler *p, struct spots *s, const struct ao_task *t, const long long *dims);
void prof_spots_note(struct spots *s, int i, const float *x);
/* After call `call`, the runner stopped: its guards held, its outputs at
 * fresh secret positions against the reference.  0; or -1 with j->status
 * (rejected, incorrect) or err (ours). */
int prof_spots_check(struct ao_profiler *p, struct pool *pl, struct spots *s, struct ao_job *j, int call,
                     char *err, size_t errlen);

/* --- timing.c --- */
void prof_sample_free(struct sample *s);
/* How many timed calls a measurement checks: at most `most`, fewer when
 * the reference is slow, never under CHECKED_MIN. */
int prof_sample_size(const struct pool *pl, int most);
/* The warm-up every measurement makes (timing.c): its shortest call's
 * time (one stalled call must not stand for the kernel's), or -1. */
long long prof_warm_up(struct ao_profiler *p, struct pool *pl, struct ao_job *j, long long *kernel_ns);
/* Is timed call n (0-based) kept, and where?  -1: not.  The generator is
 * drawn only past the first s->size calls (ao_reservoir_slot). */
int prof_sample_slot(struct ao_profiler *p, struct sample *s, int n);
int prof_check_sample(struct ao_profiler *p, struct pool *pl, struct ao_job *j,
                      struct sample *s, cJSON *errors, double *max_err, char *err, size_t errlen);
/* One side's check sets, as prof_correctness runs them */
struct checks {
    struct ao_job *j;
    float **out;      /* room for the outputs */
    cJSON *errors;    /* what each set found, appended */
    double *max_err;  /* the largest error, reported */
    long long *kernel_ns;
    /* the sets run already, from the first on (a head-to-head's opening
     * round runs the first: prof_check_opening), their entries in errors
     * from errors_from on, their largest error worst */
    int done, errors_from;
    double worst;
};
/* Correctness on every check set, the nominal ones poisoned with NaN, the
 * one at another shape with another poison, so an output left untouched
 * can never pass (those before c->done ran already).  0, or -1 with the
 * job's status set. */
int prof_correctness(struct pool *pl, struct checks *c);
/* The next check set (c->done: the first, then the second), a side's
 * call in a head-to-head's opening round (issue 66), held to its
 * reference as prof_correctness would, and c->done counted; `check` 0:
 * not held (the task's own baseline).  A source known to pass the sets
 * is held all the same, its entries not kept (the known ones are
 * reported).  The call's ns, or -1 with the job's status. */
long long prof_check_opening(struct pool *pl, struct checks *c, int check);
/* Correctness on the check sets, then timed calls on fresh inputs, a
 * uniform sample of them (secretly chosen) checked against the reference
 * afterwards. */
/* The device's own times of `want` of the n profiled calls of job j (all
 * if n <= want; else a random choice), into ns[] (want long), the calls'
 * numbers into which[] (if given); *profile (if given) the
 * device's profile of the median one.  The number read; -1 + err; or AO_RC_REJECTED
 * + err when the traces cannot be the device's own (a verdict: rejected). */
int prof_device_times(struct ao_profiler *p, struct ao_job *j, int n, int want, long long *ns,
                      int *which, cJSON **profile, char *err, size_t errlen);
/* Can the device's times dev[] be those of the executions the host's clock
 * timed at host[] (each its raw time, wake-up included)?  Not when the
 * device's median is under a quarter of the host's and the gap between
 * them passes DEVICE_GAP_LAUNCHES launch overheads (launch_ns, measured on
 * trusted code; unknown, 0: not judged) and DEVICE_GAP_FLOOR_NS.  1 with
 * the reason when not; 0 when they can. */
#define DEVICE_GAP_LAUNCHES 4
#define DEVICE_GAP_FLOOR_NS 50000
int prof_device_unbelievable(const long long *host, const long long *dev, int n,
                             long long launch_ns, char *reason, size_t len);
/* A runner's own device times dev[] (target.h runner_clock) against our
 * clock raw[] around the same n calls (each raw, wake-up included), given
 * launch_ns, what the host's clock adds to the device's time for the
 * trusted reference at this shape (pools.c).  The allowance is launch_ns,
 * the longest a gate may hold the call's work (RUNNER_CLOCK_GATE_NS: the
 * cuda runner's AO_GATE_NS), RUNNER_CLOCK_SLACK_NS and a share of the
 * device's median (1/RUNNER_CLOCK_SHARE: the host's late wake-up after a
 * long wait grows with it).  Where the median of raw less dev is within
 * it, each call's latency lat[i] is its device time; past it, each is its
 * host time less the allowance: a runner that under-reports gains the
 * allowance at most.  A call whose DRAIN found late records (late[i] > 0,
 * work its window missed) is allowed launch_ns alone.  *raised counts the
 * calls our clock raised.  empty_ns (0: none) is the device's time of
 * an empty call in the same process (job.h empty_dev_ns): the fixed cost
 * of the clock itself (the event's stamp, a kernel's dispatch), taken off
 * each device time that becomes a latency as a wake-up is (a time under it
 * keeps its own figure), never under our clock's floor; the checks against
 * our clock hold the device's times as the runner gave them.
 * 0: lat[] holds the latencies.  1 + reason: refused (a device time
 * longer than the host's clock around it; or a median device time under
 * 1/RUNNER_CLOCK_FAR_SHARE of the host's excess over the allowance, that
 * excess over RUNNER_CLOCK_FAR_NS: not the call's time).  -1: no device
 * time to use (a call without one, or launch_ns unknown): the host's
 * clock stands. */
#define RUNNER_CLOCK_GATE_NS 30000
#define RUNNER_CLOCK_SLACK_NS 10000
#define RUNNER_CLOCK_SHARE 16
#define RUNNER_CLOCK_OVER_NS 2000
#define RUNNER_CLOCK_FAR_NS 200000
#define RUNNER_CLOCK_FAR_SHARE 64
int prof_runner_clock(const long long *raw, const long long *dev, const unsigned *late, int n,
                      long long launch_ns, long long empty_ns, long long *lat, int *raised,
                      char *reason, size_t len);
/* The timed calls of a measurement and of a head-to-head, one loop for
 * both: rounds of one call per side (side[0] alone; or the baseline,
 * side[0], and the kernel, side[1], in a random order on the same fresh
 * inputs), a uniform sample of the rounds (smp) kept and their outputs
 * read for the checks after.  The caller sets side, nsides, min, max,
 * budget_ns, spread and smp.size; prof_rounds fills the rest. */
/* Two processes of one kernel differ by this much in one sitting (where
 * their tensors and pages fall): a head-to-head's interval is never
 * narrower than the speedup times 1 -/+ this (docs/BENCHMARKS.md, the A/A
 * runs); its rounds stop once their own interval is within H2H_DECIDED
 * of their median (timing.c decided). */
#define H2H_SYSTEMATIC 0.04
/* ... and on a busy machine by more: the floor is at least this share of
 * either side's spread (the interquartile range of its calls over their
 * median), at most H2H_FLOOR_MAX (h2h.c h2h_floor).  An A/A child on a
 * full CI's two cores was "faster" at 1.11 in two pairs of fresh
 * processes, 200 rounds each, its calls' spread 0.74; the most an A/A
 * child's median moved there was 1.18, at a spread of 3.8, so a 1.6x
 * gain (a knob move of matmul's) is still decided at the cap (issue 70's
 * landing; docs/BENCHMARKS.md) */
#define H2H_SPREAD_SHARE 0.25
#define H2H_FLOOR_MAX 0.25
#define H2H_DECIDED 0.01
#define H2H_DECIDED_MIN 50 /* rounds before the answer may end them: a few
                              dozen keep a busy minute from deciding alone */
#define H2H_ANSWERED_MIN 3 /* a child's rounds before a plain answer may end them
                              short of their minimum (timing.c answered) */

struct rounds {
    struct ao_job *side[2];
    int nsides;
    int min, max;        /* rounds at least, at most */
    long long budget_ns; /* past min, stop once the rounds' calls took this long */
    double spread;       /* ... or (one side) once its figure's spread is this; 0: never */
    struct sample smp;   /* the kept rounds: the kernel's (the last side's) outputs */
    /* each untrusted side's calls checked at secret positions (spots.c):
     * the kernel's, and the first side's with check_both */
    struct spots spots[2];
    /* the first side untrusted too (a comparison with a parent the model
     * wrote, issue 56): its kept rounds' outputs held against the kernel's
     * of the same inputs; the first disagreement, in words, or "" */
    int check_both;
    char disagree[300];
    /* a child against its parent: stop short of min once no decision is
     * possible (timing.c undecidable) or the answer is plain (answered);
     * undecidable, answered: they did */
    int stop_undecidable, undecidable, answered;
    long long *raw[2], *dev[2], *ev[2]; /* per side and round: our clock, the runner's */
    unsigned *late[2];
    /* a side whose check sets run after its rounds, before its runner
     * stops (issue 56: a head-to-head's second side); NULL: none */
    struct checks *after;
    /* the opening rounds counted as the first (both sides' first calls,
     * on the first check sets: h2h.c), each side's raw times */
    int opened;
    long long opening[OPENING_ROUNDS][2];
    int n, voided;
    long long kernel_ns, inputs_ns; /* all the rounds' calls; the inputs drawn here */
};
/* 0; or -1, with a side's status set (its verdict) or err (our failure) */
int prof_rounds(struct ao_profiler *p, struct pool *pl, struct rounds *r, char *err, size_t errlen);
/* Plan the positions each untrusted side's calls are checked at (spots.c),
 * the sides and check_both set, their warm-ups made: 1 where the kernel's
 * are (the sampled full checks are then not needed), 0, or -1 out of
 * memory. */
int prof_rounds_spots(struct ao_profiler *p, struct pool *pl, struct rounds *r);
void prof_rounds_free(struct rounds *r);
int prof_measure(struct ao_profiler *p, struct pool *pl, struct ao_job *j, cJSON *errors,
                 double *max_err, struct timed *m, char *err, size_t errlen);

#endif
