/* cuda_metrics.c - the metrics pass's records as a planner's counters:
 * what the launches themselves say (CUPTI's activity records, which need
 * no profiling permission): their shapes and resources, the occupancy
 * those allow, how busy the call kept the device, and the rates its
 * measured latency gives; and where the driver allows them
 * (RmProfilingAdminOnly 0), the hardware counters of the range profiler:
 * DRAM and SM throughput, achieved occupancy, the L2's hit rate. */
#include <math.h>
#include <string.h>

#include "cJSON.h"
#include "targets/cuda_metrics.h"

#define WARP 32
#define REG_UNIT 256 /* registers are given to a warp 256 at a time */

int ao_cuda_blocks_per_sm(const struct ao_run_device *d, const struct ao_run_kernel *k,
                          const char **limit)
{
    long long threads = (long long)k->block[0] * k->block[1] * k->block[2], warps, n, by;

    *limit = "unknown";
    if (!d->threads_per_sm || !d->regs_per_sm || !d->shared_per_sm || !d->blocks_per_sm ||
        threads <= 0 || threads > 4096 || k->regs > 255)
        return 0;
    warps = (threads + WARP - 1) / WARP;
    n = d->blocks_per_sm, *limit = "blocks";
    if ((by = d->threads_per_sm / (warps * WARP)) < n)
        n = by, *limit = "threads";
    if (k->regs) {
        long long per_warp = ((long long)k->regs * WARP + REG_UNIT - 1) / REG_UNIT * REG_UNIT;
        if ((by = d->regs_per_sm / (per_warp * warps)) < n)
            n = by, *limit = "registers";
    }
    if ((by = d->shared_per_sm / ((long long)k->shared_bytes + d->shared_reserved + 1)) < n)
        n = by, *limit = "shared memory";
    return (int)n;
}

static void add(cJSON *o, const char *name, double v)
{
    if (isfinite(v))
        cJSON_AddNumberToObject(o, name, v);
}

cJSON *ao_cuda_metrics(const struct ao_run_hdr *h, double latency_ns, double bytes, double flops)
{
    unsigned n = h->nkernels < AO_RUN_MAX_KERNELS ? h->nkernels : AO_RUN_MAX_KERNELS;
    const struct ao_run_kernel *top = NULL;
    double busy = 0, launches = h->kernels_dropped;
    const char *limit;
    cJSON *o;

    for (unsigned i = 0; i < n; i++) {
        const struct ao_run_kernel *k = &h->kernels[i];
        busy += (double)k->ns;
        launches += k->launches;
        if (!top || k->ns > top->ns)
            top = k;
    }
    if (!top)
        return NULL;
    o = cJSON_CreateObject();
    add(o, "kernels_launched", launches);
    add(o, "launch_shapes", n + (h->kernels_dropped ? 1 : 0));
    if (h->span_ns > 0) /* the device idle between the call's kernels */
        add(o, "device_busy_share", fmin(1, busy / (double)h->span_ns));
    add(o, "main_kernel_share", busy > 0 ? (double)top->ns / busy : NAN);
    add(o, "main_kernel_launches", top->launches);
    add(o, "main_grid_blocks", (double)top->grid[0] * top->grid[1] * top->grid[2]);
    add(o, "main_threads_per_block", (double)top->block[0] * top->block[1] * top->block[2]);
    add(o, "main_registers_per_thread", top->regs);
    add(o, "main_shared_bytes_per_block", top->shared_bytes);
    add(o, "main_local_bytes_per_thread", top->local_bytes);
    {
        int per_sm = ao_cuda_blocks_per_sm(&h->device, top, &limit);
        double warps = ceil((double)top->block[0] * top->block[1] * top->block[2] / WARP);
        double blocks = (double)top->grid[0] * top->grid[1] * top->grid[2];
        if (per_sm > 0 && h->device.sms > 0 && h->device.sms <= 1024) {
            add(o, "main_blocks_per_sm", per_sm);
            add(o, "main_theoretical_occupancy",
                fmin(1, per_sm * warps / ((double)h->device.threads_per_sm / WARP)));
            cJSON_AddStringToObject(o, "main_occupancy_limited_by", limit);
            add(o, "main_waves", blocks / ((double)per_sm * h->device.sms));
        }
    }
    if (h->hw_status == AO_RUN_HW_READ) { /* the hardware counters, % into fractions */
        static const char *const names[AO_RUN_HW_METRICS] = {
            "dram_throughput_of_peak", "sm_throughput_of_peak", "achieved_occupancy", "l2_hit_rate"};
        for (int i = 0; i < AO_RUN_HW_METRICS; i++)
            if (isfinite(h->hw[i]) && h->hw[i] >= 0 && h->hw[i] <= 110)
                add(o, names[i], fmin(1, h->hw[i] / 100));
    }
    if (latency_ns > 0) { /* the task's least traffic and work, at the measured latency */
        add(o, "achieved_gbs_of_minimum_bytes", bytes / latency_ns);
        add(o, "achieved_gflops", flops / latency_ns);
    }
    return o;
}
