/* job.h - a kernel's job (ao_job_*): the process it runs in, its runner,
 * started in a fresh sandbox and sharing one memory region with the
 * profiler (runner_proto.h): a header of commands, then the tensors.
 * Every target's runner speaks this protocol; the target (target.h) says
 * what the runner is, what its sandbox needs and how tensors reach its
 * device.  The profiler's policy (profile.c) decides what to call, with
 * what, and what the times mean. */
#ifndef AO_JOB_H
#define AO_JOB_H

#include <sched.h>
#include <stddef.h>
#include <stdint.h>

#include "core/task.h"
#include "measure/region.h"
#include "measure/sandbox.h"
#include "runner_proto.h"
#include "wire/verdict.h"

#define AO_JOB_WAKES (31 + 256) /* wake-up samples a job keeps (profile.c) */
#define AO_JOB_PLACES 256       /* distinct tensor addresses per process */
/* A command may run for the longer of the timeout and this many times the
 * kernel's longest call so far (the time limit follows the work). */
#define AO_CALL_LIMIT_FACTOR 20

struct ao_target;

/* What starting a runner needs from the profiler. */
struct ao_job_opts {
    const struct ao_target *tg; /* kept in the job for its driver's calls; never looked into here */
    /* what the target's device needs of the runner's sandbox beyond the
     * default, or NULL; and whether a call's work can go on after its
     * `done` (ao_job_run) */
    void (*runner_sandbox)(struct ao_sandbox_spec *s);
    int drain;
    const void *bpf;          /* the seccomp program the runner installs */
    size_t bpf_len;
    long long mem_bytes;      /* the kernel's memory allowance beyond the tensors */
    int cpu;                  /* run on this core, or -1 */
    unsigned place_a, place_b; /* the secret order of tensor positions */
    double timeout_s;
    int hold;                 /* set up now, exec at ao_job_release */
    int metrics;              /* the metrics pass: the runner under CUPTI's records */
    int second;               /* a second runner alive beside the first (a head-to-head):
                                 its own cgroup slot; 2: the trusted reference's,
                                 beside the kernels' jobs (slot 3, apart from theirs:
                                 the memory their runners touched stays charged to
                                 their cgroup while the profiler maps it; trn's
                                 profile tool uses slot 3 too, never at the same time) */
};

/* A kernel's directory, its running process and its shared region. */
struct ao_job {
    char dir[700];
    char digest[65];            /* the kernel source's SHA-256, for the profiler's records */
    int checks_known;           /* its check sets were known passed, not run again */
    long long checks_least_ns;  /* its shortest check-set call in its last pass over them */
    const struct ao_target *tg; /* ao_job_opts.tg */
    int drain;                  /* ao_job_opts.drain */
    struct ao_sandbox sb;
    int started;
    int second;        /* started beside another runner (ao_job_opts.second) */
    int cpu;           /* the core it was put on, or -1 */
    int pin;           /* if not 0: start it on core pin - 1 (beside another runner) */
    int metrics;       /* the metrics pass's process (ao_job_opts.metrics) */
    char *shm;                  /* the region's first shm_size bytes, the runner's */
    size_t shm_size, slot_size;
    struct ao_region rg;        /* the region itself (region.c), kept after the job */
    struct ao_run_hdr *hdr;
    uint64_t seq;
    const struct ao_task *task;
    long long deadline;
    double timeout_s;
    long long limit_ns;   /* the current command's wall limit */
    long long longest_ns; /* the longest call it has made */
    unsigned place_a, place_b, placed; /* the order of tensor positions */
    /* where the tensors are, as we placed them: never read back from the
     * header, which the kernel's process can rewrite */
    size_t off[AO_MAX_TENSORS];
    const long long *dims;             /* the shape of the placed tensors */
    char out_path[720];                /* the runner's stdout and stderr, capped */
    int stopped;                       /* held by SIGSTOP between calls */
    /* the runner's core, and ours to write its inputs from (so they are in
     * its caches, as if it had read them) and to wait from (elsewhere) */
    int migrate;
    cpu_set_t on_runner, off_runner;
    long long wake_ns;                 /* continuing the stopped runner costs this */
    long long raw_ns;                  /* the last CALL's or NOP's time, wake-up included */
    long long wakes[AO_JOB_WAKES];     /* every wake-up sample taken */
    int nwakes;
    /* a runner that times its device (a GPU behind a gate): the device's
     * time of an empty call, the median of the empty commands before the
     * kernel's first call (only trusted code had run); 0 where unknown */
    long long empty_dev_ns;
    int empty_dev_known;
    /* what the trusted side of its calls cost (prof_job_call): inputs
     * drawn or copied in and outputs poisoned, the tensors handed to the
     * device, and brought back */
    long long inputs_ns, to_device_ns, from_device_ns;
    int inputs_copied; /* calls whose inputs were copied in (the check sets) rather than drawn */
    /* the parts a large timed draw is cut into, each on a thread of its
     * own (the profiler's: prof_timed_parts) */
    int draw_parts;
    /* a call whose outputs are read next (prof_job_call, host targets):
     * a sample of them copied the moment it says done and compared once
     * it is stopped, so a kernel that goes on writing after a `done` it
     * raised itself (taking over the runner's loop) is caught */
    int watch;
    unsigned char *seen;
    size_t seen_cap, watch_n, watch_k, watch_a, watch_b;
    long long watch_last, watch_gap; /* our clock while watching, its longest gap */
    /* we were away while watching the last call (descheduled on a busy
     * machine): it proves nothing, and its time and outputs must not
     * count; another call is drawn in its place */
    int watch_void;
    /* why it failed, once it did */
    enum ao_verdict status; /* AO_V_NONE until decided */
    char reason[512];
};

/* Bytes one set of the task's tensors takes in the shared region. */
size_t ao_job_bytes(const struct ao_task *t, const long long *dims);

/* Start the runner (/work/runner in j->dir) in its sandbox.  0 or -1 + err. */
int ao_job_start(struct ao_job *j, const struct ao_job_opts *o, const struct ao_task *t,
                 const long long *dims, char *err, size_t errlen);
/* Let a held runner exec; its time limit counts from here. */
int ao_job_release(struct ao_job *j, char *err, size_t errlen);
/* Ask the runner to exit (or kill it after a verdict) and reap it. */
void ao_job_stop(struct ao_job *j, const char *phase);
/* The process and its region are gone; the directory stays. */
void ao_job_end(struct ao_job *j);
/* ao_job_end, and the directory removed. */
void ao_job_free(struct ao_job *j);

/* Stop the runner (SIGSTOP) if it runs: 0, or -1 with j->status if gone. */
int ao_job_hold(struct ao_job *j, const char *phase);
/* Choose where the tensors of the next call live (and stop the runner). */
void ao_job_place(struct ao_job *j, const long long *dims);
/* Tensor i as placed, in our mapping of the shared region. */
float *ao_job_tensor(struct ao_job *j, int i);
/* One command to the runner, timed from here: elapsed ns less the wake-up
 * estimate (hold 1), or raw (hold 0: a warm-up repeat); -1 with j->status. */
long long ao_job_run(struct ao_job *j, uint32_t cmd, int hold, const char *phase);
/* Move onto the runner's core (to write its inputs), and off it again;
 * onto all of our cores (a draw that bypasses the caches, over threads
 * that take our placement). */
void ao_job_on_runner(struct ao_job *j);
void ao_job_off_runner(struct ao_job *j);
void ao_job_on_all(struct ao_job *j);
/* Make the next len bytes of a held job's region ready (region.c): what
 * an earlier job left there zeroed, fresh pages faulted in here, before
 * its calls need them.  ao_job_release makes the rest ready.  1 while
 * some are left, else 0. */
int ao_job_prepare(struct ao_job *j, size_t len);

#endif
