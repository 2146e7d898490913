/* cpu.c - the cpu target: C11 kernels on one core of this machine, linked
 * into the trusted runner (nkibench/harness/cpu/runner.c), which calls them
 * on host memory shared with the profiler; peaks from lib/calib.c
 * (docs/TARGETS.md) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/task.h"
#include "core/util.h"
#include "measure/calib.h"
#include "targets/cpu_peaks.h"
#include "measure/elfcheck.h"
#include "measure/job.h"
#include "measure/sandbox.h"
#include "measure/vendor.h"
#include "targets/target.h"

static const char *const cpu_tags[] = {"", "c", "c11", "c99", "c17", "h", "cpp", "c++", "cc", NULL};

/* "12.0 MiB", "768 KiB" */
static void bytes_text(struct ao_buf *b, double n)
{
    if (n >= 1 << 20)
        ao_buf_printf(b, "%.1f MiB", n / (1 << 20));
    else
        ao_buf_printf(b, "%.0f KiB", n / 1024);
}

/* What the roofline counts for this task at this size, and how (issue 55):
 * the bytes it moves, the inputs' and outputs' share, the flops of each
 * kind and what one flop is; which bandwidth t_memory_ns takes and which
 * inputs can start in the caches is the machine block's to say. */
static void cpu_work(const struct ao_task *t, const long long *dims, struct ao_buf *b)
{
    double mm, vec, bytes, in = 0, out = 0;
    char e[AO_ERRLEN];

    if (ao_task_work(t, dims, &mm, &vec, &bytes, e, sizeof e) < 0)
        return;
    for (int i = 0; i < t->ninputs + t->noutputs; i++) {
        double n = 4;
        for (int d = 0; d < t->t[i].rank; d++)
            n *= (double)dims[t->t[i].dim[d]];
        *(i < t->ninputs ? &in : &out) += n;
    }
    ao_buf_printf(b, "What the roofline counts at this size: ");
    bytes_text(b, bytes);
    ao_buf_printf(b, " moved (bytes = %s: the inputs, ", t->bytes);
    bytes_text(b, in);
    ao_buf_printf(b, " in all, read once; the outputs, ");
    bytes_text(b, out);
    ao_buf_printf(b, ", written once), %.0f matmul flops (mm_flops = %s: a multiply-add is two) and %.0f "
                  "other flops (vec_flops = %s: each exp, division, max, add or multiply on an element is one "
                  "flop, at the elementwise peak of plain vector multiplies and adds, so where exps or "
                  "divisions dominate no kernel reaches t_elementwise_ns). t_memory_ns divides the bytes by the "
                  "bandwidth the machine block gives for a working set of that size (memory's beyond its "
                  "largest cache level). The inputs are written from the kernel's core just before each call: "
                  "what fits in its caches starts there, the rest comes from memory.\n",
                  mm, t->mm_flops, vec, t->vec_flops);
}

/* The C prototype, then the tensors in the order the kernel takes them:
 * host pointers to row-major float32 arrays, then the sizes as int. */
static void cpu_convention(const struct ao_task *t, const char *size, const long long *dims,
                           struct ao_buf *b)
{
    ao_buf_printf(b, "%s;\n\n", t->signature);
    ao_target_tensors_text(t, size, dims, "", b);
    cpu_work(t, dims, b);
    ao_buf_printf(b, "Compiled with: %s\n", ao_target_cpu.compiler);
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


/* runner.o and stub.o for a task: trusted code, compiled on the host;
 * runner.o, the same for every task, once per machine (kept under the hash
 * of the compiler, its version, the flags and the runner's sources) */
static int cpu_harness(const struct ao_task *t, const char *dir, char *err, size_t errlen)
{
    char inc[700], src[700], obj[800], stub[800], stubo[800];
    /* -fno-reorder-functions: main stays in .text, after the kernel (linked
     * first), not in .text.startup before it, so the kernel's code sits at
     * one address whatever the runner's size.  Its loops' alignment moved
     * with main's size, and with it the kernel's speed: matmul's baseline
     * at tiny measured 285 us with one runner and 345 with a runner 150
     * bytes longer (issue 46, docs/BENCHMARKS.md) */
    char *cc_runner[] = {(char *)AO_CPU_CC, (char *)"-O2", (char *)"-fno-reorder-functions",
                         (char *)"-std=gnu11", inc, (char *)"-c", src, (char *)"-o", obj, NULL};
    char *cc_stub[] = {(char *)AO_CPU_CC, (char *)"-O2", (char *)"-std=gnu11", (char *)"-c",
                       stub, (char *)"-o", stubo, NULL};
    struct ao_buf b = {0};
    int rc;

    if (ao_target_write_stub(t, dir, "", "stub.c", err, errlen) < 0)
        return -1;
    if (ao_name(stub, sizeof stub, "%s/stub.c", dir) < 0 || ao_name(obj, sizeof obj, "%s/runner.o", dir) < 0 ||
        ao_name(stubo, sizeof stubo, "%s/stub.o", dir) < 0 || ao_name(inc, sizeof inc, "-I%s/lib", ao_home()) < 0 ||
        ao_name(src, sizeof src, "%s/nkibench/harness/cpu/runner.c", ao_home()) < 0)
        return ao_errf(err, errlen, "the harness's paths are too long ('%.80s', '%.80s')", dir, ao_home());
    ao_buf_printf(&b, "flags %s -O2 -fno-reorder-functions -std=gnu11\n", AO_CPU_CC);
    ao_target_basis_version(&b, AO_CPU_CC, 0);
    ao_target_basis_runner_side(&b);
    ao_target_basis_file(&b, src);
    rc = ao_target_kept_object("cpu-runner", &b, ao_target_run_host, cc_runner, obj, err, errlen);
    ao_buf_release(&b);
    return rc < 0 || ao_target_run_host(cc_stub, err, errlen) < 0 ? -1 : 0;
}

static const char *const cpu_harness_files[] = {"proto.h", "runner.o", "stub.o", NULL};

/* preprocess, then compile what was preprocessed (the text the rules are
 * checked on), then link with a stack that is never executable, whatever
 * the object's .note.GNU-stack asks for */
static void cpu_build_command(char *cmd, size_t len)
{
    snprintf(cmd, len,
             "%s %s -fdiagnostics-color=never -fmax-errors=8 -include proto.h -E kernel.c -o kernel.i"
             " && %s %s -fdiagnostics-color=never -fmax-errors=8 -fpreprocessed -c kernel.i -o kernel.o"
             " && %s -Wl,-z,noexecstack kernel.o runner.o stub.o -o runner -lm",
             AO_CPU_CC, AO_CPU_CFLAGS, AO_CPU_CC, AO_CPU_CFLAGS, AO_CPU_CC);
}

/* The preprocessed text's rules, then the object's: exactly one external
 * function, no constructors (elfcheck.h). */
static int cpu_check_build(const char *dir, char *reason, size_t len)
{
    char path[800];
    char *pre;
    int e;

    if (ao_name(path, sizeof path, "%s/kernel.i", dir) < 0)
        return ao_errf(reason, len, "the job directory's path is too long"), 1;
    pre = ao_read_file_max(path, 64u << 20, NULL, reason, len);
    if (!pre)
        return 1;
    e = preprocessed_check(pre, reason, len);
    free(pre);
    if (e)
        return 1;
    if (ao_name(path, sizeof path, "%s/kernel.o", dir) < 0)
        return ao_errf(reason, len, "the job directory's path is too long"), 1;
    e = ao_elf_check(path, "kernel", reason, len);
    return e != 0 ? 1 : 0;
}

static int cpu_available(char *err, size_t errlen)
{
    (void)err;
    (void)errlen;
    return 0;
}

static void cpu_machine(char *model, size_t mlen, char *flags, size_t flen)
{
    ao_cpu_model(model, mlen);
    snprintf(flags, flen, "%s", AO_CPU_CFLAGS);
}

static void cpu_basis(struct ao_buf *b)
{
    char path[700];

    ao_buf_printf(b, "flags %s %s\n", AO_CPU_CC, AO_CPU_CFLAGS);
    ao_buf_printf(b, "runner flags -O2 -fno-reorder-functions, linked after the kernel\n");
    ao_target_basis_version(b, AO_CPU_CC, 0);
    ao_target_basis_runner_side(b);
    if (ao_name(path, sizeof path, "%s/nkibench/harness/cpu/runner.c", ao_home()) == 0)
        ao_target_basis_file(b, path); /* (else the runner cannot be built: nothing is kept) */
}

const struct ao_target ao_target_cpu = {
    .name = "cpu",
    .ext = "c",
    .fence_tags = cpu_tags,
    .compiler = AO_CPU_CC " " AO_CPU_CFLAGS,
    .summary = "C11 kernels on one core of this machine",
    .convention = cpu_convention,
    .calibrate = ao_calib_measure,
    .machine = cpu_machine,
    .kernel_file = "kernel.c",
    .reference_file = "reference.c",
    .available = cpu_available,
    .harness = cpu_harness,
    .harness_files = cpu_harness_files,
    .build_command = cpu_build_command,
    .build_mem_bytes = 4LL << 30,
    .check_build = cpu_check_build,
    .runner_filter = ao_sandbox_runner_filter,
    /* no before_call: prof_job_call writes every input line and every
     * output line (the poison) from the runner's core just before each
     * call, so a call starts with them in its caches as if it had just
     * read them; a second pass over them cost silu 10 ms a call (issue 53) */
    .drain = 1, /* the kernel's code shares the runner's process */
    .basis = cpu_basis,
    .vendor_name = "openblas sgemm",
    .vendor_sgemm = ao_vendor_sgemm,
};
