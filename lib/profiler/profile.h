/* profile.h - compile, contain, check and time one kernel on its target */
#ifndef AO_PROFILE_H
#define AO_PROFILE_H

#include "core/task.h"
#include "measure/calib.h"
#include "measure/measurement.h"

struct ao_target;

struct ao_profiler_opts {
    const struct ao_target *target; /* whose kernels (NULL: the default, cpu) */
    const char *work_root;     /* where job directories go (default /tmp; at most AO_WORK_ROOT_MAX bytes) */
    const struct ao_calib *calib; /* NULL: no % of peak (and said so) */
    /* where calib is stored (NULL: nowhere): a fresh measurement of the
     * machine (a kernel under the roofline) is kept into it for the next
     * start, each peak the best (ao_calib_keep_best); this profiler goes on
     * with calib as it was, so a run judges by one set of peaks */
    const char *calib_path;
    double timeout_s;          /* wall limit for running one kernel */
    double ref_timeout_s;      /* the same for the task's reference (0: ten times timeout_s) */
    double compile_timeout_s;  /* wall limit for compiling one kernel */
    double budget_s;           /* measured time to aim for per kernel */
    double warmup_s;           /* run at least this long before measuring */
    double target_spread;      /* stop repeating once IQR/median is under this */
    int max_calls;             /* measured calls at most */
    long long mem_bytes;       /* memory a kernel may use beyond its tensors */
    int cpu;                   /* pin kernels to this CPU, or -1 */
    int bw_mib;                /* array size of a fresh measurement of the machine */
};

/* The longest work root (--work-dir): under it go the profiler's directory,
 * its job directories, each sandbox's root and the mounts in that, each in
 * a buffer of its own (issue 70: one was cut) */
#define AO_WORK_ROOT_MAX 400
#define AO_PROFILER_DEFAULTS { .target = NULL, .work_root = NULL, .calib = NULL, .timeout_s = 60, \
    .compile_timeout_s = 60, .budget_s = 1.0, .warmup_s = 0.1, .target_spread = 0.02, .max_calls = 200, \
    .mem_bytes = 2LL << 30, .cpu = -1, .bw_mib = 256 }

struct ao_profiler;

/* A profiler keeps its input pools (and their references) per task and
 * size across kernels, so it is meant to live as long as the stage. */
struct ao_profiler *ao_profiler_new(const struct ao_profiler_opts *o, char *err, size_t errlen);
void ao_profiler_free(struct ao_profiler *p);

/* Profile `source` for task t at a size class into m (initialized by the
 * caller): verdict, reason, latencies, errors, % of peak, sandbox layers,
 * diagnostics, timing breakdown.  parent_ns (NAN if none) is policy only:
 * a kernel over 10x faster than its parent is measured again in a fresh
 * process.  Returns 0 when m holds a verdict (any), -1 only when the
 * profiler itself failed (err filled; m is then an internal_error). */
int ao_profiler_run(struct ao_profiler *p, const struct ao_task *t, const char *size,
                    const char *source, double parent_ns, struct ao_measurement *m, char *err,
                    size_t errlen);

/* The final head-to-head (issue 25): `source` against `base_source` in one
 * sitting, built and checked like any kernel, then in rounds on the same
 * fresh inputs in a random order, a uniform sample of the kernel's calls
 * checked against the reference.  m gets the kernel's latency and
 * head_to_head: the median of the paired ratios (the speedup over the
 * baseline) with its distribution-free 95% interval.  child: a kernel
 * against its parent, where only the search's question is asked: its
 * rounds may stop short once they can decide nothing (head_to_head
 * .undecidable; the final head-to-head's figure is quoted, and runs them
 * all).  0, or -1 + err. */
int ao_profiler_compare(struct ao_profiler *p, const struct ao_task *t, const char *size,
                        const char *source, const char *base_source, int child,
                        struct ao_measurement *m, char *err, size_t errlen);

/* Build `source` and apply its target's checks to what was built, without
 * running it (a machine without the target's device can still do this):
 * verdict ok, compile_error or rejected in m.  0, or -1 + err. */
int ao_profiler_build(struct ao_profiler *p, const struct ao_task *t, const char *source,
                      struct ao_measurement *m, char *err, size_t errlen);

/* The version of the profiler's checks: part of every cache key, so a
 * verdict given under older checks is never served.  Raise it whenever a
 * check, the timing protocol or a limit changes. */
#define AO_PROFILER_CHECKS 7 /* 7: no shapes.txt where the build of a kernel could read it */

/* A kernel's source is at most this long: the profiler refuses a longer
 * one, and the front refuses the file. */
#define AO_SOURCE_MAX (256 * 1024)
/* A kernel's source file as the front takes it (profile FILE, run
 * --baseline FILE): a regular file, at most AO_SOURCE_MAX bytes, UTF-8 text
 * with no NUL.  Its text, or NULL + err: each failure the user's to mend. */
char *ao_source_read(const char *path, char *err, size_t errlen);

/* The cache key of a profile: kernel source, task, size, target,
 * calibration, and what the verdict depends on (the checks' version, the
 * trusted runner, the compiler and its flags). */
void ao_profile_key(const struct ao_target *tg, const struct ao_task *t, const char *size,
                    const char *source, const struct ao_calib *c, char hex[65]);

#endif
