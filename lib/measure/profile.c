/* profile.c - compile, contain, check and time one kernel: the policy that
 * is the same for every target
 *
 * The kernel is built in a sandbox and checked by its target's rules
 * (target.h), then started in a fresh sandbox that shares only a memory
 * region with us (job.h).  We choose every input, poison every output,
 * start every call and stop the clock; the runner just calls `kernel`, and
 * the target moves the tensors to its device and back around each call.
 * References come from the task's trusted reference for the target, run
 * the same way in its own process.  See INTEGRITY.md. */
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/log.h"
#include "core/rng.h"
#include "core/tokens.h"
#include "core/util.h"
#include "measure/elfcheck.h"
#include "measure/job.h"
#include "measure/measurement.h"
#include "measure/profile.h"
#include "measure/sandbox.h"
#include "measure/stats.h"
#include "targets/target.h"
#include "wire/names.h"
#include "wire/verdict.h"

#define NOMINAL_CHECKS 3
/* Timed calls checked against the reference: a uniform sample of all of
 * them (reservoir sampling, decided by our generator before each call), so
 * every timed call is equally liable, whenever the timing ends.  A kernel
 * wrong on a fraction f of its timed calls passes with probability
 * (1-f)^CHECKED_TIMED: 1.6% at f = 1/2, and it must be fast on over half of
 * them to move the median.  Cost: this many reference calls per measurement
 * (docs/BENCHMARKS.md). */
#define CHECKED_TIMED 6
/* ... but never more reference time than this per measurement (a slow
 * reference at a large size: silu at the cpu size takes ~0.5 s a call),
 * and never fewer than CHECKED_MIN: (1-f)^3 is 12.5% at f = 1/2 */
#define CHECKED_MIN 3
#define CHECK_BUDGET_S 2.0
#define POOLS_MAX_BYTES (3ull << 30) /* older pools are dropped past this */
#define STRESS_CHECK 2
/* A call under the roofline is impossible, but the peaks are measured too:
 * only a call this much under it is refused (cheats skip far more work). */
#define WAKE_ROUNDS 31       /* wake-up samples before the kernel's first call */
#define WAKE_SAMPLES_MAX AO_JOB_WAKES /* and one before each timed call */
#define ROOFLINE_SLACK 0.05 /* this check set draws from the stress distributions */
#define FRESH_CALIB_S 300   /* a fresh measurement of the machine stands this long */
#define MAX_SOURCE (256 * 1024)
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
    long long ref_ns;                         /* its slowest call at the nominal shape */
    size_t bytes;                             /* memory its tensors hold */
};

struct ao_profiler {
    struct ao_profiler_opts o;
    const struct ao_target *tg;
    struct pool *built; /* a build-only harness, kept for the next build of its task */
    char root[600];
    struct pool *pools;
    struct ao_rng rng;
    void *bpf;
    size_t bpf_len;
    unsigned seq;
    struct ao_calib fresh; /* the machine measured again, for a kernel under the roofline */
    long long fresh_at;    /* when (0: never) */
};


/* --- data --- */

static void fill(struct ao_rng *r, const struct ao_dist *x, float *p, size_t n)
{
    for (size_t i = 0; i < n; i += 2) {
        double a, b;
        if (x->kind == AO_DIST_UNIFORM) {
            a = x->a + (x->b - x->a) * ao_rng_unit(r);
            b = x->a + (x->b - x->a) * ao_rng_unit(r);
        } else {
            ao_rng_normal2(r, &a, &b);
            a = x->a + x->b * a;
            b = x->a + x->b * b;
            if (x->kind == AO_DIST_ABS_NORMAL) {
                a = fabs(a);
                b = fabs(b);
            }
        }
        p[i] = (float)a;
        if (i + 1 < n)
            p[i + 1] = (float)b;
    }
}

/* Inputs of timed calls, drawn fresh for every call: one 64-bit draw per
 * element (normals as a scaled sum of four 16-bit uniforms, which keeps the
 * mean and spread).  The verified timed sets are drawn the same way, so a
 * kernel cannot tell a checked timed call from an unchecked one. */
static void fill_timed(struct ao_rng *r, const struct ao_dist *x, float *p, size_t n)
{
    const double sc = 1.0 / 65536.0, root3 = 1.7320508075688772;
    for (size_t i = 0; i < n; i++) {
        uint64_t v = ao_rng_next(r);
        double a;
        if (x->kind == AO_DIST_UNIFORM) {
            a = x->a + (x->b - x->a) * (((double)(v >> 11) + 0.5) * (1.0 / 9007199254740992.0));
        } else {
            double u = (double)(v & 0xffff) + (double)((v >> 16) & 0xffff) +
                       (double)((v >> 32) & 0xffff) + (double)(v >> 48);
            a = ((u + 2.0) * sc - 2.0) * root3; /* mean 0, variance 1 */
            a = x->a + x->b * a;
            if (x->kind == AO_DIST_ABS_NORMAL)
                a = fabs(a);
        }
        p[i] = (float)a;
    }
}

static int dataset_alloc(const struct ao_task *t, struct dataset *d, const long long *dims,
                         int with_outputs)
{
    memcpy(d->dims, dims, sizeof d->dims);
    for (int i = 0; i < t->ninputs + (with_outputs ? t->noutputs : 0); i++)
        if (!(d->t[i] = malloc(sizeof(float) * ao_task_elems(t, i, dims))))
            return -1;
    return 0;
}

static void dataset_free(struct dataset *d)
{
    for (int i = 0; i < AO_MAX_TENSORS; i++) {
        free(d->t[i]);
        d->t[i] = NULL;
    }
}

/* relative L2 error in double; +inf when the output is not finite */
static double rel_l2(const float *k, const float *r, size_t n)
{
    double num = 0, den = 0;
    for (size_t i = 0; i < n; i++) {
        double d = (double)k[i] - (double)r[i];
        if (!isfinite(k[i]))
            return INFINITY;
        num += d * d;
        den += (double)r[i] * r[i];
    }
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

static int copy_file(const char *from, const char *to, char *err, size_t errlen)
{
    size_t n;
    char *d = ao_read_file(from, &n, err, errlen);
    int rc;
    if (!d)
        return -1;
    rc = ao_write_file(to, d, n, err, errlen);
    free(d);
    return rc;
}

/* Keep what a model can act on: the compiler's words, without our paths,
 * cut to a readable length. */
static char *trim_diagnostics(const char *text)
{
    struct ao_buf b = {0};
    int lines = 0;

    for (const char *p = text; *p && b.len < DIAG_MAX && lines < 40;) {
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

/* The one rule checked on the source text: its size. */
static int static_check(const char *src, char *reason, size_t len)
{
    size_t n = strlen(src);

    if (n > MAX_SOURCE) {
        snprintf(reason, len, "source is %zu bytes, over the %d byte limit", n, MAX_SOURCE);
        return 1;
    }
    return 0;
}

/* A fresh job directory holding the kernel source and the task's harness. */
static int prepare_job(struct ao_profiler *p, struct pool *pl, struct ao_job *j, const char *source,
                       char *err, size_t errlen)
{
    const char *const *files = p->tg->harness_files;
    char path[900], from[800];

    snprintf(j->dir, sizeof j->dir, "%s/job-XXXXXX", p->root);
    if (!mkdtemp(j->dir)) {
        j->dir[0] = '\0';
        snprintf(err, errlen, "cannot create a job directory: %s", strerror(errno));
        return -1;
    }
    snprintf(path, sizeof path, "%s/%s", j->dir, p->tg->kernel_file);
    if (ao_write_file(path, source, strlen(source), err, errlen) < 0)
        return -1;
    for (int i = 0; files[i]; i++) {
        snprintf(from, sizeof from, "%s/%s", pl->harness, files[i]);
        snprintf(path, sizeof path, "%s/%s", j->dir, files[i]);
        if (copy_file(from, path, err, errlen) < 0)
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

/* Build the job's kernel into its runner inside a sandbox, then apply the
 * target's rules to what was built.  On a verdict (compile error, rejected
 * object) sets j->status; -1 only on our failure. */
static int compile_job(struct ao_profiler *p, struct ao_job *j, char **diag, long long *compile_ns,
                       char *err, size_t errlen)
{
    char log[800], reason[512];
    char sh[] = "/bin/sh", dash_c[] = "-c", cmd[1024];
    char *argv[] = {sh, dash_c, cmd, NULL};
    struct ao_sandbox_spec spec = {0};
    struct ao_sandbox sb;
    int logfd = -1, st, to, rc = -1;
    long long t0 = ao_now_ns();
    char *out = NULL;

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
    if (ao_sandbox_start(&spec, &sb, err, errlen) < 0)
        goto out;
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
static int wake_sample(struct ao_job *j, const char *phase)
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

static int measure_wake(struct ao_job *j)
{
    j->wake_ns = 0;
    j->nwakes = 0;
    for (int i = 0; i < WAKE_ROUNDS; i++)
        if (wake_sample(j, "before its first call") < 0)
            return -1;
    return 0;
}

/* One call: inputs written (copied from in[], or drawn fresh from rng when
 * in is NULL), outputs poisoned, both handed to the runner's device by the
 * target, the call timed by ao_job_run, every tensor brought back, and the
 * outputs copied out into out[] (if given) while the runner is stopped.
 * Returns elapsed ns, or -1 with j->status set. */
static long long job_call(struct ao_job *j, const long long *dims, float *const *in,
                          struct ao_rng *rng, uint32_t poison, float **out, const char *phase)
{
    const struct ao_task *t = j->task;
    long long e;

    if (ao_job_hold(j, phase) < 0)
        return -1;
    ao_job_on_runner(j);
    for (int i = 0; i < t->ninputs; i++) {
        size_t n = ao_task_elems(t, i, dims);
        if (in)
            memcpy(ao_job_tensor(j, i), in[i], n * sizeof(float));
        else
            fill_timed(rng, &t->t[i].dist, ao_job_tensor(j, i), n);
    }
    for (int i = t->ninputs; i < t->ninputs + t->noutputs; i++) {
        uint32_t *o = (uint32_t *)ao_job_tensor(j, i);
        size_t n = ao_task_elems(t, i, dims);
        for (size_t k = 0; k < n; k++)
            o[k] = poison;
    }
    if (j->tg->before_call && j->tg->before_call(j, phase) < 0)
        return -1;
    ao_job_off_runner(j);
    if ((e = ao_job_run(j, AO_RUN_CMD_CALL, 1, phase)) < 0)
        return -1;
    if (j->tg->after_call && j->tg->after_call(j, phase) < 0)
        return -1;
    for (int i = 0; out && i < t->noutputs; i++)
        memcpy(out[i], ao_job_tensor(j, t->ninputs + i),
               ao_task_elems(t, t->ninputs + i, dims) * sizeof(float));
    return e;
}

/* Did the call leave its inputs as they were given?  Names the first one not. */
static const char *inputs_changed(struct ao_job *j, const long long *dims, float *const *in)
{
    for (int i = 0; i < j->task->ninputs; i++)
        if (memcmp(ao_job_tensor(j, i), in[i], ao_task_elems(j->task, i, dims) * sizeof(float)) != 0)
            return j->task->t[i].name;
    return NULL;
}

/* Start a job's runner with a fresh secret order of tensor positions. */
static int start_job(struct ao_profiler *p, struct ao_job *j, const struct ao_task *t,
                     const long long *dims, double timeout_s, int hold, char *err, size_t errlen)
{
    struct ao_job_opts o = {
        .tg = p->tg, .bpf = p->bpf, .bpf_len = p->bpf_len, .mem_bytes = p->o.mem_bytes,
        .cpu = j->pin ? j->pin - 1 : p->o.cpu, .place_a = (unsigned)ao_rng_next(&p->rng),
        .place_b = (unsigned)ao_rng_next(&p->rng), .timeout_s = timeout_s, .hold = hold,
        .second = j->second};
    return ao_job_start(j, &o, t, dims, err, errlen);
}

/* --- pools --- */

static int compute_references(struct ao_profiler *p, struct pool *pl, char *err, size_t errlen)
{
    char path[900];
    char *src = NULL, *diag = NULL;
    struct ao_job j;
    long long cns = 0;
    int rc = -1;

    memset(&j, 0, sizeof j);
    snprintf(path, sizeof path, "%s/%s", pl->task.dir, p->tg->reference_file);
    if (!(src = ao_read_file(path, NULL, err, errlen)))
        return -1;
    /* references may be slow (plain loops in double): allow ten times more */
    if (prepare_job(p, pl, &j, src, err, errlen) < 0 ||
        start_job(p, &j, &pl->task, pl->dims, p->o.timeout_s * 10, 1, err, errlen) < 0 ||
        compile_job(p, &j, &diag, &cns, err, errlen) < 0)
        goto out;
    if (j.status) {
        snprintf(err, errlen, "the reference of '%s' does not build: %s: %.500s", pl->task.name,
                 j.reason, diag ? diag : "");
        goto out;
    }
    if (ao_job_release(&j, err, errlen) < 0)
        goto out;
    for (int s = 0; s < pl->nchecks; s++) {
        struct dataset *d = &pl->check[s];
        long long e;
        ao_job_place(&j, d->dims);
        if ((e = job_call(&j, d->dims, d->t, NULL, 0x7fc00000u, d->t + pl->task.ninputs,
                          "computing the reference")) < 0) {
            snprintf(err, errlen, "the reference of '%s' failed: %s", pl->task.name, j.reason);
            goto out;
        }
        if (s < NOMINAL_CHECKS && e > pl->ref_ns)
            pl->ref_ns = e;
        for (int o = 0; o < pl->task.noutputs; o++) {
            float *r = d->t[pl->task.ninputs + o];
            for (size_t k = 0; k < ao_task_elems(&pl->task, pl->task.ninputs + o, d->dims); k++)
                if (!isfinite(r[k])) {
                    snprintf(err, errlen, "the reference of '%s' gives a non-finite output",
                             pl->task.name);
                    goto out;
                }
        }
    }
    /* the built reference stays for the timed calls' checks (ref_outputs) */
    snprintf(pl->refdir, sizeof pl->refdir, "%s", j.dir);
    ao_job_end(&j);
    j.dir[0] = '\0';
    rc = 0;
out:
    ao_job_free(&j);
    free(src);
    free(diag);
    return rc;
}

/* The reference's outputs for inputs sets[k][0..ninputs), written to
 * refs[k] (the task's outputs), in a fresh process of the pool's built
 * reference.  0, or -1 + err. */
static int ref_outputs(struct ao_profiler *p, struct pool *pl, struct dataset *sets,
                       struct dataset *refs, int n, char *err, size_t errlen)
{
    struct ao_job j;
    int rc = -1;

    memset(&j, 0, sizeof j);
    snprintf(j.dir, sizeof j.dir, "%s", pl->refdir);
    if (start_job(p, &j, &pl->task, pl->dims, p->o.timeout_s * 10, 0, err, errlen) < 0 ||
        (j.sb.sync_fd >= 0 && ao_job_release(&j, err, errlen) < 0))
        goto out;
    for (int k = 0; k < n; k++) {
        ao_job_place(&j, pl->dims);
        if (job_call(&j, pl->dims, sets[k].t, NULL, 0x7fc00000u, refs[k].t + pl->task.ninputs,
                     "checking a timed call") < 0) {
            snprintf(err, errlen, "the reference of '%s' failed on a timed call's inputs: %s",
                     pl->task.name, j.reason);
            goto out;
        }
    }
    rc = 0;
out:
    ao_job_stop(&j, "after its last call");
    ao_job_end(&j); /* the directory is the pool's */
    return rc;
}

/* The target's trusted part of the task's runner, in a directory of its own. */
static int build_harness(struct ao_profiler *p, struct pool *pl, char *err, size_t errlen)
{
    if (ao_name(pl->harness, sizeof pl->harness, "%s/harness-%s-%u", p->root, pl->task.name, p->seq++) < 0)
        return ao_errf(err, errlen, "the profiler's directory '%s' is too long", p->root);
    if (ao_mkdirs(pl->harness, 0755) < 0) {
        snprintf(err, errlen, "cannot create '%s': %s", pl->harness, strerror(errno));
        return -1;
    }
    return p->tg->harness(&pl->task, pl->harness, err, errlen);
}

static void pool_free(struct pool *pl)
{
    for (int s = 0; s < NOMINAL_CHECKS + 1; s++)
        dataset_free(&pl->check[s]);
    if (pl->refdir[0])
        ao_rmtree(pl->refdir);
    if (pl->harness[0])
        ao_rmtree(pl->harness);
    free(pl);
}

/* An unannounced shape: each free size shrunk to a random smaller value,
 * keeping the task's constraints (or the nominal shape if draws break them). */
static void extra_shape(struct ao_profiler *p, const struct ao_task *t, const long long *dims,
                        long long *x)
{
    char err[AO_ERRLEN];

    for (int tries = 0; tries < 20; tries++) {
        for (int i = 0; i < t->ndims; i++) {
            long long m = t->dim_multiple[i], lo = dims[i] / 2, hi = dims[i] - 1, v;
            x[i] = dims[i];
            if (t->dim_fixed[i] || dims[i] < 2 * m || hi < lo)
                continue;
            v = lo + (long long)(ao_rng_next(&p->rng) % (unsigned long long)(hi - lo + 1));
            v = v / m * m;
            x[i] = v >= m ? v : m;
        }
        if (ao_task_check_dims(t, x, err, sizeof err) == 0)
            return;
    }
    memcpy(x, dims, sizeof(long long) * AO_MAX_DIMS);
}

/* Drop the least recently used pools until `need` more bytes fit. */
static void pools_trim(struct ao_profiler *p, size_t need)
{
    for (;;) {
        struct pool **pp = &p->pools, **last = NULL;
        size_t total = need;
        for (; *pp; pp = &(*pp)->next) {
            total += (*pp)->bytes;
            last = pp;
        }
        if (total <= POOLS_MAX_BYTES || !last)
            return;
        {
            struct pool *old = *last;
            *last = NULL;
            pool_free(old);
        }
    }
}

static struct pool *pool_get(struct ao_profiler *p, const struct ao_task *t, const char *size,
                             char *err, size_t errlen)
{
    char key[700];
    struct pool *pl;
    long long xdims[AO_MAX_DIMS];

    if (ao_name(key, sizeof key, "%s|%s|%s", t->dir, t->name, size) < 0)
        return ao_errf(err, errlen, "size class '%.40s' is too long", size), NULL;
    for (struct pool **pp = &p->pools; (pl = *pp); pp = &pl->next)
        if (strcmp(pl->key, key) == 0) {
            *pp = pl->next; /* most recently used first */
            pl->next = p->pools;
            p->pools = pl;
            return pl;
        }
    if (!(pl = calloc(1, sizeof *pl))) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    snprintf(pl->key, sizeof pl->key, "%s", key);
    pl->task = *t;
    if (ao_task_size(t, size, pl->dims, err, errlen) < 0)
        goto fail;
    extra_shape(p, t, pl->dims, xdims);
    pl->bytes = (NOMINAL_CHECKS + 1) * ao_job_bytes(t, pl->dims);
    pools_trim(p, pl->bytes);
    pl->nchecks = NOMINAL_CHECKS + (memcmp(xdims, pl->dims, sizeof xdims) != 0);
    for (int s = 0; s < pl->nchecks; s++) {
        const long long *d = s < NOMINAL_CHECKS ? pl->dims : xdims;
        int stress = s == STRESS_CHECK && t->has_stress;
        if (dataset_alloc(t, &pl->check[s], d, 1) < 0)
            goto oom;
        for (int i = 0; i < t->ninputs; i++)
            fill(&p->rng, stress ? &t->t[i].stress : &t->t[i].dist, pl->check[s].t[i],
                 ao_task_elems(t, i, d));
    }
    if (build_harness(p, pl, err, errlen) < 0 || compute_references(p, pl, err, errlen) < 0)
        goto fail;
    pl->next = p->pools;
    p->pools = pl;
    return pl;
oom:
    snprintf(err, errlen, "out of memory for the inputs of '%s' at size '%s'", t->name, size);
fail:
    pool_free(pl);
    return NULL;
}

/* --- measuring --- */

static int add_error(cJSON *arr, const char *set, const char *output, double e)
{
    cJSON *o = cJSON_CreateObject();
    if (!o || !cJSON_AddItemToArray(arr, o)) {
        cJSON_Delete(o);
        return -1;
    }
    cJSON_AddStringToObject(o, "set", set);
    cJSON_AddStringToObject(o, "output", output);
    if (isfinite(e))
        cJSON_AddNumberToObject(o, "rel_l2", e);
    else
        cJSON_AddStringToObject(o, "rel_l2", "non-finite");
    return 0;
}

/* Compare outputs of a call against a reference; sets j->status on failure. */
static int check_outputs(struct ao_job *j, const struct ao_task *t, float **out,
                         const struct dataset *ref, const char *set, cJSON *errors,
                         double *max_err)
{
    for (int o = 0; o < t->noutputs; o++) {
        double e = rel_l2(out[o], ref->t[t->ninputs + o],
                          ao_task_elems(t, t->ninputs + o, ref->dims));
        add_error(errors, set, t->t[t->ninputs + o].name, e);
        if (!(e <= *max_err) && isfinite(*max_err))
            *max_err = e;
        if (!(e <= t->tolerance)) {
            j->status = AO_V_INCORRECT;
            if (isfinite(e))
                snprintf(j->reason, sizeof j->reason, "output '%s' on input set '%s': relative "
                         "L2 error %.3g over the tolerance %.3g", t->t[t->ninputs + o].name, set,
                         e, t->tolerance);
            else
                snprintf(j->reason, sizeof j->reason, "output '%s' on input set '%s' has NaN or "
                         "infinite values (an overflow, or an element never written: outputs "
                         "are poisoned with NaN before each call)", t->t[t->ninputs + o].name, set);
            return -1;
        }
    }
    return 0;
}

struct timed {
    struct ao_stats st;
    struct ao_stats device; /* the runner's own timer (a GPU's events), if it has one */
    long long kernel_ns; /* total time inside kernel calls, checks included */
    long long wake_ns;   /* taken off every call: continuing the stopped runner */
    long long wake_u_ns; /* how sure that is: the lowest wake-ups' own spread */
    long long check_ns;  /* checking the sampled timed calls against the reference */
};

/* How far the lowest wake-up could be off (ao_low_tail): quiet, a few
 * hundred ns; on a busy machine, microseconds, and then a tiny kernel's
 * time is that uncertain. */
static long long wake_uncertainty(const struct ao_job *j)
{
    return ao_low_tail(j->wakes, j->nwakes);
}

/* The timed calls' latencies: their raw times less the wake-up estimate
 * as it stands (as run_call takes it off). */
static void take_wake(const long long *raw, long long *lat, int n, long long wake)
{
    for (int i = 0; i < n; i++)
        lat[i] = raw[i] > wake ? raw[i] - wake : raw[i];
}

/* Which timed call each kept sample came from, with its inputs and the
 * kernel's outputs (t[ninputs..]); refs[] gets the reference's outputs. */
struct sample {
    int call[CHECKED_TIMED];
    struct dataset in_out[CHECKED_TIMED], refs[CHECKED_TIMED];
    int n;    /* kept so far */
    int size; /* to keep (sample_size) */
    long long check_ns; /* what checking them took */
};

static void sample_free(struct sample *s)
{
    for (int k = 0; k < CHECKED_TIMED; k++) {
        dataset_free(&s->in_out[k]);
        dataset_free(&s->refs[k]);
    }
}

/* How many timed calls a measurement checks: CHECKED_TIMED, fewer when the
 * reference is slow (CHECK_BUDGET_S of reference time at most), never
 * under CHECKED_MIN. */
static int sample_size(const struct pool *pl)
{
    long long fit = pl->ref_ns > 0 ? (long long)(CHECK_BUDGET_S * 1e9) / pl->ref_ns : CHECKED_TIMED;
    return fit > CHECKED_TIMED ? CHECKED_TIMED : fit < CHECKED_MIN ? CHECKED_MIN : (int)fit;
}

/* Is timed call n (0-based) kept, and where?  -1: not.  The generator is
 * drawn only past the first s->size calls (ao_reservoir_slot). */
static int sample_slot(struct ao_profiler *p, struct sample *s, int n)
{
    return ao_reservoir_slot(n, s->size, n < s->size ? 0 : ao_rng_next(&p->rng));
}

/* The kept timed calls against the reference on their own inputs: sets
 * j->status on a wrong one; -1 + err when the reference itself failed. */
static int check_sample_now(struct ao_profiler *p, struct pool *pl, struct ao_job *j,
                            struct sample *s, cJSON *errors, double *max_err, char *err,
                            size_t errlen)
{
    const struct ao_task *t = &pl->task;
    float *out[AO_MAX_TENSORS] = {0};
    char set[32];

    for (int k = 0; k < s->n; k++) {
        memcpy(s->refs[k].dims, pl->dims, sizeof s->refs[k].dims);
        for (int o = t->ninputs; o < t->ninputs + t->noutputs; o++)
            if (!(s->refs[k].t[o] = malloc(sizeof(float) * ao_task_elems(t, o, pl->dims)))) {
                snprintf(err, errlen, "out of memory for the timed checks");
                return -1;
            }
    }
    if (ref_outputs(p, pl, s->in_out, s->refs, s->n, err, errlen) < 0)
        return -1;
    for (int k = 0; k < s->n; k++) {
        for (int o = 0; o < t->noutputs; o++)
            out[o] = s->in_out[k].t[t->ninputs + o];
        snprintf(set, sizeof set, "timed%d", s->call[k]);
        if (check_outputs(j, t, out, &s->refs[k], set, errors, max_err) < 0) {
            /* right on the check sets, wrong when timed: a replay, a race,
             * or a kernel that changes its ways once checks seem over */
            j->status = AO_V_REJECTED;
            snprintf(j->reason + strlen(j->reason), sizeof j->reason - strlen(j->reason),
                     " (in a timed call, after passing the correctness checks: outputs "
                     "must be computed from the inputs of each call)");
            return 0;
        }
    }
    return 0;
}

static int check_sample(struct ao_profiler *p, struct pool *pl, struct ao_job *j,
                        struct sample *s, cJSON *errors, double *max_err, char *err, size_t errlen)
{
    long long t0 = ao_now_ns();
    int rc;

    if (s->n == 0)
        return 0;
    rc = check_sample_now(p, pl, j, s, errors, max_err, err, errlen);
    s->check_ns = ao_now_ns() - t0;
    return rc;
}

/* Correctness on every check set, poisoned with NaN, the first again with
 * another poison, so an output left untouched can never pass; out[] has
 * room for the outputs.  0, or -1 with j->status set. */
static int correctness(struct pool *pl, struct ao_job *j, float **out, cJSON *errors,
                       double *max_err, long long *kernel_ns)
{
    const struct ao_task *t = &pl->task;
    long long e;
    char set[32];
    const char *bad;

    for (int s = 0; s <= pl->nchecks; s++) {
        const struct dataset *d = &pl->check[s < pl->nchecks ? s : 0];
        uint32_t poison = s < pl->nchecks ? 0x7fc00000u : 0x7f7f7f7fu;
        snprintf(set, sizeof set, s == pl->nchecks ? "check0-repoisoned" :
                 s == NOMINAL_CHECKS ? "check-other-shape" :
                 s == STRESS_CHECK && t->has_stress ? "check-stress" : "check%d", s);
        ao_job_place(j, d->dims);
        if ((e = job_call(j, d->dims, d->t, NULL, poison, out, "on a correctness check")) < 0)
            return -1;
        *kernel_ns += e;
        if ((bad = inputs_changed(j, d->dims, d->t))) {
            j->status = AO_V_REJECTED;
            snprintf(j->reason, sizeof j->reason, "wrote to its input '%s' (set '%s'): "
                     "inputs are read-only", bad, set);
            return -1;
        }
        if (check_outputs(j, t, out, d, set, errors, max_err) < 0)
            return -1;
    }
    return 0;
}

/* Correctness on the check sets, then timed calls on fresh inputs, a
 * uniform sample of them (secretly chosen) checked against the reference
 * afterwards. */
static int measure(struct ao_profiler *p, struct pool *pl, struct ao_job *j, cJSON *errors,
                   double *max_err, struct timed *m, char *err, size_t errlen)
{
    const struct ao_task *t = &pl->task;
    float *out[AO_MAX_TENSORS] = {0};
    long long *lat = NULL, *raw = NULL, *dev = NULL, e = 0, warm = 0;
    int n = 0, min_calls, rc = -1;
    struct sample smp;
    const char *bad;

    memset(&smp, 0, sizeof smp);
    smp.size = sample_size(pl);
    snprintf(err, errlen, "out of memory while measuring");

    m->kernel_ns = 0;
    if (measure_wake(j) < 0)
        goto out;
    m->wake_ns = j->wake_ns;
    for (int o = 0; o < t->noutputs; o++)
        if (!(out[o] = malloc(sizeof(float) * ao_task_elems(t, t->ninputs + o, pl->dims))))
            goto out;
    if (!(lat = malloc(sizeof *lat * (size_t)p->o.max_calls)) ||
        !(raw = malloc(sizeof *raw * (size_t)p->o.max_calls)) ||
        !(dev = malloc(sizeof *dev * (size_t)p->o.max_calls)))
        goto out;
    if (correctness(pl, j, out, errors, max_err, &m->kernel_ns) < 0)
        goto out;
    /* warm up: at least two calls and warmup_s of running, so the core has
     * left any low-power state before the clock counts; the last call
     * sizes the run */
    for (int w = 0; w < 2 || (warm < (long long)(p->o.warmup_s * 1e9) && w < 100000); w++) {
        if (w < 2) {
            ao_job_place(j, pl->dims);
            e = job_call(j, pl->dims, NULL, &p->rng, 0x7fc00000u, NULL, "while warming up");
        } else {
            /* the same inputs again: warming up needs no fresh data */
            e = ao_job_run(j, AO_RUN_CMD_CALL, 0, "while warming up");
        }
        if (e < 0)
            goto out;
        m->kernel_ns += e;
        warm += e;
    }
    min_calls = e > 0 ? (int)(p->o.budget_s * 1e9 / (double)e) : 10;
    min_calls = min_calls < 3 ? 3 : min_calls > 10 ? 10 : min_calls;
    for (long long spent = 0; n < p->o.max_calls;) {
        int v = sample_slot(p, &smp, n);
        if ((n < 32 || n % 4 == 0) && wake_sample(j, "in a timed call") < 0)
            goto out; /* spread over the calls, at most about 90 */
        ao_job_place(j, pl->dims);
        if (v >= 0) {
            /* drawn as an unchecked call's are, and kept to check later */
            struct dataset *d = &smp.in_out[v];
            if (!d->t[0] && dataset_alloc(t, d, pl->dims, 1) < 0)
                goto out;
            for (int i = 0; i < t->ninputs; i++)
                fill_timed(&p->rng, &t->t[i].dist, d->t[i], ao_task_elems(t, i, pl->dims));
            if ((e = job_call(j, pl->dims, d->t, NULL, 0x7fc00000u, d->t + t->ninputs,
                              "in a timed call")) < 0)
                goto out;
            if ((bad = inputs_changed(j, pl->dims, d->t))) {
                j->status = AO_V_REJECTED;
                snprintf(j->reason, sizeof j->reason, "wrote to its input '%s' in timed call "
                         "%d: inputs are read-only", bad, n);
                goto out;
            }
            smp.call[v] = n;
            if (v >= smp.n)
                smp.n = v + 1;
        } else {
            /* values the kernel's process has never seen */
            if ((e = job_call(j, pl->dims, NULL, &p->rng, 0x7fc00000u, NULL, "in a timed call")) < 0)
                goto out;
        }
        m->kernel_ns += e;
        spent += e;
        /* written by the kernel's process: reported beside ours, never used */
        dev[n] = (long long)__atomic_load_n(&j->hdr->device_ns, __ATOMIC_RELAXED);
        raw[n++] = j->raw_ns;
        if (n >= min_calls) {
            take_wake(raw, lat, n, j->wake_ns);
            ao_stats_of(lat, n, &m->st);
            if (m->st.spread <= p->o.target_spread || spent >= (long long)(p->o.budget_s * 1e9))
                break;
        }
    }
    take_wake(raw, lat, n, j->wake_ns);
    ao_stats_of(lat, n, &m->st);
    ao_stats_of(dev, n, &m->device);
    m->wake_ns = j->wake_ns;
    m->wake_u_ns = wake_uncertainty(j);
    ao_job_stop(j, "after its last call");
    err[0] = '\0';
    if (check_sample(p, pl, j, &smp, errors, max_err, err, errlen) < 0)
        goto out;
    m->check_ns = smp.check_ns;
    rc = 0;
out:
    sample_free(&smp);
    for (int o = 0; o < t->noutputs; o++)
        free(out[o]);
    free(lat);
    free(raw);
    free(dev);
    return rc;
}

static int set_str(char **dst, const char *s)
{
    free(*dst);
    *dst = s ? strdup(s) : NULL;
    return s && !*dst ? -1 : 0;
}

static void layers_json(struct ao_measurement *r, const char *layers, int seccomp)
{
    char buf[600];
    cJSON *a = cJSON_CreateArray();
    snprintf(buf, sizeof buf, "%s%s", layers, seccomp ? ",seccomp" : "");
    for (char *s = strtok(buf, ","); s; s = strtok(NULL, ","))
        cJSON_AddItemToArray(a, cJSON_CreateString(s));
    cJSON_Delete(r->sandbox);
    r->sandbox = a;
}

/* The result's verdict from the job's: status, reason, the errors of the
 * checks (taken from *errors when there are any), the wall time. */
static void set_verdict(struct ao_measurement *r, const struct ao_job *j, const struct ao_task *t,
                        double max_err, cJSON **errors, long long t0)
{
    r->verdict = j->status;
    if (j->reason[0])
        set_str(&r->reason, j->reason);
    r->tolerance = t->tolerance;
    if (cJSON_GetArraySize(*errors) > 0) {
        r->max_rel_l2 = max_err;
        cJSON_Delete(r->rel_l2);
        r->rel_l2 = *errors;
        *errors = NULL;
    }
    r->wall_ns = ao_now_ns() - t0;
}

/* One full measurement in a fresh process. */
static int run_once(struct ao_profiler *p, struct pool *pl, struct ao_job *j,
                    struct ao_measurement *r, cJSON *errors, double *max_err,
                    struct timed *m, char *err, size_t errlen)
{
    if (!j->started && start_job(p, j, &pl->task, pl->dims, p->o.timeout_s, 0, err, errlen) < 0)
        return -1;
    if (j->sb.sync_fd >= 0 && ao_job_release(j, err, errlen) < 0)
        return -1;
    layers_json(r, j->sb.layers, 1);
    if (measure(p, pl, j, errors, max_err, m, err, errlen) < 0 && !j->status)
        return -1;
    ao_job_stop(j, "after its last call");
    return 0;
}

/* The machine's peaks measured now (kept for FRESH_CALIB_S), or NULL + err. */
static const struct ao_calib *fresh_calib(struct ao_profiler *p, char *err, size_t errlen)
{
    if (p->fresh_at && ao_now_ns() - p->fresh_at < FRESH_CALIB_S * 1000000000LL)
        return &p->fresh;
    if (p->tg->calibrate(NULL, p->o.bw_mib, &p->fresh, err, errlen) < 0)
        return NULL;
    p->fresh_at = ao_now_ns();
    return &p->fresh;
}

int ao_profiler_run(struct ao_profiler *p, const struct ao_task *t, const char *size,
                    const char *source, double parent_ns, struct ao_measurement *r, char *err,
                    size_t errlen)
{
    struct pool *pl;
    struct ao_job j;
    struct timed m, m2;
    char reason[512], *diag = NULL;
    long long t0 = ao_now_ns(), compile_ns = 0;
    double max_err = 0, mm, vec, bytes;
    cJSON *errors = cJSON_CreateArray(), *timing;
    int rc = -1, rechecked = 0;

    memset(&j, 0, sizeof j);
    memset(&m, 0, sizeof m);
    memset(&m2, 0, sizeof m2);
    if (!errors)
        goto fail;
    if (static_check(source, reason, sizeof reason)) {
        j.status = AO_V_REJECTED;
        snprintf(j.reason, sizeof j.reason, "%s", reason);
        goto verdict;
    }
    if (!(pl = pool_get(p, t, size, err, errlen)))
        goto fail;
    if (prepare_job(p, pl, &j, source, err, errlen) < 0 ||
        start_job(p, &j, &pl->task, pl->dims, p->o.timeout_s, 1, err, errlen) < 0 ||
        compile_job(p, &j, &diag, &compile_ns, err, errlen) < 0)
        goto fail;
    if (diag)
        set_str(&r->diagnostics, diag);
    if (j.status)
        goto verdict;
    if (run_once(p, pl, &j, r, errors, &max_err, &m, err, errlen) < 0)
        goto fail;
    if (j.status)
        goto verdict;
    /* a big jump over the parent is measured again, cold, in a new process */
    if (isfinite(parent_ns) && parent_ns / m.st.median > 10) {
        struct ao_job j2;
        int rc2;
        memset(&j2, 0, sizeof j2);
        snprintf(j2.dir, sizeof j2.dir, "%s", j.dir);
        rc2 = run_once(p, pl, &j2, r, errors, &max_err, &m2, err, errlen);
        ao_job_end(&j2); /* its directory is j's, removed with it */
        if (rc2 < 0)
            goto fail;
        if (j2.status) {
            j.status = j2.status;
            ao_errf(j.reason, sizeof j.reason, "on a second, fresh measurement: %s", j2.reason);
            goto verdict;
        }
        if (m2.st.median > m.st.median) { /* the slower one, with its own wake-up */
            m.st = m2.st;
            m.device = m2.device;
            m.wake_ns = m2.wake_ns;
            m.wake_u_ns = m2.wake_u_ns;
        }
        m.kernel_ns += m2.kernel_ns;
    }
    r->latency_ns = m.st.median;
    r->latency_min_ns = m.st.min;
    r->spread = m.st.spread;
    r->repeats = m.st.n;
    r->steady = m.st.spread <= p->o.target_spread;
    if (p->o.calib && ao_task_work(t, pl->dims, &mm, &vec, &bytes, err, errlen) == 0) {
        const struct ao_calib *c = p->o.calib;
        double tb = bytes / ao_calib_bw_for(c, bytes), tm = mm / c->fma_gflops, tv = vec / c->vec_gflops;
        r->t_min_ns = fmax(tb, fmax(tm, tv));
        r->t_memory_ns = tb; /* the three terms, so a model sees which resource is near */
        r->t_matmul_ns = tm;
        r->t_elementwise_ns = tv;
        set_str(&r->bound, r->t_min_ns == tb ? "memory" : r->t_min_ns == tm ? "matmul" : "elementwise");
        set_str(&r->calibration, c->id);
        r->pct_of_peak = r->t_min_ns / m.st.median;
        /* under the minimum by more than the wake-up taken off could be
         * wrong, or the calibration was taken on a busy machine: it is held
         * against a fresh measurement of the machine first, and refused only
         * if it still beats that by more than the uncertainty of both */
        if (m.st.min + (double)m.wake_u_ns < r->t_min_ns * (1 - ROOFLINE_SLACK)) {
            const struct ao_calib *f;
            double t2, u;
            if (!(f = fresh_calib(p, err, errlen)))
                goto fail;
            t2 = fmax(bytes / fmax(ao_calib_bw_for(c, bytes), ao_calib_bw_for(f, bytes)),
                      fmax(mm / fmax(c->fma_gflops, f->fma_gflops),
                           vec / fmax(c->vec_gflops, f->vec_gflops)));
            u = ROOFLINE_SLACK + fmax(f->bw_spread, fmax(f->fma_spread, f->vec_spread));
            if (m.st.min + (double)m.wake_u_ns < t2 * (1 - u)) {
                j.status = AO_V_REJECTED;
                snprintf(j.reason, sizeof j.reason, "a call took %.0f ns (give or take %lld ns), "
                         "under the roofline minimum of %.0f ns (%s bound) by more than %.0f%%, "
                         "also against a fresh measurement of this machine (%.1f GB/s, %.0f "
                         "GFLOP/s FMA): impossible here, so not measured honestly", m.st.min,
                         m.wake_u_ns, t2, r->bound, 100 * u, f->bw_gbs, f->fma_gflops);
                goto verdict;
            }
            /* honest after all: the machine is faster than its stored figures */
            ao_warn("a kernel beat the stored roofline of '%s' (%.0f ns); a fresh measurement of "
                    "the machine allows %.0f ns: the stored calibration is low (accelopt "
                    "calibrate measures it again)", t->name, r->t_min_ns, t2);
            r->t_min_ns = fmin(r->t_min_ns, t2);
            r->pct_of_peak = r->t_min_ns / m.st.median;
            rechecked = 1;
        }
    }
    j.status = AO_V_OK;
verdict:
    set_verdict(r, &j, t, max_err, &errors, t0);
    if ((timing = cJSON_CreateObject())) {
        cJSON_AddNumberToObject(timing, "compile_ns", (double)compile_ns);
        cJSON_AddNumberToObject(timing, "kernel_ns", (double)(m.kernel_ns + m2.kernel_ns));
        cJSON_AddNumberToObject(timing, "measurements", m2.st.n > 0 ? 2 : m.st.n > 0 ? 1 : 0);
        cJSON_AddNumberToObject(timing, "wake_ns", (double)m.wake_ns);
        cJSON_AddNumberToObject(timing, "wake_uncertainty_ns", (double)m.wake_u_ns);
        cJSON_AddNumberToObject(timing, "checks_ns", (double)(m.check_ns + m2.check_ns));
        if (rechecked) /* it beat the stored roofline: the fresh machine figures allowed it */
            cJSON_AddNumberToObject(timing, "roofline_rechecked_bw_gbs", p->fresh.bw_gbs);
        if (m.device.median > 0) /* the runner's own figure: not what the verdict used */
            cJSON_AddNumberToObject(timing, "runner_reported_median_ns", m.device.median);
        cJSON_AddNumberToObject(timing, "overhead_ns",
                                (double)(r->wall_ns - compile_ns - m.kernel_ns - m2.kernel_ns));
        cJSON_Delete(r->timing);
        r->timing = timing;
    }
    rc = 0;
    goto out;
fail:
    r->verdict = AO_V_INTERNAL_ERROR;
    set_str(&r->reason, err);
out:
    ao_job_free(&j);
    cJSON_Delete(errors);
    free(diag);
    return rc;
}

/* --- head to head --- */

#define H2H_MIN_ROUNDS 21
/* Two processes of one kernel differ by this much in one sitting (where
 * their tensors and pages fall): the interval is never narrower than the
 * speedup times 1 -/+ this (docs/BENCHMARKS.md, the A/A runs). */
#define H2H_SYSTEMATIC 0.04

/* Build and start one side of a head-to-head: 0, or -1 with j->status (a
 * verdict) or err. */
static int h2h_side(struct ao_profiler *p, struct pool *pl, struct ao_job *j, const char *src,
                    char **diag, char *err, size_t errlen)
{
    long long cns;

    if (prepare_job(p, pl, j, src, err, errlen) < 0 ||
        start_job(p, j, &pl->task, pl->dims, p->o.timeout_s, 1, err, errlen) < 0 ||
        compile_job(p, j, diag, &cns, err, errlen) < 0)
        return -1;
    if (j->status)
        return -1;
    if (ao_job_release(j, err, errlen) < 0)
        return -1;
    return measure_wake(j);
}

int ao_profiler_compare(struct ao_profiler *p, const struct ao_task *t, const char *size,
                        const char *source, const char *base_source, struct ao_measurement *r,
                        char *err, size_t errlen)
{
    struct pool *pl;
    struct ao_job jb, jk; /* the baseline, the kernel */
    struct ao_job *side[2] = {&jb, &jk};
    struct sample smp;
    struct dataset fresh;
    float *out[AO_MAX_TENSORS] = {0};
    double *ratio = NULL, max_err = 0;
    long long *lat[2] = {NULL, NULL}, spent = 0, kns = 0, t0 = ao_now_ns();
    char *diag = NULL;
    cJSON *errors = cJSON_CreateArray(), *base_errors = cJSON_CreateArray(), *h;
    int n = 0, rc = -1, max = p->o.max_calls > H2H_MIN_ROUNDS ? p->o.max_calls : H2H_MIN_ROUNDS;

    memset(&jb, 0, sizeof jb);
    memset(&jk, 0, sizeof jk);
    jb.second = 1; /* two runners at once: each in its own cgroup */
    memset(&smp, 0, sizeof smp);
    memset(&fresh, 0, sizeof fresh);
    if (!errors || !base_errors)
        goto oom;
    if (static_check(base_source, err, errlen)) /* the baseline is the task's: it must pass */
        goto fail;
    if (static_check(source, jk.reason, sizeof jk.reason)) {
        jk.status = AO_V_REJECTED;
        goto verdict;
    }
    if (!(pl = pool_get(p, t, size, err, errlen)))
        goto fail;
    smp.size = sample_size(pl);
    if (dataset_alloc(t, &fresh, pl->dims, 0) < 0 || !(ratio = malloc(sizeof *ratio * (size_t)max)) ||
        !(lat[0] = malloc(sizeof **lat * (size_t)max)) || !(lat[1] = malloc(sizeof **lat * (size_t)max)))
        goto oom;
    for (int o = 0; o < t->noutputs; o++)
        if (!(out[o] = malloc(sizeof(float) * ao_task_elems(t, t->ninputs + o, pl->dims))))
            goto oom;
    /* both built, started, and correct on the check sets */
    for (int s = 0; s < 2; s++) {
        double scratch = 0;
        if (h2h_side(p, pl, side[s], s ? source : base_source, &diag, err, errlen) < 0 ||
            correctness(pl, side[s], out, s ? errors : base_errors, s ? &max_err : &scratch, &kns) < 0) {
            if (!side[s]->status)
                goto fail;
            if (s == 0) { /* the baseline is the task's own: it must pass */
                snprintf(err, errlen, "the baseline failed its head-to-head: %s", jb.reason);
                goto fail;
            }
            goto verdict;
        }
        if (s == 0 && jb.cpu >= 0)
            jk.pin = jb.cpu + 1; /* both on one core: the same machine for both */
    }
    /* warm-up, then rounds: the same fresh inputs for both, in a random
     * order, each call timed as any timed call is */
    for (int w = 0; w < 2; w++)
        for (int s = 0; s < 2; s++) {
            ao_job_place(side[s], pl->dims);
            if (job_call(side[s], pl->dims, NULL, &p->rng, 0x7fc00000u, NULL, "while warming up") < 0)
                goto side_failed;
        }
    while (n < max) {
        int v = sample_slot(p, &smp, n), first = (int)(ao_rng_next(&p->rng) & 1);
        struct dataset *d = &fresh;
        if (v >= 0) {
            d = &smp.in_out[v];
            if (!d->t[0] && dataset_alloc(t, d, pl->dims, 1) < 0)
                goto oom;
        }
        for (int i = 0; i < t->ninputs; i++)
            fill_timed(&p->rng, &t->t[i].dist, d->t[i], ao_task_elems(t, i, pl->dims));
        for (int k = 0; k < 2; k++) {
            int s = k ? !first : first;
            long long e;
            if ((n < 32 || n % 4 == 0) && wake_sample(side[s], "in a timed call") < 0)
                goto side_failed;
            ao_job_place(side[s], pl->dims);
            if ((e = job_call(side[s], pl->dims, d->t, NULL, 0x7fc00000u,
                              s == 1 && v >= 0 ? d->t + t->ninputs : NULL, "in a timed call")) < 0)
                goto side_failed;
            lat[s][n] = e;
            spent += e;
        }
        if (v >= 0) {
            smp.call[v] = n;
            if (v >= smp.n)
                smp.n = v + 1;
        }
        ratio[n] = lat[1][n] > 0 ? (double)lat[0][n] / (double)lat[1][n] : 0;
        n++;
        if (n >= H2H_MIN_ROUNDS && spent >= (long long)(2 * p->o.budget_s * 1e9))
            break;
    }
    for (int s = 0; s < 2; s++)
        ao_job_stop(side[s], "after its last call");
    if (check_sample(p, pl, &jk, &smp, errors, &max_err, err, errlen) < 0)
        goto fail;
    if (jk.status)
        goto verdict;
    {
        /* the median of the paired ratios, and its distribution-free 95%
         * interval: order statistics k and n-1-k of the sorted ratios */
        struct ao_stats sb, sk;
        double low, high;
        double speedup;
        ao_median_interval(ratio, n, H2H_SYSTEMATIC, &speedup, &low, &high);
        ao_stats_of(lat[0], n, &sb);
        ao_stats_of(lat[1], n, &sk);
        r->latency_ns = sk.median;
        r->latency_min_ns = sk.min;
        r->spread = sk.spread;
        r->repeats = n;
        r->steady = sk.spread <= p->o.target_spread;
        if ((h = cJSON_CreateObject())) {
            cJSON_AddNumberToObject(h, "speedup", speedup);
            cJSON_AddNumberToObject(h, "speedup_low", low);
            cJSON_AddNumberToObject(h, "speedup_high", high);
            cJSON_AddNumberToObject(h, "rounds", n);
            cJSON_AddNumberToObject(h, "baseline_median_ns", sb.median);
            cJSON_AddNumberToObject(h, "baseline_spread", sb.spread);
            cJSON_AddNumberToObject(h, "kernel_median_ns", sk.median);
            cJSON_AddNumberToObject(h, "kernel_spread", sk.spread);
            cJSON_Delete(r->head_to_head);
            r->head_to_head = h;
        }
    }
    jk.status = AO_V_OK;
verdict:
    set_verdict(r, &jk, t, max_err, &errors, t0);
    rc = 0;
    goto out;
side_failed:
    if (jb.status) {
        snprintf(err, errlen, "the baseline failed its head-to-head: %s", jb.reason);
        goto fail;
    }
    goto verdict;
oom:
    snprintf(err, errlen, "out of memory for a head-to-head");
fail:
    r->verdict = AO_V_INTERNAL_ERROR;
    set_str(&r->reason, err);
out:
    sample_free(&smp);
    dataset_free(&fresh);
    for (int o = 0; o < t->noutputs; o++)
        free(out[o]);
    free(ratio);
    free(lat[0]);
    free(lat[1]);
    ao_job_free(&jb);
    ao_job_free(&jk);
    cJSON_Delete(errors);
    cJSON_Delete(base_errors);
    free(diag);
    return rc;
}

int ao_profiler_build(struct ao_profiler *p, const struct ao_task *t, const char *source,
                      struct ao_measurement *r, char *err, size_t errlen)
{
    struct pool *pl = p->built;
    struct ao_job j;
    char reason[512], *diag = NULL;
    long long t0 = ao_now_ns(), compile_ns = 0;
    cJSON *timing;
    int rc = -1;

    memset(&j, 0, sizeof j);
    if (pl && (strcmp(pl->task.name, t->name) != 0 || strcmp(pl->task.sha256, t->sha256) != 0)) {
        pool_free(pl);
        pl = p->built = NULL;
    }
    if (!pl) {
        if (!(pl = p->built = calloc(1, sizeof *pl))) {
            snprintf(err, errlen, "out of memory");
            goto fail;
        }
        pl->task = *t;
        if (build_harness(p, pl, err, errlen) < 0) {
            pool_free(pl);
            p->built = NULL;
            goto fail;
        }
    }
    if (static_check(source, reason, sizeof reason)) {
        j.status = AO_V_REJECTED;
        snprintf(j.reason, sizeof j.reason, "%s", reason);
    } else if (prepare_job(p, pl, &j, source, err, errlen) < 0 ||
               compile_job(p, &j, &diag, &compile_ns, err, errlen) < 0) {
        goto fail;
    }
    if (diag)
        set_str(&r->diagnostics, diag);
    if (!j.status) {
        j.status = AO_V_OK;
        snprintf(j.reason, sizeof j.reason, "built, and passed the %s target's checks of what was "
                 "built; not run (a build only)", p->tg->name);
    }
    r->verdict = j.status;
    set_str(&r->reason, j.reason);
    r->wall_ns = ao_now_ns() - t0;
    if ((timing = cJSON_CreateObject())) {
        cJSON_AddNumberToObject(timing, "compile_ns", (double)compile_ns);
        cJSON_Delete(r->timing);
        r->timing = timing;
    }
    rc = 0;
    goto out;
fail:
    r->verdict = AO_V_INTERNAL_ERROR;
    set_str(&r->reason, err);
out:
    ao_job_free(&j);
    free(diag);
    return rc;
}

/* --- lifecycle --- */

struct ao_profiler *ao_profiler_new(const struct ao_profiler_opts *o, char *err, size_t errlen)
{
    struct ao_profiler *p = calloc(1, sizeof *p);
    const char *base = o->work_root ? o->work_root : "/tmp";

    if (!p) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    p->o = *o;
    p->tg = o->target ? o->target : ao_target_default();
    snprintf(p->root, sizeof p->root, "%s/accelopt-prof-XXXXXX", base);
    if (ao_mkdirs(base, 0755) < 0 || !mkdtemp(p->root)) {
        snprintf(err, errlen, "cannot create a work directory in '%s': %s", base, strerror(errno));
        free(p);
        return NULL;
    }
    chmod(p->root, 0755); /* the sandbox user must reach its job directory */
    if (ao_sandbox_check_uids(err, errlen) < 0) {
        ao_rmtree(p->root);
        free(p);
        return NULL;
    }
    if (ao_random_bytes(p->rng.s, sizeof p->rng.s) < 0 ||
        p->tg->runner_filter(&p->bpf, &p->bpf_len, err, errlen) < 0) {
        if (!err[0])
            snprintf(err, errlen, "getrandom failed: %s", strerror(errno));
        ao_rmtree(p->root);
        free(p);
        return NULL;
    }
    if (p->bpf_len > AO_RUN_BPF_MAX) {
        snprintf(err, errlen, "the seccomp program is too large");
        ao_profiler_free(p);
        return NULL;
    }
    return p;
}

void ao_profiler_free(struct ao_profiler *p)
{
    if (!p)
        return;
    if (p->built)
        pool_free(p->built);
    while (p->pools) {
        struct pool *pl = p->pools;
        p->pools = pl->next;
        pool_free(pl);
    }
    ao_rmtree(p->root);
    ao_sandbox_cleanup();
    free(p->bpf);
    free(p);
}

/* What a verdict depends on beyond the kernel and the task: this code's
 * checks (AO_PROFILER_CHECKS, raised whenever a check changes), the runner
 * protocol, and the target's compiler, flags and trusted runner.  Computed
 * once per target. */
static const char *verdict_basis(const struct ao_target *tg)
{
    static struct {
        const struct ao_target *tg;
        char hex[65];
    } done[8];
    struct ao_buf b = {0};
    char path[700];
    size_t i;

    for (i = 0; i < sizeof done / sizeof done[0] && done[i].tg; i++)
        if (done[i].tg == tg)
            return done[i].hex;
    ao_buf_printf(&b, "checks %d\n", AO_PROFILER_CHECKS);
    tg->basis(&b);
    snprintf(path, sizeof path, "%s/lib/runner_proto.h", ao_home());
    ao_target_basis_file(&b, path);
    snprintf(path, sizeof path, "%s/nkibench/harness/runner_side.h", ao_home());
    ao_target_basis_file(&b, path);
    if (i == sizeof done / sizeof done[0])
        i = 0; /* more targets than slots: recompute from then on */
    ao_sha256_hex(b.data ? b.data : "", b.len, done[i].hex);
    done[i].tg = tg;
    ao_buf_release(&b);
    return done[i].hex;
}

void ao_profile_key(const struct ao_target *tg, const struct ao_task *t, const char *size,
                    const char *source, const struct ao_calib *c, char hex[65])
{
    struct ao_buf b = {0};

    if (!tg)
        tg = ao_target_default();
    char tokens[65];

    /* the same tokens are the same kernel: a copy with new comments gets
     * the first one's measurement, not a new draw from the noise */
    ao_token_hash(source, tokens);
    ao_buf_printf(&b, "%s\n%s\n%s\n%s\n%s\n%s\n%s\n", tg->name, t->name, t->sha256, size,
                  c ? c->id : "uncalibrated", verdict_basis(tg), tokens);
    ao_sha256_hex(b.data, b.len, hex);
    ao_buf_release(&b);
}
