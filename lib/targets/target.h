/* target.h - the seam between accelopt and the hardware it optimizes for
 * (docs/TARGETS.md).  A target is a driver: a table of what differs
 * from one target to the next, one file each under lib/targets/, found by
 * name in a registry.  What is the same for every target (input sets,
 * poisoning, the secret checks, the stopping rule, statistics, the
 * roofline, the verdict) stays out of the drivers.
 *
 * The profiler (profile.c) holds the policy and calls the driver to build
 * a kernel, to start its runner (job.h: a process in a sandbox that
 * speaks runner_proto.h) and to move a call's tensors to the device and
 * back.  docs/TARGETS.md says how to add one. */
#ifndef AO_TARGET_H
#define AO_TARGET_H

#include <stddef.h>

struct ao_buf;
struct ao_calib;
struct cJSON;
struct ao_run_hdr;
struct ao_job;
struct ao_sandbox_spec;
struct ao_task;
struct ao_vendor_result;

struct ao_target {
    const char *name;              /* messages' target; prompts/<name>/, accelopt.kernels.<name> */
    const char *ext;               /* a kernel's file: nkibench/<task>/baseline.<ext> */
    const char *const *fence_tags; /* the code-block tags a reply's kernel may carry ("" too) */
    const char *compiler;          /* the compile command, as models and results are told it */
    const char *summary;           /* one line for --help and errors */
    /* How a kernel is called, for the prompts: the signature, the tensors
     * and their order, the sizes it is timed at (dims, of size class
     * `size`), the tolerance and the compile command, appended to b. */
    void (*convention)(const struct ao_task *t, const char *size, const long long *dims,
                       struct ao_buf *b);
    /* Measure this machine's peaks for the target (bw_mib: the array size
     * of the bandwidth runs), store them at path, fill c.  0 or -1 + err. */
    int (*calibrate)(const char *path, int bw_mib, struct ao_calib *c, char *err, size_t errlen);
    /* This machine's model (CPU, or GPU and driver) and the kernel flags,
     * as a calibration records them: one made elsewhere is measured again. */
    void (*machine)(char *model, size_t mlen, char *flags, size_t flen);

    /* --- measuring: what profile.c's policy asks of the driver --- */
    const char *kernel_file;    /* the kernel's source in its job directory */
    const char *reference_file; /* the task's trusted reference, run as a kernel is */
    /* The build compiles once per shape (trn: NKI traces each), so its job
     * directory gets shapes.txt, every shape of the job, the unannounced
     * check shapes too.  The others never see it: what a kernel's build
     * can read (`.incbin`, `#embed`) must not name a check shape. */
    int builds_per_shape;
    /* Can this machine run the target's kernels?  0, or -1 + err saying why
     * (then nothing is measured; a build alone still works). */
    int (*available)(char *err, size_t errlen);
    /* Build the trusted part of a task's runner into dir, once per task
     * and size; harness_files are what each job directory gets of it. */
    int (*harness)(const struct ao_task *t, const char *dir, char *err, size_t errlen);
    const char *const *harness_files;
    /* The shell command, run in the compile sandbox in the job directory,
     * that builds ./runner from kernel_file and the harness files. */
    void (*build_command)(char *cmd, size_t len);
    long long build_mem_bytes;  /* the compile sandbox's memory limit */
    /* What the compile sandbox needs beyond the default, or NULL. */
    void (*build_sandbox)(struct ao_sandbox_spec *s);
    /* The target's rules on what was built in dir: 0 if it may run, 1 +
     * reason if it breaks one, -1 + reason if it cannot be checked. */
    int (*check_build)(const char *dir, char *reason, size_t len);
    /* The runner's seccomp program (installed by the runner itself). */
    int (*runner_filter)(void **bpf, size_t *len, char *err, size_t errlen);
    /* What the runner's sandbox needs beyond the default, or NULL. */
    void (*runner_sandbox)(struct ao_sandbox_spec *s);
    /* Around a timed call, its inputs and poisoned outputs written to the
     * shared region: make them the runner's (untimed), and after the call
     * bring every tensor back.  0, or -1 with the job's verdict set.  Both
     * NULL where the runner reads the shared region itself (cpu). */
    int (*before_call)(struct ao_job *j, const char *phase);
    int (*after_call)(struct ao_job *j, const char *phase);
    /* Can a call's work go on after its `done`: a device that runs on
     * after the host says done, or kernel code in the runner's process,
     * which can raise `done` itself?  Then each timed command ends with a
     * DRAIN (runner_proto.h) inside the clock: only the runner's own loop
     * answers it, once the kernel has returned. */
    int drain;
    /* Does the runner poison the outputs on the device itself at LOAD
     * (the header's poison word, tensors from first_output on), rather
     * than copying them from the region poisoned by the profiler? */
    int poisons_on_device;
    /* its runner times the device's work of each call itself (the cuda
     * runner: hdr->device_ns, device_clock): that is the latency, held
     * against the profiler's clock around the same call (timing.c
     * prof_runner_clock) */
    int runner_clock;
    /* A device that times itself (trn: each execution's on-device time from
     * its profile).  NULL: the profiler's clock is the latency.  Otherwise
     * the profiler sets the header's `profile` around the timed CALLs and
     * asks for call k (0-based, of the CALLs profiled in job directory dir):
     * its device time in ns, and (profile not NULL) what the device's
     * profile says of it, as JSON.  0; 1 + err when what is there cannot be
     * the device's own (the kernel's build tampered with it); -1 + err. */
    int (*device_time)(const char *dir, int call, double *ns, struct cJSON **profile, char *err,
                       size_t errlen);
    /* The counters a planner is shown of an `ok` kernel (cuda:
     * cuda_metrics.h), from the header of a runner that made one untimed
     * call under CUPTI's records in a process of its own (the metrics
     * pass, profile.c); NULL: no such pass. */
    struct cJSON *(*device_metrics)(const struct ao_run_hdr *h, double latency_ns, double bytes,
                                    double flops);
    /* The device's documented peaks, used for % of peak until calibrate
     * measures them (NULL: none documented).  0, or -1 (none for this one). */
    int (*documented_peaks)(struct ao_calib *c);
    /* The class of a failure from the tools' words (the build's messages
     * and the reason), its code into code; NULL: not classified. */
    const char *(*failure_class)(const char *text, char *code, size_t codelen);
    /* What a verdict depends on here (compiler and version, flags, the
     * runner's source), appended to b. */
    void (*basis)(struct ao_buf *b);
    /* The vendor's sgemm timed by trusted code outside the sandbox, for
     * `accelopt bench` (variant: the cpu's OpenBLAS kernel set, or NULL);
     * NULL where the target has no vendor library to time (trn). */
    const char *vendor_name;
    int (*vendor_sgemm)(int M, int K, int N, int cpu, const char *variant,
                        struct ao_vendor_result *r, char *err, size_t errlen);
};

#define AO_MAX_TARGETS 8
/* The built-in targets, the one list: X(name) for each, SEP between,
 * the default first.  A driver defines `const struct ao_target
 * ao_target_<name>`; the registry (target.c), the declarations below and
 * the option tables' text all expand this, so a fourth target is one
 * name here and its driver file. */
#define AO_TARGET_LIST(X, SEP) X(cpu) SEP X(cuda) SEP X(trn)
#define AO_TARGET_STR_(t) #t
/* The default target's name and the built-in ones', for option tables
 * (static text: "cpu, cuda, trn"). */
#define AO_TARGET_DEFAULT "cpu"
#define AO_TARGET_NAMES AO_TARGET_LIST(AO_TARGET_STR_, ", ")
/* The i-th built-in target (0 the default), or NULL past the last. */
const struct ao_target *ao_target_at(int i);
/* The target of that name, or NULL when this build has none by that name. */
const struct ao_target *ao_target_find(const char *name);
/* The default target (cpu). */
const struct ao_target *ao_target_default(void);
/* The built-in targets' names, comma-separated, into buf. */
void ao_target_names(char *buf, size_t len);
/* ao_target_find, or NULL with err saying which targets there are. */
const struct ao_target *ao_target_get(const char *name, char *err, size_t errlen);
/* Every topic of a deployment (wire/names.h), a kernels topic per built-in
 * target among them, NULL-terminated (static: built on first use). */
const char *const *ao_topics(void);

/* Helpers the drivers share. */
/* Run a trusted build step on the host: an argv, never a shell. */
int ao_target_run_host(char *const argv[], char *err, size_t errlen);
/* The source of the trusted stub that calls kernel() with the task's
 * signature: ao_call(float *const *p, const int *d).  decl prefixes the
 * kernel's declaration (e.g. extern "C"). */
void ao_target_stub(const struct ao_task *t, const char *decl, struct ao_buf *b);
/* For the prompts: the tensors in order with their shapes, the sizes it
 * is timed at and the tolerance (tolerance_note follows it), appended to b. */
void ao_target_tensors_text(const struct ao_task *t, const char *size, const long long *dims,
                            const char *tolerance_note, struct ao_buf *b);
/* proto.h (decl, then the task's signature) and the stub (stub_name) in dir. */
int ao_target_write_stub(const struct ao_task *t, const char *dir, const char *decl,
                         const char *stub_name, char *err, size_t errlen);
/* A device target's before_call and after_call: every tensor to the
 * device (LOAD) and back (FETCH), untimed. */
int ao_target_load(struct ao_job *j, const char *phase);
int ao_target_fetch(struct ao_job *j, const char *phase);
/* A peak benchmark's JSON (bw_gbs, bw_spread, mm_gflops, mm_spread, and the
 * elementwise peak and spread under vec_key and vec_spread_key; bw_method
 * if it names one, else bw_method), with this machine's model and flags
 * (tg->machine) and the time, into c, stored at path (NULL: its id only).
 * 0, or -1 + err. */
int ao_target_peaks(const struct ao_target *tg, const struct cJSON *j, const char *vec_key,
                    const char *vec_spread_key, const char *bw_method, const char *path,
                    struct ao_calib *c, char *err, size_t errlen);
/* A file's text appended to b (nothing if it cannot be read). */
void ao_target_basis_file(struct ao_buf *b, const char *path);
/* The sources every target's runner includes (runner_side.h, runner_proto.h), appended to b. */
void ao_target_basis_runner_side(struct ao_buf *b);
/* The first (or last) line a compiler prints for --version, appended to b. */
void ao_target_basis_version(struct ao_buf *b, const char *compiler, int last_line);
/* A trusted object the same for every task (a target's runner.o), built
 * once per machine: copied to obj from the state directory, where it is kept
 * as NAME-HASH.o under the hash of basis (all it depends on: the compiler
 * and its version, the flags, the sources), else built by compile(argv),
 * which writes obj, and kept.  A kept one is used only if it is ours and no
 * one else may write it or its directory; keeping it is best effort (the
 * build stands without).  0, or -1 + err. */
int ao_target_kept_object(const char *name, const struct ao_buf *basis,
                          int (*compile)(char *const argv[], char *err, size_t errlen),
                          char *const argv[], const char *obj, char *err, size_t errlen);

/* The same keeping for any file built by trusted code (the task's built
 * reference): _get copies the kept one to path with the given mode (0, or
 * -1: none kept, or not usable), _put keeps path's content (best effort). */
int ao_target_kept_get(const char *name, const struct ao_buf *basis, const char *path, int mode);
void ao_target_kept_put(const char *name, const struct ao_buf *basis, const char *path);

#define AO_TARGET_DECL_(t) extern const struct ao_target ao_target_##t;
AO_TARGET_LIST(AO_TARGET_DECL_, )

#endif
