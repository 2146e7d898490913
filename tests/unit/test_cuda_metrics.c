/* test_cuda_metrics.c - what a planner is told of a cuda kernel (issue
 * 71): the metrics pass's records summed into counters, the occupancy
 * their launch shapes allow on an H200's limits, and nothing made up
 * where a record or a limit is missing */
#include <math.h>
#include <string.h>

#include "cJSON.h"
#include "check.h"
#include "targets/cuda_metrics.h"

/* an H200 as cudaDeviceGetAttribute gives it */
static const struct ao_run_device h200 = {132, 2048, 65536, 233472, 32, 1024};

static double num(const cJSON *o, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static const char *str(const cJSON *o, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
    return cJSON_IsString(v) ? v->valuestring : "";
}

static struct ao_run_kernel shape(int blocks, int threads, unsigned regs, unsigned shared, unsigned local,
                                  unsigned long long ns, unsigned launches)
{
    struct ao_run_kernel k;

    memset(&k, 0, sizeof k);
    k.grid[0] = blocks, k.grid[1] = k.grid[2] = 1;
    k.block[0] = threads, k.block[1] = k.block[2] = 1;
    k.regs = regs, k.shared_bytes = shared, k.local_bytes = local;
    k.ns = ns, k.launches = launches;
    return k;
}

int main(void)
{
    static struct ao_run_hdr h;
    const char *limit;
    cJSON *o;

    /* split_tf32.cu at paper: 256 threads at 238 registers, 140 KB of
     * shared memory: one block an SM, 8 warps of 64 */
    h.device = h200;
    h.kernels[0] = shape(3072, 256, 238, 143360, 0, 14000000, 1);
    h.nkernels = 1;
    h.span_ns = 14000000;
    CHECK(ao_cuda_blocks_per_sm(&h200, &h.kernels[0], &limit) == 1 && !strcmp(limit, "registers"),
          "a 238-register block of 256 threads: one an SM, by its registers (%s)", limit);
    o = ao_cuda_metrics(&h, 14e6, 4.0 * (4096.0 * 5120 + 5120.0 * 12288 + 4096.0 * 12288),
                        2.0 * 4096 * 5120 * 12288);
    CHECK(o && num(o, "main_theoretical_occupancy") == 0.125 &&
              !strcmp(str(o, "main_occupancy_limited_by"), "registers") &&
              fabs(num(o, "main_waves") - 3072.0 / 132) < 1e-9 && num(o, "kernels_launched") == 1 &&
              num(o, "main_registers_per_thread") == 238 && num(o, "device_busy_share") == 1,
          "its occupancy 1/8, 23.3 waves, one launch, the device busy throughout");
    CHECK(o && fabs(num(o, "achieved_gflops") - 2.0 * 4096 * 5120 * 12288 / 14e6) < 1e-6,
          "the rate its latency gives: %.0f GFLOP/s", num(o, "achieved_gflops"));
    cJSON_Delete(o);

    /* a memory-bound kernel: 256 threads, 16 registers, no shared memory */
    h.kernels[0] = shape(4096, 256, 16, 0, 0, 60000, 1);
    CHECK(ao_cuda_blocks_per_sm(&h200, &h.kernels[0], &limit) == 8 && !strcmp(limit, "threads"),
          "16 registers, no shared memory: 8 blocks of 256, by the threads (%s)", limit);
    /* shared memory binds: 100 KB a block, 2 an SM */
    h.kernels[0] = shape(264, 128, 32, 100 * 1024, 0, 60000, 1);
    CHECK(ao_cuda_blocks_per_sm(&h200, &h.kernels[0], &limit) == 2 && !strcmp(limit, "shared memory"),
          "100 KB of shared memory a block: 2 an SM (%s)", limit);

    /* two shapes, the slower the main one; a spill; an idle gap; launches
     * past the table counted */
    h.kernels[0] = shape(128, 1024, 64, 0, 0, 20000, 3);
    h.kernels[1] = shape(1024, 128, 255, 0, 96, 60000, 1);
    h.nkernels = 2;
    h.kernels_dropped = 2;
    h.span_ns = 100000;
    o = ao_cuda_metrics(&h, 100000, 1e6, 0);
    CHECK(o && num(o, "kernels_launched") == 6 && num(o, "launch_shapes") == 3 &&
              num(o, "main_local_bytes_per_thread") == 96 && num(o, "main_threads_per_block") == 128 &&
              num(o, "main_kernel_share") == 0.75 && num(o, "device_busy_share") == 0.8,
          "the main kernel is the one with the most device time; its spills shown; the device idle 20%%");
    cJSON_Delete(o);

    /* the hardware counters (the range profiler's %, as fractions): only
     * once read, and nothing out of range */
    o = ao_cuda_metrics(&h, 100000, 1e6, 0);
    CHECK(o && !cJSON_GetObjectItemCaseSensitive(o, "dram_throughput_of_peak"),
          "no hardware counter where none was read");
    h.hw_status = AO_RUN_HW_READ;
    h.hw[AO_RUN_HW_DRAM] = 87.5, h.hw[AO_RUN_HW_SM] = 45.0, h.hw[AO_RUN_HW_WARPS] = 61.25;
    h.hw[AO_RUN_HW_L2_HIT] = 250; /* no hit rate is 250% */
    cJSON_Delete(o);
    o = ao_cuda_metrics(&h, 100000, 1e6, 0);
    CHECK(o && num(o, "dram_throughput_of_peak") == 0.875 && num(o, "sm_throughput_of_peak") == 0.45 &&
              num(o, "achieved_occupancy") == 0.6125 && !cJSON_GetObjectItemCaseSensitive(o, "l2_hit_rate"),
          "the counters read: DRAM 0.875 of its peak, SM 0.45, occupancy 0.6125; a 250%% hit rate dropped");
    h.hw_status = AO_RUN_HW_READY; /* set up, never read: nothing */
    cJSON_Delete(o);
    o = ao_cuda_metrics(&h, 100000, 1e6, 0);
    CHECK(o && !cJSON_GetObjectItemCaseSensitive(o, "achieved_occupancy"), "set up but not read: no counter");
    cJSON_Delete(o);
    /* the device's limits missing (a runner that never wrote them): no occupancy */
    memset(&h.device, 0, sizeof h.device);
    o = ao_cuda_metrics(&h, 100000, 1e6, 0);
    CHECK(o && !cJSON_GetObjectItemCaseSensitive(o, "main_theoretical_occupancy") &&
              num(o, "main_grid_blocks") == 1024,
          "no device limits, no occupancy; the launch's own figures stay");
    cJSON_Delete(o);
    /* nonsense from the kernel's process: a 1M-thread block */
    h.device = h200;
    h.kernels[1] = shape(1, 1 << 20, 32, 0, 0, 60000, 1);
    CHECK(ao_cuda_blocks_per_sm(&h200, &h.kernels[1], &limit) == 0 && !strcmp(limit, "unknown"),
          "a block no GPU runs: no occupancy made up");
    /* no kernel record: nothing to say */
    h.nkernels = 0;
    h.kernels_dropped = 0;
    CHECK(ao_cuda_metrics(&h, 100000, 1e6, 0) == NULL, "no kernel record, no counters");
    h.nkernels = 1000; /* a count past the table is read as the table */
    o = ao_cuda_metrics(&h, 100000, 1e6, 0);
    CHECK(o && num(o, "launch_shapes") == AO_RUN_MAX_KERNELS, "a count past the table reads the table only");
    cJSON_Delete(o);
    return CHECK_DONE();
}
