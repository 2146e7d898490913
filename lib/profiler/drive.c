/* drive.c - driving a kernel's job for the profiler: the static checks,
 * preparing and compiling in the sandbox, starting the runner, its
 * wake-ups, and one call with fresh or given inputs */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/rng.h"
#include "core/util.h"
#include "measure/job.h"
#include "profiler/profile.h"
#include "profiler/profiler_int.h"
#include "measure/sandbox.h"
#include "targets/target.h"
#include "wire/verdict.h"

/* Keep what a model can act on: the compiler's words, without our paths,
 * cut to a readable length. */
static char *trim_diagnostics(const char *text)
{
    struct ao_buf b = {0};
    int lines = 0;

    for (const char *p = text; *p && b.len < DIAG_MAX && lines < 40;) { /* (made UTF-8 as it is sent) */
        size_t n = strcspn(p, "\n");
        if (strncmp(p, "/work/", 6) == 0) {
            p += 6;
            n -= 6;
        }
        ao_buf_append(&b, p, n);
        ao_buf_append(&b, "\n", 1);
        lines++;
        p += n;
        if (*p == '\n')
            p++;
    }
    if (!b.data)
        ao_buf_append(&b, "", 0);
    return b.data;
}

/* The rules checked on the source text: its size, and that it is text (a
 * binary given to gcc came back as raw bytes in its words, issue 69). */
int prof_static_check(const char *src, char *reason, size_t len)
{
    size_t n = strlen(src);

    if (n > AO_SOURCE_MAX) {
        snprintf(reason, len, "source is %zu bytes, over the %d byte limit", n, AO_SOURCE_MAX);
        return 1;
    }
    if (!ao_utf8_text(src, n)) {
        snprintf(reason, len, "source is not UTF-8 text");
        return 1;
    }
    return 0;
}

char *ao_source_read(const char *path, char *err, size_t errlen)
{
    size_t n;
    char *s = ao_read_file_max(path, AO_SOURCE_MAX, &n, err, errlen);

    if (s && !ao_utf8_text(s, n)) {
        snprintf(err, errlen, "'%s' is not UTF-8 text, as a kernel's source is", path);
        free(s);
        return NULL;
    }
    return s;
}

/* shapes.txt: each shape the job will be called at, one line of the task's
 * dims each, the nominal one first, for a target that compiles per shape
 * (trn builds for each); no other target's job has it.  A build-only pool
 * has none: the task's tiny size then. */
static int write_shapes(const struct pool *pl, const char *dir, char *err, size_t errlen)
{
    const struct ao_task *t = &pl->task;
    long long tiny[AO_MAX_DIMS];
    const long long *seen[NOMINAL_CHECKS + 2];
    int nseen = 0;
    struct ao_buf b = {0};
    char path[900], e[AO_ERRLEN];
    int rc;

    if (pl->dims[0] > 0)
        seen[nseen++] = pl->dims;
    else if (ao_task_size(t, "tiny", tiny, e, sizeof e) == 0)
        seen[nseen++] = tiny;
    for (int s = 0; s < pl->nchecks; s++) {
        int dup = 0;
        for (int k = 0; k < nseen; k++)
            dup |= memcmp(seen[k], pl->check[s].dims, sizeof(long long) * (size_t)t->ndims) == 0;
        if (!dup && pl->check[s].dims[0] > 0)
            seen[nseen++] = pl->check[s].dims;
    }
    for (int k = 0; k < nseen; k++)
        for (int i = 0; i < t->ndims; i++)
            ao_buf_printf(&b, "%lld%s", seen[k][i], i + 1 < t->ndims ? " " : "\n");
    rc = ao_path(path, sizeof path, dir, "shapes.txt", err, errlen) < 0
             ? -1
             : ao_write_file(path, b.data ? b.data : "", b.len, err, errlen);
    ao_buf_release(&b);
    return rc;
}

/* A fresh job directory holding the kernel source and the task's harness. */
int prof_prepare_job(struct ao_profiler *p, struct pool *pl, struct ao_job *j, const char *source,
                     char *err, size_t errlen)
{
    const char *const *files = p->tg->harness_files;
    char path[900], from[800];

    ao_sha256_hex(source, strlen(source), j->digest);
    if (ao_name(j->dir, sizeof j->dir, "%s/job-XXXXXX", p->root) < 0) { /* (the work root's length is checked) */
        snprintf(err, errlen, "the profiler's directory '%.100s' is too long for a job directory", p->root);
        return -1;
    }
    if (!mkdtemp(j->dir)) {
        j->dir[0] = '\0';
        snprintf(err, errlen, "cannot create a job directory: %s", strerror(errno));
        return -1;
    }
    if (ao_path(path, sizeof path, j->dir, p->tg->kernel_file, err, errlen) < 0 ||
        ao_write_file(path, source, strlen(source), err, errlen) < 0 ||
        (p->tg->builds_per_shape && write_shapes(pl, j->dir, err, errlen) < 0))
        return -1;
    for (int i = 0; files[i]; i++) {
        if (ao_path(from, sizeof from, pl->harness, files[i], err, errlen) < 0 ||
            ao_path(path, sizeof path, j->dir, files[i], err, errlen) < 0 || ao_copy_file(from, path, err, errlen) < 0)
            return -1;
    }
    /* the compiler's sandbox (slot 0) writes it; the runner's (a uid of its
     * own) only reads it */
    if (getuid() == 0 && (chown(j->dir, ao_sandbox_uid(0), ao_sandbox_uid(0)) < 0 ||
                          chmod(j->dir, 0755) < 0)) {
        snprintf(err, errlen, "cannot hand '%s' to the sandbox user: %s", j->dir, strerror(errno));
        return -1;
    }
    return 0;
}

/* What the profiler put in the job directory for the build to read (the
 * target's harness files, and shapes.txt where it builds per shape): each
 * one's hash, "" where it cannot be read.  The build runs as the
 * directory's owner and could replace any of them (a trn build runs the
 * kernel's Python): those the runner trusts after it must be ours. */
#define HARNESS_MAX 12

static const char *harness_name(const struct ao_profiler *p, int i)
{
    int n = 0;

    while (p->tg->harness_files[n])
        n++;
    return i < n ? p->tg->harness_files[i] : i == n && p->tg->builds_per_shape ? "shapes.txt" : NULL;
}

static void harness_hashes(const struct ao_profiler *p, const char *dir, char hex[][65])
{
    char path[900], e[AO_ERRLEN];
    const char *name;

    for (int i = 0; i < HARNESS_MAX && (name = harness_name(p, i)); i++) {
        struct stat st;
        size_t n;
        char *data;
        hex[i][0] = '\0';
        if (ao_path(path, sizeof path, dir, name, e, sizeof e) == 0 && lstat(path, &st) == 0 && S_ISREG(st.st_mode) &&
            (data = ao_read_file_max(path, 1u << 30, &n, e, sizeof e))) {
            ao_sha256_hex(data, n, hex[i]);
            free(data);
        }
    }
}

void prof_harness_basis(const struct ao_profiler *p, const char *dir, struct ao_buf *b)
{
    char hex[HARNESS_MAX][65];
    const char *name;

    harness_hashes(p, dir, hex);
    for (int i = 0; i < HARNESS_MAX && (name = harness_name(p, i)); i++)
        ao_buf_printf(b, "harness %s %s\n", name, hex[i]);
}

/* The first of them the build changed (or removed), or NULL. */
static const char *harness_changed(const struct ao_profiler *p, const char *dir, char before[][65])
{
    char after[HARNESS_MAX][65];
    const char *name;

    harness_hashes(p, dir, after);
    for (int i = 0; i < HARNESS_MAX && (name = harness_name(p, i)); i++)
        if (!before[i][0] || strcmp(before[i], after[i]) != 0)
            return name;
    return NULL;
}

/* While the compiler runs (a process of its own, on another core), the
 * job's region is made ready a chunk at a time (ao_job_prepare: what an
 * earlier job left in a kept region zeroed, fresh pages faulted in), so
 * neither its release nor its first calls wait for it (a fresh page's
 * first touch cost about 2 us here: a tenth of a second a profile of a
 * 134 MB task, issue 66).  It stops when the compiler has ended, so the
 * compile's time stays the compiler's; the release does the rest. */
enum { PREPARE_CHUNK = 4 << 20 };

static void prepare_while(struct ao_job *j, pid_t compiler)
{
    for (;;) {
        siginfo_t si;
        memset(&si, 0, sizeof si);
        if (waitid(P_PID, (id_t)compiler, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid != 0)
            return;
        if (!ao_job_prepare(j, PREPARE_CHUNK))
            return;
    }
}

/* Build the job's kernel into its runner inside a sandbox, then apply the
 * target's rules to what was built.  On a verdict (compile error, rejected
 * object) sets j->status; -1 only on our failure. */
int prof_compile_job(struct ao_profiler *p, struct ao_job *j, char **diag, long long *compile_ns,
                     char *err, size_t errlen)
{
    char log[800], reason[512];
    char sh[] = "/bin/sh", dash_c[] = "-c", cmd[1024];
    char *argv[] = {sh, dash_c, cmd, NULL};
    struct ao_sandbox_spec spec = {0};
    struct ao_sandbox sb;
    int logfd = -1, st, to, rc = -1;
    long long t0 = ao_now_ns();
    char *out = NULL, before[HARNESS_MAX][65];
    const char *changed;

    harness_hashes(p, j->dir, before);
    p->tg->build_command(cmd, sizeof cmd);
    snprintf(log, sizeof log, "%s.log", j->dir);
    if ((logfd = open(log, O_CREAT | O_TRUNC | O_RDWR | O_CLOEXEC, 0600)) < 0) {
        snprintf(err, errlen, "cannot create '%s': %s", log, strerror(errno));
        return -1;
    }
    spec.workdir = j->dir;
    spec.argv = argv;
    spec.out_fd = logfd;
    spec.cpu_seconds = (long)p->o.compile_timeout_s + 5;
    spec.mem_bytes = p->tg->build_mem_bytes;
    spec.file_bytes = 256LL << 20;
    spec.max_procs = 64;
    spec.seccomp = AO_SECCOMP_COMPILE;
    spec.cpu = p->o.cpu; /* a pinned profiler compiles on its own core too, so
                            it never disturbs its neighbour's timing */
    spec.slot = 0;
    if (p->tg->build_sandbox) /* what the target's compiler needs */
        p->tg->build_sandbox(&spec);
    if (ao_sandbox_start(&spec, &sb, err, errlen) < 0)
        goto out;
    if (p->o.cpu < 0) /* the compiler on another core meanwhile */
        prepare_while(j, sb.pid);
    if (ao_sandbox_wait(&sb, ao_now_ns() + (long long)(p->o.compile_timeout_s * 1e9), &st, &to) < 0) {
        snprintf(err, errlen, "lost the compiler process");
        goto out;
    }
    *compile_ns = ao_now_ns() - t0;
    out = ao_read_file(log, NULL, reason, sizeof reason);
    if (to) {
        j->status = AO_V_COMPILE_ERROR;
        snprintf(j->reason, sizeof j->reason, "compilation took over %.0f s", p->o.compile_timeout_s);
    } else if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        j->status = AO_V_COMPILE_ERROR;
        snprintf(j->reason, sizeof j->reason, "the compiler or linker failed");
    }
    if (out && *out)
        *diag = trim_diagnostics(out);
    if (j->status) {
        rc = 0;
        goto out;
    }
    if (p->tg->check_build(j->dir, reason, sizeof reason) != 0) {
        j->status = AO_V_REJECTED;
        snprintf(j->reason, sizeof j->reason, "%s", reason);
    } else if ((changed = harness_changed(p, j->dir, before))) {
        j->status = AO_V_REJECTED;
        snprintf(j->reason, sizeof j->reason, "the build changed '%s', which the harness put there: "
                 "a kernel's build writes its own output and nothing else", changed);
    }
    rc = 0;
out:
    free(out);
    if (logfd >= 0)
        close(logfd);
    unlink(log);
    return rc;
}

/* What continuing the stopped runner adds to a call (waking a stopped
 * process: about 10 µs on a VM), timed on empty commands before the
 * kernel's first call, while only the trusted runner has run in the
 * process, and again between timed calls; the minimum of them all is
 * taken off each timed call.  A busy machine can slow all of the first
 * ones (the later ones keep the estimate honest), and a kernel could only
 * slow the later ones, which a minimum ignores: no call is credited with
 * more than a wake-up took. */

/* One empty command, timed the way a real call is: kept as a sample, the
 * estimate lowered to it if lower.  0 or -1. */
int prof_wake_sample(struct ao_job *j, const char *phase)
{
    if (ao_job_hold(j, phase) < 0)
        return -1;
    ao_job_on_runner(j); /* the path of a real call: onto the runner's core and off */
    ao_job_off_runner(j);
    if (ao_job_run(j, AO_RUN_CMD_NOP, 1, phase) < 0)
        return -1;
    if (j->nwakes == 0 || j->raw_ns < j->wake_ns)
        j->wake_ns = j->raw_ns;
    if (j->nwakes < WAKE_SAMPLES_MAX)
        j->wakes[j->nwakes++] = j->raw_ns;
    return 0;
}

/* The device's own time of those empty commands, where the runner gives
 * one by events (behind its gate, or around the call): the fixed cost
 * every call's device time carries beside its work (the event's stamp, a
 * kernel's dispatch; 2-4 us on an H200), taken off each call's
 * (prof_runner_clock).  Kept from the job's first samples only, before
 * the kernel's code ever ran in the process. */
int prof_measure_wake(struct ao_job *j)
{
    long long dev[WAKE_ROUNDS];
    int ndev = 0, clock;

    j->wake_ns = 0;
    j->nwakes = 0;
    for (int i = 0; i < WAKE_ROUNDS; i++) {
        if (prof_wake_sample(j, "before its first call") < 0)
            return -1;
        clock = (int)__atomic_load_n(&j->hdr->device_clock, __ATOMIC_RELAXED);
        if (clock == AO_RUN_CLOCK_EVENTS || clock == AO_RUN_CLOCK_GATED)
            dev[ndev++] = (long long)__atomic_load_n(&j->hdr->device_ns, __ATOMIC_RELAXED);
    }
    if (!j->empty_dev_known) {
        struct ao_stats st;
        j->empty_dev_known = 1;
        ao_stats_of(dev, ndev, &st);
        j->empty_dev_ns = ndev == WAKE_ROUNDS && st.median > 0 ? (long long)st.median : 0;
    }
    return 0;
}

/* One call: inputs written (copied from in[], or drawn fresh from rng when
 * in is NULL), outputs poisoned, both handed to the runner's device by the
 * target, the call timed by ao_job_run, every tensor brought back, and the
 * outputs copied out into out[] (if given) while the runner is stopped.
 * Returns elapsed ns, or -1 with j->status set. */
long long prof_job_call(struct ao_job *j, const long long *dims, float *const *in,
                        struct ao_rng *rng, uint32_t poison, float **out, const char *phase)
{
    return prof_job_call_guarded(j, dims, in, rng, poison, out, NULL, phase);
}

long long prof_job_call_guarded(struct ao_job *j, const long long *dims, float *const *in, struct ao_rng *rng,
                                uint32_t poison, float **out, const struct prof_note *note, const char *phase)
{
    const struct ao_task *t = j->task;
    long long e, t0, t1;

    if (ao_job_hold(j, phase) < 0)
        return -1;
    t0 = ao_now_ns();
    /* a host kernel's inputs are written from its core, into its caches;
     * a device's are copied by DMA, so they are drawn on all the others */
    if (!j->tg->after_call)
        ao_job_on_runner(j);
    j->inputs_copied += in != NULL;
    for (int i = 0; i < t->ninputs; i++) {
        size_t n = ao_task_elems(t, i, dims);
        int parts = in ? 1 : prof_timed_parts(j->tg, j->draw_parts, n);
        if (in) {
            prof_copy_wide(ao_job_tensor(j, i), in[i], n, prof_pass_parts(j, n));
        } else if (parts > 1 && !j->tg->after_call) {
            /* past the caches: from every core we have, the runner's stopped */
            ao_job_on_all(j);
            prof_fill_timed_wide(rng, &t->t[i].dist, ao_job_tensor(j, i), n, parts);
            ao_job_on_runner(j);
        } else {
            prof_fill_timed_wide(rng, &t->t[i].dist, ao_job_tensor(j, i), n, parts);
        }
    }
    if (note) /* some inputs noted where spots.c will hold them after the call */
        for (int i = 0; i < t->ninputs; i++)
            note->fn(note->ctx, i, ao_job_tensor(j, i));
    /* the outputs poisoned here and copied, or by the runner on its device
     * (the region's copies are then stale: nothing reads them before a
     * FETCH has overwritten them) */
    j->hdr->poison = poison;
    j->hdr->first_output = j->tg->poisons_on_device ? (uint32_t)t->ninputs : AO_RUN_MAX_PTRS;
    if (!j->tg->poisons_on_device && poison != PROF_NO_POISON)
        for (int i = t->ninputs; i < t->ninputs + t->noutputs; i++)
            prof_poison(ao_job_tensor(j, i), ao_task_elems(t, i, dims), poison,
                        prof_pass_parts(j, ao_task_elems(t, i, dims)));
    t1 = ao_now_ns();
    j->inputs_ns += t1 - t0;
    if (j->tg->before_call && j->tg->before_call(j, phase) < 0)
        return -1;
    j->to_device_ns += ao_now_ns() - t1;
    ao_job_off_runner(j);
    /* a host kernel's outputs are read after this call: watched from its
     * `done` on (a device's are on the device until the FETCH) */
    j->watch = (out || note) && !j->tg->after_call;
    e = ao_job_run(j, AO_RUN_CMD_CALL, 1, phase);
    j->watch = 0;
    if (e < 0)
        return -1;
    /* the tensors come back only where someone reads them: a correctness
     * set, a sampled timed call, a reference (the inputs are compared then
     * too).  A call learns nothing from it: the copy comes after its DRAIN */
    t0 = ao_now_ns();
    if (out && j->tg->after_call && j->tg->after_call(j, phase) < 0)
        return -1;
    j->from_device_ns += ao_now_ns() - t0;
    for (int i = 0; out && i < t->noutputs; i++) {
        size_t n = ao_task_elems(t, t->ninputs + i, dims);
        prof_copy_wide(out[i], ao_job_tensor(j, t->ninputs + i), n, prof_pass_parts(j, n));
    }
    return e;
}

/* Did the call leave its inputs as they were given?  Names the first one not. */
const char *prof_inputs_changed(struct ao_job *j, const long long *dims, float *const *in)
{
    for (int i = 0; i < j->task->ninputs; i++) {
        size_t n = ao_task_elems(j->task, i, dims);
        if (prof_differ_wide(ao_job_tensor(j, i), in[i], n, prof_pass_parts(j, n)))
            return j->task->t[i].name;
    }
    return NULL;
}

/* Start a job's runner with a fresh secret order of tensor positions. */
int prof_start_job(struct ao_profiler *p, struct ao_job *j, const struct ao_task *t,
                   const long long *dims, double timeout_s, int hold, char *err, size_t errlen)
{
    struct ao_job_opts o = {
        .tg = p->tg, .runner_sandbox = p->tg->runner_sandbox, .drain = p->tg->drain, .bpf = p->bpf, .bpf_len = p->bpf_len, .mem_bytes = p->o.mem_bytes,
        .cpu = j->pin ? j->pin - 1 : p->o.cpu, .place_a = (unsigned)ao_rng_next(&p->choice),
        .place_b = (unsigned)ao_rng_next(&p->choice), .timeout_s = timeout_s, .hold = hold,
        .second = j->second, .metrics = j->metrics};
    j->draw_parts = p->draw_parts;
    return ao_job_start(j, &o, t, dims, err, errlen);
}
