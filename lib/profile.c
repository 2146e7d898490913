/* profile.c - compile, contain, check and time one cpu kernel
 *
 * The kernel is compiled in a sandbox, its object checked (exactly one
 * external function, no constructors), then linked with the trusted runner
 * and started in a fresh sandbox that shares only a memory region with us.
 * We choose every input, poison every output, start every call and stop the
 * clock; the runner just calls `kernel`.  References come from the trusted
 * reference.c run the same way in its own process.  See INTEGRITY.md. */
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

#include "elfcheck.h"
#include "log.h"
#include "profile.h"
#include "rng.h"
#include "runner_proto.h"
#include "sandbox.h"
#include "util.h"
#include "verdict.h"

#define NOMINAL_CHECKS 3
#define VERIFIED_TIMED 3
#define POOLS_MAX_BYTES (3ull << 30) /* older pools are dropped past this */
#define STRESS_CHECK 2
/* A call under the roofline is impossible, but the peaks are measured too:
 * only a call this much under it is refused (cheats skip far more work). */
#define WAKE_ROUNDS 31       /* wake-up samples before the kernel's first call */
#define WAKE_SAMPLES_MAX (WAKE_ROUNDS + 256) /* and one before each timed call */
#define ROOFLINE_SLACK 0.05 /* this check set draws from the stress distributions */
#define MAX_SOURCE (256 * 1024)
#define DIAG_MAX 3000
#define PLACES 256 /* distinct tensor addresses per process */

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
    struct dataset verify[VERIFIED_TIMED];    /* timed calls checked in secret */
    char harness[600];                        /* dir with runner.o and stub.o */
    size_t bytes;                             /* memory its tensors hold */
};

struct ao_profiler {
    struct ao_profiler_opts o;
    char root[600];
    struct pool *pools;
    struct ao_rng rng;
    void *bpf;
    size_t bpf_len;
    unsigned seq;
};

/* A kernel's running process and its shared region. */
struct job {
    char dir[700];
    struct ao_sandbox sb;
    int started;
    char *shm;
    size_t shm_size, slot_size;
    struct ao_run_hdr *hdr;
    uint64_t seq;
    const struct ao_task *task;
    long long deadline;
    double timeout_s;
    unsigned place_a, place_b, placed; /* the order of tensor positions */
    /* where the tensors are, as we placed them: never read back from the
     * header, which the kernel's process can rewrite */
    size_t off[AO_MAX_TENSORS];
    char out_path[720];                /* the runner's stdout and stderr, capped */
    int stopped;                       /* held by SIGSTOP between calls */
    /* the runner's core, and ours to write its inputs from (so they are in
     * its caches, as if it had read them) and to wait from (elsewhere) */
    int migrate;
    cpu_set_t on_runner, off_runner;
    long long wake_ns;                 /* continuing the stopped runner costs this */
    long long raw_ns;                  /* the last call's time, wake-up included */
    long long wakes[WAKE_SAMPLES_MAX]; /* every wake-up sample taken */
    int nwakes;
    /* why it failed, once it did */
    enum ao_verdict status; /* AO_V_NONE until decided */
    char reason[512];
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

/* --- compiling --- */

/* Run a trusted build step on the host: an argv, never a shell. */
static int run_host(char *const argv[], char *err, size_t errlen)
{
    char *out = NULL;
    int st = 0;

    if (ao_spawn(argv, NULL, &out, 2000, &st, err, errlen) < 0)
        return -1;
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        snprintf(err, errlen, "'%s' failed (status %d): %.400s", argv[0], st, out);
        free(out);
        return -1;
    }
    free(out);
    return 0;
}

static void gen_stub(const struct ao_task *t, struct ao_buf *b)
{
    ao_buf_printf(b, "/* generated: calls kernel() with the signature of task '%s' */\n"
                     "#include \"proto.h\"\nvoid ao_call(float *const *p, const int *d);\n"
                     "void ao_call(float *const *p, const int *d)\n{\n    kernel(", t->name);
    for (int i = 0; i < t->ninputs + t->noutputs; i++)
        ao_buf_printf(b, "%sp[%d]", i ? ", " : "", i);
    for (int i = 0; i < t->ndims; i++)
        ao_buf_printf(b, ", d[%d]", i);
    ao_buf_printf(b, ");\n}\n");
}

/* runner.o and stub.o for a task: trusted code, compiled once on the host */
static int build_harness(struct ao_profiler *p, struct pool *pl, char *err, size_t errlen)
{
    struct ao_buf b = {0};
    char path[800];
    int rc = -1;

    snprintf(pl->harness, sizeof pl->harness, "%s/harness-%s-%u", p->root, pl->task.name, p->seq++);
    if (ao_mkdirs(pl->harness, 0755) < 0) {
        snprintf(err, errlen, "cannot create '%s': %s", pl->harness, strerror(errno));
        return -1;
    }
    snprintf(path, sizeof path, "%s/proto.h", pl->harness);
    ao_buf_printf(&b, "%s;\n", pl->task.signature);
    if (ao_write_file(path, b.data, b.len, err, errlen) < 0)
        goto out;
    b.len = 0;
    gen_stub(&pl->task, &b);
    snprintf(path, sizeof path, "%s/stub.c", pl->harness);
    if (ao_write_file(path, b.data, b.len, err, errlen) < 0)
        goto out;
    {
        char inc[700], src[700], obj[800], stub[800], stubo[800];
        char *cc_runner[] = {(char *)AO_CPU_CC, (char *)"-O2", (char *)"-std=gnu11", inc,
                             (char *)"-c", src, (char *)"-o", obj, NULL};
        char *cc_stub[] = {(char *)AO_CPU_CC, (char *)"-O2", (char *)"-std=gnu11", (char *)"-c",
                           stub, (char *)"-o", stubo, NULL};
        snprintf(inc, sizeof inc, "-I%s/lib", ao_home());
        snprintf(src, sizeof src, "%s/nkibench/harness/cpu/runner.c", ao_home());
        snprintf(obj, sizeof obj, "%s/runner.o", pl->harness);
        snprintf(stub, sizeof stub, "%s/stub.c", pl->harness);
        snprintf(stubo, sizeof stubo, "%s/stub.o", pl->harness);
        rc = run_host(cc_runner, err, errlen) < 0 || run_host(cc_stub, err, errlen) < 0 ? -1 : 0;
    }
out:
    ao_buf_release(&b);
    return rc;
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

/* Is the identifier [w, c) `mode` or `__mode__` followed by (HF) or (BF),
 * the attribute that declares a half type without naming one? */
static int half_mode(const char *w, const char *c, const char *eol)
{
    size_t n = (size_t)(c - w);
    if (!((n == 4 && !strncmp(w, "mode", 4)) || (n == 8 && !strncmp(w, "__mode__", 8))))
        return 0;
    while (c < eol && (*c == ' ' || *c == '\t'))
        c++;
    if (c >= eol || *c++ != '(')
        return 0;
    while (c < eol && (*c == ' ' || *c == '\t'))
        c++;
    return !strncmp(c, "HF", 2) || !strncmp(c, "BF", 2) || !strncmp(c, "__HF__", 6) ||
           !strncmp(c, "__BF__", 6);
}

/* Rules checked on the preprocessed kernel (kernel.i, which is what gets
 * compiled): comments are gone and strings are skipped, so prose about the
 * rules never trips them.  Every file it includes must be a system header
 * (under /usr), and no token of the kernel's own lines may name a half or
 * bfloat16 type.  Returns 1 + reason if broken. */
static int preprocessed_check(const char *text, char *reason, size_t len)
{
    static const char *const low_precision[] = {
        "_Float16", "__fp16", "__bf16", "__m128h", "__m256h", "__m512h",
        "__m128bh", "__m256bh", "__m512bh", NULL};
    int ours = 1; /* in kernel.c (or proto.h), not in a system header */

    for (const char *p = text; *p;) {
        const char *eol = p + strcspn(p, "\n");
        if (p[0] == '#' && p[1] == ' ' && p[2] >= '0' && p[2] <= '9') {
            /* a line marker: # LINE "FILE" FLAGS (the name runs to the last
             * quote: a quote inside it is escaped, and flags are digits) */
            const char *q = memchr(p, '"', (size_t)(eol - p)), *e = eol;
            while (e > p && e[-1] != '"')
                e--;
            e--;
            if (q && e > q) {
                size_t n = (size_t)(e - q - 1);
                char file[300];
                snprintf(file, sizeof file, "%.*s", (int)(n < sizeof file ? n : sizeof file - 1),
                         q + 1);
                ours = !strcmp(file, "kernel.c") || !strcmp(file, "proto.h") ||
                       !strcmp(file, "./proto.h");
                /* a system header: under /usr, with no way back out of it */
                if (!ours && file[0] != '<' &&
                    (strncmp(file, "/usr/", 5) != 0 || strstr(file, "/../") || strstr(file, "/./"))) {
                    snprintf(reason, len, "includes '%.200s': kernels may include system headers "
                             "only", file);
                    return 1;
                }
            }
        } else if (ours) {
            for (const char *c = p; c < eol;) {
                if (*c == '"' || *c == '\'') { /* a literal: skip to its end */
                    char qc = *c++;
                    while (c < eol && *c != qc)
                        c += *c == '\\' && c + 1 < eol ? 2 : 1;
                    c++;
                } else if (*c == '_' || ((*c | 32) >= 'a' && (*c | 32) <= 'z')) {
                    const char *w = c;
                    while (c < eol && (*c == '_' || (*c >= '0' && *c <= '9') ||
                                       ((*c | 32) >= 'a' && (*c | 32) <= 'z')))
                        c++;
                    for (int i = 0; low_precision[i]; i++)
                        if ((size_t)(c - w) == strlen(low_precision[i]) &&
                            !strncmp(w, low_precision[i], (size_t)(c - w))) {
                            snprintf(reason, len, "uses the type '%s': kernels must compute in "
                                     "float32 or wider", low_precision[i]);
                            return 1;
                        }
                    if (half_mode(w, c, eol)) {
                        snprintf(reason, len, "declares a half-precision type with a mode "
                                 "attribute: kernels must compute in float32 or wider");
                        return 1;
                    }
                } else if ((*c >= '0' && *c <= '9') || (*c == '.' && c[1] >= '0' && c[1] <= '9')) {
                    const char *w = c;
                    while (c < eol && (*c == '.' || *c == '_' || (*c >= '0' && *c <= '9') ||
                                       ((*c | 32) >= 'a' && (*c | 32) <= 'z') ||
                                       ((*c == '+' || *c == '-') &&
                                        ((c[-1] | 32) == 'e' || (c[-1] | 32) == 'p'))))
                        c++; /* a number, suffixes and all */
                    int hex_int = w[0] == '0' && (w[1] | 32) == 'x' &&
                                  !memchr(w, 'p', (size_t)(c - w)) && !memchr(w, 'P', (size_t)(c - w));
                    if (c - w >= 3 && c[-1] == '6' && c[-2] == '1' && (c[-3] | 32) == 'f' && !hex_int) {
                        snprintf(reason, len, "a half-precision literal '%.*s': kernels must "
                                 "compute in float32 or wider", (int)(c - w), w);
                        return 1;
                    }
                } else {
                    c++;
                }
            }
        }
        p = *eol ? eol + 1 : eol;
    }
    return 0;
}

/* A fresh job directory holding the kernel source and the task's harness. */
static int prepare_job(struct ao_profiler *p, struct pool *pl, struct job *j, const char *source,
                       char *err, size_t errlen)
{
    static const char *const files[] = {"proto.h", "runner.o", "stub.o"};
    char path[900], from[800];

    snprintf(j->dir, sizeof j->dir, "%s/job-XXXXXX", p->root);
    if (!mkdtemp(j->dir)) {
        j->dir[0] = '\0';
        snprintf(err, errlen, "cannot create a job directory: %s", strerror(errno));
        return -1;
    }
    snprintf(path, sizeof path, "%s/kernel.c", j->dir);
    if (ao_write_file(path, source, strlen(source), err, errlen) < 0)
        return -1;
    for (int i = 0; i < 3; i++) {
        snprintf(from, sizeof from, "%s/%s", pl->harness, files[i]);
        snprintf(path, sizeof path, "%s/%s", j->dir, files[i]);
        if (copy_file(from, path, err, errlen) < 0)
            return -1;
    }
    if (getuid() == 0 && chown(j->dir, 65534, 65534) < 0) {
        snprintf(err, errlen, "cannot hand '%s' to the sandbox user: %s", j->dir, strerror(errno));
        return -1;
    }
    return 0;
}

/* Compile and link the job's kernel into its runner inside a sandbox.  On
 * a verdict (compile error, rejected object) sets j->status; -1 only on our
 * failure. */
static int compile_job(struct ao_profiler *p, struct job *j, char **diag, long long *compile_ns,
                       char *err, size_t errlen)
{
    char path[900], log[800], reason[512];
    char sh[] = "/bin/sh", dash_c[] = "-c", cmd[1024];
    char *argv[] = {sh, dash_c, cmd, NULL};
    struct ao_sandbox_spec spec = {0};
    struct ao_sandbox sb;
    int logfd = -1, st, to, rc = -1, e;
    long long t0 = ao_now_ns();
    char *out = NULL;

    /* preprocess, then compile what was preprocessed (the text the rules
     * are checked on), then link with a stack that is never executable,
     * whatever the object's .note.GNU-stack asks for */
    snprintf(cmd, sizeof cmd,
             "%s %s -fdiagnostics-color=never -fmax-errors=8 -include proto.h -E kernel.c -o kernel.i"
             " && %s %s -fdiagnostics-color=never -fmax-errors=8 -fpreprocessed -c kernel.i -o kernel.o"
             " && %s -Wl,-z,noexecstack kernel.o runner.o stub.o -o runner -lm",
             AO_CPU_CC, AO_CPU_CFLAGS, AO_CPU_CC, AO_CPU_CFLAGS, AO_CPU_CC);
    snprintf(log, sizeof log, "%s.log", j->dir);
    if ((logfd = open(log, O_CREAT | O_TRUNC | O_RDWR | O_CLOEXEC, 0600)) < 0) {
        snprintf(err, errlen, "cannot create '%s': %s", log, strerror(errno));
        return -1;
    }
    spec.workdir = j->dir;
    spec.argv = argv;
    spec.out_fd = logfd;
    spec.cpu_seconds = (long)p->o.compile_timeout_s + 5;
    spec.mem_bytes = 4LL << 30;
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
    snprintf(path, sizeof path, "%s/kernel.i", j->dir);
    {
        char *pre = ao_read_file_max(path, 64u << 20, NULL, reason, sizeof reason);
        if (!pre || preprocessed_check(pre, reason, sizeof reason)) {
            free(pre);
            j->status = AO_V_REJECTED;
            snprintf(j->reason, sizeof j->reason, "%s", reason);
            rc = 0;
            goto out;
        }
        free(pre);
    }
    snprintf(path, sizeof path, "%s/kernel.o", j->dir);
    e = ao_elf_check(path, "kernel", reason, sizeof reason);
    if (e != 0) {
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

/* --- running --- */

/* Tensors are laid out 17 cache lines apart beyond their size, so that two
 * of them never share their address bits below 4 KiB (4K aliasing would
 * make some calls slower than others for no fault of the kernel). */
#define STAGGER (17 * 64)

static size_t tensors_bytes(const struct ao_task *t, const long long *dims)
{
    size_t s = 0;
    for (int i = 0; i < t->ninputs + t->noutputs; i++)
        s += ((ao_task_elems(t, i, dims) * sizeof(float) + 63) & ~(size_t)63) + STAGGER;
    return s;
}

/* The runner runs on one core (--cpu, or the one we are on now).  Between
 * calls we move to that core to write its inputs, so that a call starts
 * with them in the runner's caches (no untimed step of its own can do that:
 * it must not see inputs before the clock), then move off it to wait, so
 * our spinning never shares its core.  Without a second core we stay put. */
static cpu_set_t our_cpus; /* as we started: restored after every job */
static int have_our_cpus;

static void unpin_us(struct job *j)
{
    if (j->migrate)
        sched_setaffinity(0, sizeof our_cpus, &our_cpus);
}

static void pin_runner(struct job *j, int *cpu)
{
    cpu_set_t all;
    int c = *cpu >= 0 ? *cpu : sched_getcpu();

    j->migrate = 0;
    if (!have_our_cpus && sched_getaffinity(0, sizeof our_cpus, &our_cpus) == 0)
        have_our_cpus = 1;
    if (c < 0 || !have_our_cpus)
        return;
    all = our_cpus;
    *cpu = c;
    CPU_ZERO(&j->on_runner);
    CPU_SET(c, &j->on_runner);
    j->off_runner = all;
    CPU_CLR(c, &j->off_runner);
    j->migrate = CPU_ISSET(c, &all) && CPU_COUNT(&j->off_runner) > 0;
}

/* Start the runner's sandbox.  Held, it is set up (namespaces, cgroups:
 * slow on some kernels) while the compiler works, and execs at job_release. */
static int job_start(struct ao_profiler *p, struct job *j, const struct ao_task *t,
                     const long long *dims, double timeout_s, int hold, char *err, size_t errlen)
{
    char size_arg[32], nptr_arg[16], runner[] = "/work/runner";
    char *argv[] = {runner, size_arg, nptr_arg, NULL};
    struct ao_sandbox_spec spec = {0};
    int fd = -1, outfd = -1, rc = -1;

    j->task = t;
    j->slot_size = tensors_bytes(t, dims) + (PLACES / 2) * 64;
    j->place_a = (unsigned)(ao_rng_next(&p->rng) % PLACES) | 1; /* odd: a permutation */
    j->place_b = (unsigned)(ao_rng_next(&p->rng) % PLACES);
    j->shm_size = AO_RUN_DATA_OFFSET + 2 * j->slot_size;
    fd = memfd_create("accelopt-tensors", MFD_CLOEXEC);
    if (fd < 0 || ftruncate(fd, (off_t)j->shm_size) < 0) {
        snprintf(err, errlen, "cannot create the shared region: %s", strerror(errno));
        goto out;
    }
    j->shm = mmap(NULL, j->shm_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (j->shm == MAP_FAILED) {
        j->shm = NULL;
        snprintf(err, errlen, "cannot map %zu bytes: %s", j->shm_size, strerror(errno));
        goto out;
    }
    j->hdr = (struct ao_run_hdr *)j->shm;
    j->hdr->magic = AO_RUN_MAGIC;
    j->hdr->total_size = j->shm_size;
    j->hdr->bpf_len = (uint32_t)p->bpf_len;
    j->hdr->bad_syscall = -1;
    memcpy(j->shm + AO_RUN_HDR_SIZE, p->bpf, p->bpf_len);
    snprintf(size_arg, sizeof size_arg, "%zu", j->shm_size);
    snprintf(nptr_arg, sizeof nptr_arg, "%d", t->ninputs + t->noutputs);
    /* the kernel's own output goes to a file of ours, outside its work
     * directory, capped by RLIMIT_FSIZE; diagnostics may quote it */
    snprintf(j->out_path, sizeof j->out_path, "%s.out", j->dir);
    if ((outfd = open(j->out_path, O_CREAT | O_TRUNC | O_WRONLY | O_APPEND | O_CLOEXEC, 0600)) < 0) {
        snprintf(err, errlen, "cannot create '%s': %s", j->out_path, strerror(errno));
        goto out;
    }
    spec.workdir = j->dir;
    spec.argv = argv;
    spec.keep_fds = &fd;
    spec.nkeep = 1;
    spec.out_fd = outfd;
    spec.cpu_seconds = (long)timeout_s + 5;
    spec.mem_bytes = (long long)j->shm_size + p->o.mem_bytes;
    spec.file_bytes = 1 << 20;
    spec.max_procs = 16;
    spec.seccomp = AO_SECCOMP_NONE; /* the runner installs the strict one itself */
    spec.cpu = p->o.cpu;
    pin_runner(j, &spec.cpu);
    spec.hold = hold;
    spec.slot = 1;
    j->timeout_s = timeout_s;
    if (ao_sandbox_start(&spec, &j->sb, err, errlen) < 0)
        goto out;
    j->started = 1;
    j->deadline = ao_now_ns() + (long long)(timeout_s * 1e9);
    rc = 0;
out:
    if (fd >= 0)
        close(fd);
    if (outfd >= 0)
        close(outfd);
    return rc;
}

/* Let a held runner start; its time limit counts from here. */
static int job_release(struct job *j, char *err, size_t errlen)
{
    if (ao_sandbox_release(&j->sb, err, errlen) < 0)
        return -1;
    j->deadline = ao_now_ns() + (long long)(j->timeout_s * 1e9);
    return 0;
}

/* Quote the start of what the kernel printed, if anything, after a failure:
 * printable ASCII only, and short. */
static void quote_output(struct job *j)
{
    char buf[161];
    size_t n, len = strlen(j->reason);
    int fd;
    ssize_t r;

    if (!j->out_path[0] || (fd = open(j->out_path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)) < 0)
        return;
    r = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (r <= 0)
        return;
    n = (size_t)r;
    for (size_t i = 0; i < n; i++)
        if (buf[i] < 0x20 || buf[i] > 0x7e)
            buf[i] = buf[i] == '\n' ? '|' : '?';
    buf[n] = '\0';
    snprintf(j->reason + len, sizeof j->reason - len, "; it printed: %s%s", buf,
             n == sizeof buf - 1 ? "..." : "");
}

/* The runner is gone: say why, from its wait status. */
static void classify_exit(struct job *j, int st, int timed_out, const char *phase)
{
    if (timed_out) {
        j->status = AO_V_TIMEOUT;
        snprintf(j->reason, sizeof j->reason, "still running %s after the time limit", phase);
    } else if ((WIFEXITED(st) && WEXITSTATUS(st) == AO_RUN_EXIT_SYSCALL) ||
               (WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS)) {
        /* the number is the runner's word (its memory is the kernel's too):
         * a name to show, never acted on */
        int nr = __atomic_load_n(&j->hdr->bad_syscall, __ATOMIC_RELAXED);
        const char *name = nr >= 0 ? ao_syscall_name(nr) : NULL;
        j->status = AO_V_REJECTED;
        snprintf(j->reason, sizeof j->reason,
                 "made the system call '%s' %s; kernels may only compute and allocate memory",
                 name ? name : "?", phase);
    } else if (WIFSIGNALED(st) && WTERMSIG(st) == SIGXCPU) {
        j->status = AO_V_TIMEOUT;
        snprintf(j->reason, sizeof j->reason, "used up its CPU time %s", phase);
    } else if (WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL && ao_sandbox_oom(&j->sb)) {
        j->status = AO_V_CRASH;
        snprintf(j->reason, sizeof j->reason, "ran out of memory %s", phase);
    } else if (WIFSIGNALED(st)) {
        j->status = AO_V_CRASH;
        snprintf(j->reason, sizeof j->reason, "killed by %s %s", sigabbrev_np(WTERMSIG(st)) ?
                 sigabbrev_np(WTERMSIG(st)) : "a signal", phase);
    } else if (WIFEXITED(st) && WEXITSTATUS(st) >= 120 && WEXITSTATUS(st) <= 125 &&
               j->seq <= 1) {
        j->status = AO_V_INTERNAL_ERROR;
        snprintf(j->reason, sizeof j->reason, "the runner could not start (status %d)",
                 WEXITSTATUS(st));
    } else {
        j->status = AO_V_CRASH;
        snprintf(j->reason, sizeof j->reason, "the process exited (status %d) %s; kernels must "
                 "return", WIFEXITED(st) ? WEXITSTATUS(st) : -1, phase);
    }
    quote_output(j);
}

static void job_stop(struct job *j, const char *phase)
{
    int st = 0, to = 0;

    if (!j->started)
        return;
    if (!j->status) {
        /* a clean exit */
        j->hdr->cmd = AO_RUN_CMD_EXIT;
        __atomic_store_n(&j->hdr->go, j->seq + 1, __ATOMIC_SEQ_CST);
        if (j->stopped)
            kill(j->sb.pid, SIGCONT);
        j->stopped = 0;
        syscall(SYS_futex, (uint32_t *)&j->hdr->go, FUTEX_WAKE, 1, NULL, NULL, 0);
        ao_sandbox_wait(&j->sb, ao_now_ns() + 5000000000LL, &st, &to);
        if (to || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
            classify_exit(j, st, to, phase);
    } else {
        ao_sandbox_kill(&j->sb);
        ao_sandbox_wait(&j->sb, 0, &st, &to);
    }
    j->started = 0;
}

/* The job's process and what it holds are gone; its directory stays. */
static void job_end(struct job *j)
{
    job_stop(j, "at exit");
    unpin_us(j);
    if (j->shm)
        munmap(j->shm, j->shm_size);
    j->shm = NULL;
    if (j->out_path[0])
        unlink(j->out_path);
    j->out_path[0] = '\0';
}

static void job_free(struct job *j)
{
    job_end(j);
    if (j->dir[0])
        ao_rmtree(j->dir);
    j->dir[0] = '\0';
}

/* Has the runner ended?  Peek without reaping, so ao_sandbox_wait can. */
static int runner_ended(struct job *j)
{
    siginfo_t si;
    memset(&si, 0, sizeof si);
    return waitid(P_PID, (id_t)j->sb.pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid != 0;
}

static float *tensor(struct job *j, int i)
{
    return (float *)(j->shm + j->off[i]);
}

/* The runner has ended, or overran its deadline: reap it and say why; -1. */
static int runner_gone(struct job *j, int timed_out, const char *phase)
{
    int st = 0, to = 0;
    if (timed_out)
        ao_sandbox_kill(&j->sb);
    ao_sandbox_wait(&j->sb, ao_now_ns() + 5000000000LL, &st, &to);
    j->started = 0;
    j->stopped = 0;
    classify_exit(j, st, timed_out || to, phase);
    return -1;
}

/* The runner is kept stopped (SIGSTOP) whenever it is not inside a timed
 * call.  We write a call's inputs while it cannot run and copy its outputs
 * after it is stopped again, so a kernel that takes over the runner's loop
 * can neither see a call's inputs before the clock starts nor work on after
 * it stops.  -1 (with j->status) if the runner is gone. */
static int runner_stop(struct job *j, const char *phase)
{
    siginfo_t si;

    if (j->stopped)
        return 0;
    if (!j->started || j->sb.pid <= 0) /* already reaped: j->status says why */
        return -1;
    if (kill(j->sb.pid, SIGSTOP) < 0)
        return runner_gone(j, 0, phase);
    for (;;) {
        memset(&si, 0, sizeof si);
        if (waitid(P_PID, (id_t)j->sb.pid, &si, WSTOPPED | WEXITED | WNOWAIT) == 0)
            break;
        if (errno != EINTR)
            return runner_gone(j, 0, phase);
    }
    if (si.si_code != CLD_STOPPED && si.si_code != CLD_TRAPPED)
        return runner_gone(j, 0, phase); /* it ended: reap it and say why */
    memset(&si, 0, sizeof si);
    waitid(P_PID, (id_t)j->sb.pid, &si, WSTOPPED | WNOHANG); /* consume the report */
    j->stopped = 1;
    return 0;
}

/* Where the tensors live for the next call: one of PLACES positions (two
 * slots, 128 cache-line offsets each), visited in an order the kernel cannot
 * guess and never twice within PLACES calls, so a cache keyed by address
 * never hits. */
static void place(struct job *j, const long long *dims)
{
    unsigned pos = (j->place_a * j->placed++ + j->place_b) % PLACES;
    size_t off = AO_RUN_DATA_OFFSET + (pos & 1) * j->slot_size + (size_t)(pos >> 1) * 64;
    const struct ao_task *t = j->task;

    /* the header too is written only while the runner cannot run (if it
     * is gone, the call that follows says why) */
    runner_stop(j, "between calls");
    for (int i = 0; i < t->ninputs + t->noutputs; i++) {
        j->off[i] = j->hdr->off[i] = off;
        off += ((ao_task_elems(t, i, dims) * sizeof(float) + 63) & ~(size_t)63) + STAGGER;
    }
    for (int i = 0; i < t->ndims; i++)
        j->hdr->dims[i] = (int32_t)dims[i];
}

/* One command to the (stopped) runner: the clock starts, the runner
 * continues, the clock stops the moment it says done, and it is stopped
 * again.  Warm-up repeats (hold 0) skip the stopping: they write nothing
 * and are not timed.  Returns the elapsed ns less the cost of continuing
 * the runner (wake_ns), or -1 with j->status set. */
static long long run_call(struct job *j, uint32_t cmd, int hold, const char *phase)
{
    struct ao_run_hdr *h = j->hdr;
    long long t0, t1, now;
    unsigned spins = 0;

    if (hold && runner_stop(j, phase) < 0)
        return -1;
    h->cmd = cmd;
    j->seq++;
    __atomic_store_n(&h->go, j->seq, __ATOMIC_SEQ_CST);
    t0 = ao_now_ns();
    if (j->stopped)
        kill(j->sb.pid, SIGCONT);
    else /* a warm-up repeat: it may have gone to sleep on `go` */
        syscall(SYS_futex, (uint32_t *)&h->go, FUTEX_WAKE, 1, NULL, NULL, 0);
    j->stopped = 0;
    for (;;) {
        if (__atomic_load_n(&h->done, __ATOMIC_ACQUIRE) == j->seq)
            break;
        if (++spins & 1023) {
            __builtin_ia32_pause();
            continue;
        }
        now = ao_now_ns();
        if (now > j->deadline || runner_ended(j))
            return runner_gone(j, now > j->deadline, phase);
        if (now - t0 > 20000000) { /* long call: sleep instead of spinning */
            struct timespec ts = {0, 5000000};
            __atomic_store_n(&h->parent_sleeping, 1, __ATOMIC_SEQ_CST);
            if (__atomic_load_n(&h->done, __ATOMIC_SEQ_CST) != j->seq)
                syscall(SYS_futex, (uint32_t *)&h->done, FUTEX_WAIT, (uint32_t)(j->seq - 1),
                        &ts, NULL, 0);
            __atomic_store_n(&h->parent_sleeping, 0, __ATOMIC_SEQ_CST);
        }
    }
    t1 = ao_now_ns();
    j->raw_ns = t1 - t0;
    if (hold && runner_stop(j, phase) < 0)
        return -1;
    return hold && t1 - t0 > j->wake_ns ? t1 - t0 - j->wake_ns : t1 - t0;
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
static int wake_sample(struct job *j, const char *phase)
{
    if (runner_stop(j, phase) < 0)
        return -1;
    if (j->migrate) { /* the path of a real call: onto the runner's core and off */
        sched_setaffinity(0, sizeof j->on_runner, &j->on_runner);
        sched_setaffinity(0, sizeof j->off_runner, &j->off_runner);
    }
    if (run_call(j, AO_RUN_CMD_NOP, 1, phase) < 0)
        return -1;
    if (j->nwakes == 0 || j->raw_ns < j->wake_ns)
        j->wake_ns = j->raw_ns;
    if (j->nwakes < WAKE_SAMPLES_MAX)
        j->wakes[j->nwakes++] = j->raw_ns;
    return 0;
}

static int measure_wake(struct job *j)
{
    j->wake_ns = 0;
    j->nwakes = 0;
    for (int i = 0; i < WAKE_ROUNDS; i++)
        if (wake_sample(j, "before its first call") < 0)
            return -1;
    return 0;
}

/* One call: inputs written (copied from in[], or drawn fresh from rng when
 * in is NULL), outputs poisoned, the call timed by run_call, and the
 * outputs copied out into out[] (if given) while the runner is stopped.
 * Returns elapsed ns, or -1 with j->status set. */
static long long job_call(struct job *j, const long long *dims, float *const *in,
                          struct ao_rng *rng, uint32_t poison, float **out, const char *phase)
{
    const struct ao_task *t = j->task;
    long long e;

    if (runner_stop(j, phase) < 0)
        return -1;
    if (j->migrate)
        sched_setaffinity(0, sizeof j->on_runner, &j->on_runner);
    for (int i = 0; i < t->ninputs; i++) {
        size_t n = ao_task_elems(t, i, dims);
        if (in)
            memcpy(tensor(j, i), in[i], n * sizeof(float));
        else
            fill_timed(rng, &t->t[i].dist, tensor(j, i), n);
    }
    for (int i = t->ninputs; i < t->ninputs + t->noutputs; i++) {
        uint32_t *o = (uint32_t *)tensor(j, i);
        size_t n = ao_task_elems(t, i, dims);
        for (size_t k = 0; k < n; k++)
            o[k] = poison;
    }
    /* then the access pattern the runner's own untimed pass used to have
     * (read every input line, rewrite every output line), from its core */
    for (int i = 0; i < t->ninputs + t->noutputs; i++) {
        volatile char *c = (volatile char *)tensor(j, i);
        size_t n = ao_task_elems(t, i, dims) * sizeof(float);
        for (size_t k = 0; k < n; k += 64)
            if (i < t->ninputs)
                (void)c[k];
            else
                c[k] = c[k];
    }
    if (j->migrate)
        sched_setaffinity(0, sizeof j->off_runner, &j->off_runner);
    if ((e = run_call(j, AO_RUN_CMD_CALL, 1, phase)) < 0)
        return -1;
    for (int i = 0; out && i < t->noutputs; i++)
        memcpy(out[i], tensor(j, t->ninputs + i),
               ao_task_elems(t, t->ninputs + i, dims) * sizeof(float));
    return e;
}

/* Did the call leave its inputs as they were given?  Names the first one not. */
static const char *inputs_changed(struct job *j, const long long *dims, float *const *in)
{
    for (int i = 0; i < j->task->ninputs; i++)
        if (memcmp(tensor(j, i), in[i], ao_task_elems(j->task, i, dims) * sizeof(float)) != 0)
            return j->task->t[i].name;
    return NULL;
}

/* --- pools --- */

static int compute_references(struct ao_profiler *p, struct pool *pl, char *err, size_t errlen)
{
    char path[900];
    char *src = NULL, *diag = NULL;
    struct job j;
    long long cns = 0;
    int rc = -1;

    memset(&j, 0, sizeof j);
    snprintf(path, sizeof path, "%s/reference.c", pl->task.dir);
    if (!(src = ao_read_file(path, NULL, err, errlen)))
        return -1;
    /* references may be slow (plain loops in double): allow ten times more */
    if (prepare_job(p, pl, &j, src, err, errlen) < 0 ||
        job_start(p, &j, &pl->task, pl->dims, p->o.timeout_s * 10, 1, err, errlen) < 0 ||
        compile_job(p, &j, &diag, &cns, err, errlen) < 0)
        goto out;
    if (j.status) {
        snprintf(err, errlen, "the reference of '%s' does not build: %s: %.500s", pl->task.name,
                 j.reason, diag ? diag : "");
        goto out;
    }
    if (job_release(&j, err, errlen) < 0)
        goto out;
    for (int s = 0; s < pl->nchecks + VERIFIED_TIMED; s++) {
        struct dataset *d = s < pl->nchecks ? &pl->check[s] : &pl->verify[s - pl->nchecks];
        place(&j, d->dims);
        if (job_call(&j, d->dims, d->t, NULL, 0x7fc00000u, d->t + pl->task.ninputs,
                     "computing the reference") < 0) {
            snprintf(err, errlen, "the reference of '%s' failed: %s", pl->task.name, j.reason);
            goto out;
        }
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
    rc = 0;
out:
    job_free(&j);
    free(src);
    free(diag);
    return rc;
}

static void pool_free(struct pool *pl)
{
    for (int s = 0; s < NOMINAL_CHECKS + 1; s++)
        dataset_free(&pl->check[s]);
    for (int s = 0; s < VERIFIED_TIMED; s++)
        dataset_free(&pl->verify[s]);
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

    snprintf(key, sizeof key, "%s|%s|%s", t->dir, t->name, size);
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
    pl->bytes = (NOMINAL_CHECKS + 1 + VERIFIED_TIMED) * tensors_bytes(t, pl->dims);
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
    for (int s = 0; s < VERIFIED_TIMED; s++) {
        if (dataset_alloc(t, &pl->verify[s], pl->dims, 1) < 0)
            goto oom;
        for (int i = 0; i < t->ninputs; i++)
            fill_timed(&p->rng, &t->t[i].dist, pl->verify[s].t[i], ao_task_elems(t, i, pl->dims));
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

static int cmp_ll(const void *a, const void *b)
{
    long long x = *(const long long *)a, y = *(const long long *)b;
    return x < y ? -1 : x > y;
}

struct stats {
    double median, min, spread;
    int n;
};

static void stats_of(const long long *v, int n, struct stats *s)
{
    long long *c = malloc(sizeof *c * (size_t)n);
    if (!c || n == 0) {
        free(c);
        memset(s, 0, sizeof *s);
        return;
    }
    memcpy(c, v, sizeof *c * (size_t)n);
    qsort(c, (size_t)n, sizeof *c, cmp_ll);
    s->n = n;
    s->min = (double)c[0];
    s->median = n % 2 ? (double)c[n / 2] : 0.5 * ((double)c[n / 2 - 1] + (double)c[n / 2]);
    if (n >= 4)
        s->spread = ((double)c[(3 * n) / 4] - (double)c[n / 4]) / s->median;
    else
        s->spread = ((double)c[n - 1] - (double)c[0]) / s->median;
    free(c);
}

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
static int check_outputs(struct job *j, const struct ao_task *t, float **out,
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

struct measurement {
    struct stats st;
    long long kernel_ns; /* total time inside kernel calls, checks included */
    long long wake_ns;   /* taken off every call: continuing the stopped runner */
    long long wake_u_ns; /* how sure that is: the lowest wake-ups' own spread */
};

/* How far the lowest wake-up could be off: the gap from the lowest sample
 * to the one at the 5th percentile.  Quiet, a few hundred ns; on a busy
 * machine, microseconds, and then a tiny kernel's time is that uncertain. */
static long long wake_uncertainty(const struct job *j)
{
    long long w[WAKE_SAMPLES_MAX];
    int n = j->nwakes, k = n / 20 + 1;

    if (n < 2)
        return 0;
    memcpy(w, j->wakes, sizeof *w * (size_t)n);
    qsort(w, (size_t)n, sizeof *w, cmp_ll);
    return w[k < n ? k : n - 1] - w[0];
}

/* The timed calls' latencies: their raw times less the wake-up estimate
 * as it stands (as run_call takes it off). */
static void take_wake(const long long *raw, long long *lat, int n, long long wake)
{
    for (int i = 0; i < n; i++)
        lat[i] = raw[i] > wake ? raw[i] - wake : raw[i];
}

/* Correctness on the check sets, then timed calls on fresh inputs, some of
 * them (secretly chosen) verified against references. */
static int measure(struct ao_profiler *p, struct pool *pl, struct job *j, cJSON *errors,
                   double *max_err, struct measurement *m)
{
    const struct ao_task *t = &pl->task;
    float *out[AO_MAX_TENSORS] = {0};
    long long *lat = NULL, *raw = NULL, e = 0, warm = 0;
    int verify_at[VERIFIED_TIMED], n = 0, min_calls, rc = -1;
    char set[32];
    const char *bad;

    m->kernel_ns = 0;
    if (measure_wake(j) < 0)
        goto out;
    m->wake_ns = j->wake_ns;
    for (int o = 0; o < t->noutputs; o++)
        if (!(out[o] = malloc(sizeof(float) * ao_task_elems(t, t->ninputs + o, pl->dims))))
            goto out;
    if (!(lat = malloc(sizeof *lat * (size_t)p->o.max_calls)) ||
        !(raw = malloc(sizeof *raw * (size_t)p->o.max_calls)))
        goto out;
    /* correctness: every check set poisoned with NaN, the first again with
     * another poison, so an output left untouched can never pass */
    for (int s = 0; s <= pl->nchecks; s++) {
        const struct dataset *d = &pl->check[s < pl->nchecks ? s : 0];
        uint32_t poison = s < pl->nchecks ? 0x7fc00000u : 0x7f7f7f7fu;
        snprintf(set, sizeof set, s == pl->nchecks ? "check0-repoisoned" :
                 s == NOMINAL_CHECKS ? "check-other-shape" :
                 s == STRESS_CHECK && t->has_stress ? "check-stress" : "check%d", s);
        place(j, d->dims);
        if ((e = job_call(j, d->dims, d->t, NULL, poison, out, "on a correctness check")) < 0)
            goto out;
        m->kernel_ns += e;
        if ((bad = inputs_changed(j, d->dims, d->t))) {
            j->status = AO_V_REJECTED;
            snprintf(j->reason, sizeof j->reason, "wrote to its input '%s' (set '%s'): "
                     "inputs are read-only", bad, set);
            goto out;
        }
        if (check_outputs(j, t, out, d, set, errors, max_err) < 0)
            goto out;
    }
    /* warm up: at least two calls and warmup_s of running, so the core has
     * left any low-power state before the clock counts; the last call
     * sizes the run */
    for (int w = 0; w < 2 || (warm < (long long)(p->o.warmup_s * 1e9) && w < 100000); w++) {
        if (w < 2) {
            place(j, pl->dims);
            e = job_call(j, pl->dims, NULL, &p->rng, 0x7fc00000u, NULL, "while warming up");
        } else {
            /* the same inputs again: warming up needs no fresh data */
            e = run_call(j, AO_RUN_CMD_CALL, 0, "while warming up");
        }
        if (e < 0)
            goto out;
        m->kernel_ns += e;
        warm += e;
    }
    min_calls = e > 0 ? (int)(p->o.budget_s * 1e9 / (double)e) : 10;
    min_calls = min_calls < 3 ? 3 : min_calls > 10 ? 10 : min_calls;
    for (int v = 0; v < VERIFIED_TIMED; v++) {
        int again;
        do {
            verify_at[v] = (int)(ao_rng_next(&p->rng) % (unsigned long long)min_calls);
            again = 0;
            for (int u = 0; u < v; u++)
                again |= verify_at[u] == verify_at[v];
        } while (again);
    }
    for (long long spent = 0; n < p->o.max_calls;) {
        int v = -1;
        for (int k = 0; k < VERIFIED_TIMED; k++)
            if (verify_at[k] == n)
                v = k;
        if ((n < 32 || n % 4 == 0) && wake_sample(j, "in a timed call") < 0)
            goto out; /* spread over the calls, at most about 90 */
        place(j, pl->dims);
        if (v >= 0) {
            const struct dataset *d = &pl->verify[v];
            if ((e = job_call(j, pl->dims, d->t, NULL, 0x7fc00000u, out, "in a timed call")) < 0)
                goto out;
            snprintf(set, sizeof set, "timed%d", n);
            if ((bad = inputs_changed(j, pl->dims, d->t))) {
                j->status = AO_V_REJECTED;
                snprintf(j->reason, sizeof j->reason, "wrote to its input '%s' in timed call "
                         "%d: inputs are read-only", bad, n);
                goto out;
            }
            if (check_outputs(j, t, out, d, set, errors, max_err) < 0) {
                /* right on the check sets, wrong when timed: a replay or a race */
                j->status = AO_V_REJECTED;
                snprintf(j->reason + strlen(j->reason), sizeof j->reason - strlen(j->reason),
                         " (in a timed call, after passing the correctness checks: outputs "
                         "must be computed from the inputs of each call)");
                goto out;
            }
        } else {
            /* values the kernel's process has never seen */
            if ((e = job_call(j, pl->dims, NULL, &p->rng, 0x7fc00000u, NULL, "in a timed call")) < 0)
                goto out;
        }
        m->kernel_ns += e;
        spent += e;
        raw[n++] = j->raw_ns;
        if (n >= min_calls) {
            take_wake(raw, lat, n, j->wake_ns);
            stats_of(lat, n, &m->st);
            if (m->st.spread <= p->o.target_spread || spent >= (long long)(p->o.budget_s * 1e9))
                break;
        }
    }
    take_wake(raw, lat, n, j->wake_ns);
    stats_of(lat, n, &m->st);
    m->wake_ns = j->wake_ns;
    m->wake_u_ns = wake_uncertainty(j);
    rc = 0;
out:
    for (int o = 0; o < t->noutputs; o++)
        free(out[o]);
    free(lat);
    free(raw);
    return rc;
}

static int set_str(char **dst, const char *s)
{
    free(*dst);
    *dst = s ? strdup(s) : NULL;
    return s && !*dst ? -1 : 0;
}

static void layers_json(struct ao_result_msg *r, const char *layers, int seccomp)
{
    char buf[600];
    cJSON *a = cJSON_CreateArray();
    snprintf(buf, sizeof buf, "%s%s", layers, seccomp ? ",seccomp" : "");
    for (char *s = strtok(buf, ","); s; s = strtok(NULL, ","))
        cJSON_AddItemToArray(a, cJSON_CreateString(s));
    cJSON_Delete(r->sandbox);
    r->sandbox = a;
}

/* One full measurement in a fresh process. */
static int run_once(struct ao_profiler *p, struct pool *pl, struct job *j,
                    struct ao_result_msg *r, cJSON *errors, double *max_err,
                    struct measurement *m, char *err, size_t errlen)
{
    if (!j->started && job_start(p, j, &pl->task, pl->dims, p->o.timeout_s, 0, err, errlen) < 0)
        return -1;
    if (j->sb.sync_fd >= 0 && job_release(j, err, errlen) < 0)
        return -1;
    layers_json(r, j->sb.layers, 1);
    if (measure(p, pl, j, errors, max_err, m) < 0 && !j->status) {
        snprintf(err, errlen, "out of memory while measuring");
        return -1;
    }
    job_stop(j, "after its last call");
    return 0;
}

int ao_profiler_run(struct ao_profiler *p, const struct ao_task *t, const char *size,
                    const char *source, double parent_ns, double baseline_ns,
                    struct ao_result_msg *r, char *err, size_t errlen)
{
    struct pool *pl;
    struct job j;
    struct measurement m = {{0}, 0, 0, 0}, m2 = {{0}, 0, 0, 0};
    char reason[512], *diag = NULL;
    long long t0 = ao_now_ns(), compile_ns = 0;
    double max_err = 0, mm, vec, bytes;
    cJSON *errors = cJSON_CreateArray(), *timing;
    int rc = -1;

    memset(&j, 0, sizeof j);
    set_str(&r->size, size);
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
        job_start(p, &j, &pl->task, pl->dims, p->o.timeout_s, 1, err, errlen) < 0 ||
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
        struct job j2;
        int rc2;
        memset(&j2, 0, sizeof j2);
        snprintf(j2.dir, sizeof j2.dir, "%s", j.dir);
        rc2 = run_once(p, pl, &j2, r, errors, &max_err, &m2, err, errlen);
        job_end(&j2); /* its directory is j's, removed with it */
        if (rc2 < 0)
            goto fail;
        if (j2.status) {
            j.status = j2.status;
            snprintf(j.reason, sizeof j.reason, "on a second, fresh measurement: %s", j2.reason);
            goto verdict;
        }
        if (m2.st.median > m.st.median) { /* the slower one, with its own wake-up */
            m.st = m2.st;
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
        /* under the minimum by more than the wake-up taken off could be wrong */
        if (m.st.min + (double)m.wake_u_ns < r->t_min_ns * (1 - ROOFLINE_SLACK)) {
            j.status = AO_V_REJECTED;
            snprintf(j.reason, sizeof j.reason, "a call took %.0f ns (give or take %lld ns), under "
                     "the roofline minimum of %.0f ns (%s bound): impossible on this machine, so "
                     "not measured honestly", m.st.min, m.wake_u_ns, r->t_min_ns, r->bound);
            goto verdict;
        }
    }
    if (isfinite(parent_ns))
        r->speedup = parent_ns / m.st.median;
    if (isfinite(baseline_ns))
        r->speedup_vs_baseline = baseline_ns / m.st.median;
    j.status = AO_V_OK;
verdict:
    set_str(&r->status, ao_verdict_name(j.status));
    if (j.reason[0])
        set_str(&r->reason, j.reason);
    r->tolerance = t->tolerance;
    if (cJSON_GetArraySize(errors) > 0) {
        r->max_rel_l2 = max_err;
        cJSON_Delete(r->rel_l2);
        r->rel_l2 = errors;
        errors = NULL;
    }
    r->wall_ns = ao_now_ns() - t0;
    r->cached = 0;
    if ((timing = cJSON_CreateObject())) {
        cJSON_AddNumberToObject(timing, "compile_ns", (double)compile_ns);
        cJSON_AddNumberToObject(timing, "kernel_ns", (double)(m.kernel_ns + m2.kernel_ns));
        cJSON_AddNumberToObject(timing, "measurements", m2.st.n > 0 ? 2 : m.st.n > 0 ? 1 : 0);
        cJSON_AddNumberToObject(timing, "wake_ns", (double)m.wake_ns);
        cJSON_AddNumberToObject(timing, "wake_uncertainty_ns", (double)m.wake_u_ns);
        cJSON_AddNumberToObject(timing, "overhead_ns",
                                (double)(r->wall_ns - compile_ns - m.kernel_ns - m2.kernel_ns));
        cJSON_Delete(r->timing);
        r->timing = timing;
    }
    rc = 0;
    goto out;
fail:
    set_str(&r->status, ao_verdict_name(AO_V_INTERNAL_ERROR));
    set_str(&r->reason, err);
out:
    job_free(&j);
    cJSON_Delete(errors);
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
    snprintf(p->root, sizeof p->root, "%s/accelopt-prof-XXXXXX", base);
    if (ao_mkdirs(base, 0755) < 0 || !mkdtemp(p->root)) {
        snprintf(err, errlen, "cannot create a work directory in '%s': %s", base, strerror(errno));
        free(p);
        return NULL;
    }
    chmod(p->root, 0755); /* the sandbox user must reach its job directory */
    if (ao_random_bytes(p->rng.s, sizeof p->rng.s) < 0 ||
        ao_sandbox_runner_filter(&p->bpf, &p->bpf_len, err, errlen) < 0) {
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
 * checks (AO_PROFILER_CHECKS, raised whenever a check changes), the trusted
 * runner, and the compiler with its flags.  Computed once. */
static const char *verdict_basis(void)
{
    static char hex[65];
    struct ao_buf b = {0};
    char path[700], e[AO_ERRLEN], *text, *ver = NULL;
    char *argv[] = {(char *)AO_CPU_CC, (char *)"--version", NULL};
    int st = 0;

    if (hex[0])
        return hex;
    ao_buf_printf(&b, "checks %d\nflags %s %s\n", AO_PROFILER_CHECKS, AO_CPU_CC, AO_CPU_CFLAGS);
    if (ao_spawn(argv, NULL, &ver, 400, &st, e, sizeof e) == 0 && ver)
        ao_buf_printf(&b, "compiler %.*s\n", (int)strcspn(ver, "\n"), ver);
    free(ver);
    for (int i = 0; i < 2; i++) {
        snprintf(path, sizeof path, i ? "%s/lib/runner_proto.h" : "%s/nkibench/harness/cpu/runner.c",
                 ao_home());
        if ((text = ao_read_file(path, NULL, e, sizeof e))) {
            ao_buf_append(&b, text, strlen(text));
            free(text);
        }
    }
    ao_sha256_hex(b.data ? b.data : "", b.len, hex);
    ao_buf_release(&b);
    return hex;
}

void ao_profile_key(const struct ao_task *t, const char *size, const char *source,
                    const struct ao_calib *c, char hex[65])
{
    struct ao_buf b = {0};

    ao_buf_printf(&b, "cpu\n%s\n%s\n%s\n%s\n%s\n", t->name, t->sha256, size,
                  c ? c->id : "uncalibrated", verdict_basis());
    ao_buf_append(&b, source, strlen(source));
    ao_sha256_hex(b.data, b.len, hex);
    ao_buf_release(&b);
}
