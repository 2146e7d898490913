/* cpu.c - the cpu target: C11 kernels on one core of this machine, timed by
 * lib/profile.c's runner, peaks from lib/calib.c (DESIGN.md section 7) */
#include "calib.h"
#include "target.h"
#include "task.h"
#include "util.h"

static const char *const cpu_tags[] = {"", "c", "c11", "c99", "c17", "h", "cpp", "c++", "cc", NULL};

/* "lhs [M, K]" */
static void tensor_text(struct ao_buf *b, const struct ao_task *t, int i)
{
    ao_buf_printf(b, "%s [", t->t[i].name);
    for (int d = 0; d < t->t[i].rank; d++)
        ao_buf_printf(b, "%s%s", d ? ", " : "", t->dims[t->t[i].dim[d]]);
    ao_buf_printf(b, "]");
}

/* The C prototype, then the tensors in the order the kernel takes them:
 * host pointers to row-major float32 arrays, then the sizes as int. */
static void cpu_convention(const struct ao_task *t, const char *size, const long long *dims,
                           struct ao_buf *b)
{
    ao_buf_printf(b, "%s;\n\nInputs (row-major float32, in this order): ", t->signature);
    for (int i = 0; i < t->ninputs; i++) {
        ao_buf_printf(b, "%s", i ? ", " : "");
        tensor_text(b, t, i);
    }
    ao_buf_printf(b, ".\nOutputs (row-major float32, written by the kernel): ");
    for (int i = t->ninputs; i < t->ninputs + t->noutputs; i++) {
        ao_buf_printf(b, "%s", i > t->ninputs ? ", " : "");
        tensor_text(b, t, i);
    }
    ao_buf_printf(b, ".\nSizes it is timed at (%s):", size);
    for (int d = 0; d < t->ndims; d++)
        ao_buf_printf(b, " %s=%lld", t->dims[d], dims[d]);
    ao_buf_printf(b, "; correctness is also checked at one more shape it does not announce, so "
                  "handle any size. Tolerance: relative L2 error below %g.\n", t->tolerance);
    ao_buf_printf(b, "Compiled with: %s\n", ao_target_cpu.compiler);
}

const struct ao_target ao_target_cpu = {
    .name = "cpu",
    .ext = "c",
    .fence_tags = cpu_tags,
    .compiler = AO_CPU_CC " " AO_CPU_CFLAGS,
    .summary = "C11 kernels on one core of this machine",
    .convention = cpu_convention,
    .calibrate = ao_calib_measure,
};
