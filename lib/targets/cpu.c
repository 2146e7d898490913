/* cpu.c - the cpu target: C11 kernels on one core of this machine, timed by
 * lib/profile.c's runner, peaks from lib/calib.c (DESIGN.md section 7) */
#include "calib.h"
#include "target.h"

static const char *const cpu_tags[] = {"", "c", "c11", "c99", "c17", "h", "cpp", "c++", "cc", NULL};

const struct ao_target ao_target_cpu = {
    .name = "cpu",
    .ext = "c",
    .fence_tags = cpu_tags,
    .compiler = AO_CPU_CC " " AO_CPU_CFLAGS,
    .summary = "C11 kernels on one core of this machine",
};
