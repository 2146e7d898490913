/* device_clock.cuh - the GPU's own time of the work one command launched,
 * for the cuda runner (runner.cu).  By default CUDA events around the
 * call's work held behind a gate (below), so they leave the launch out.
 * On request (ACCELOPT_DEVICE_CLOCK=cupti), CUPTI's activity records of
 * every kernel, copy and fill on every stream, from the first start to the
 * last end: exact spans, but on the H200 VM measured here CUPTI added
 * 200-400 µs of host time to every launch (docs/BENCHMARKS.md), which
 * also widens the gaps between the kernels of a call.  CUPTI is opened at
 * run time (AO_CUPTI_LIB, the toolkit's libcupti.so found when runner.o is
 * built), before the seccomp filter; where it will not start, the runner
 * falls back to the gate.
 *
 * Everything here runs in the kernel's process, so the figures are the
 * runner's word, never trusted alone: the profiler holds them against its
 * own clock around the same call (lib/profiler/timing.c). */
#ifndef AO_DEVICE_CLOCK_CUH
#define AO_DEVICE_CLOCK_CUH

#include <dlfcn.h>
#include <stdint.h>
#include <string.h>

#include "runner_proto.h"

#if defined(AO_CUPTI_LIB) && __has_include(<cupti_activity.h>)
#include <cupti_activity.h>
#define AO_HAVE_CUPTI 1
#endif

/* device_clock's values: runner_proto.h's AO_RUN_CLOCK_* */
/* clock_want's: the gate (the default), events alone, CUPTI; CUPTI and
 * its range profiler (the metrics pass, hw_counters.cuh) */
enum { AO_WANT_GATED = 0, AO_WANT_EVENTS = 1, AO_WANT_CUPTI = 2, AO_WANT_METRICS = 3 };

/* The gate: a trusted one-thread kernel launched ahead of the call, which
 * holds the stream until the runner opens it (a word of mapped host
 * memory) once the call has returned, or until AO_GATE_NS have passed on
 * the GPU's clock.  The call's launches queue up behind it, so the first
 * event, recorded right behind the gate, is stamped when the work can
 * start rather than when the host began to launch it: the events then
 * time the device's work, not the launch (a few µs of host work each).
 * The limit keeps a call that waits for the device itself (cudaFree,
 * cudaMemcpy) from waiting on the gate for long: the window then opens
 * early and takes in host time, never less than the work.  The profiler
 * allows for it (lib/profiler/profiler_int.h RUNNER_CLOCK_GATE_NS). */
#define AO_GATE_NS 30000ull

static __global__ void ao_gate(const volatile unsigned *open, unsigned long long most_ns)
{
    unsigned long long t0, t;
    long long c0 = clock64();

    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do {
        if (*open)
            return;
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
        /* the SM's own cycles too, 2 a ns at most (an H200 runs at up to
         * 1980 MHz): on the H200 VM a call held well past AO_GATE_NS, as
         * if the global timer ticked coarsely there (docs/BENCHMARKS.md) */
    } while (t - t0 < most_ns && clock64() - c0 < (long long)(2 * most_ns));
}

/* the window of the records delivered since the last ao_clock_take(), and
 * its kernels summed by launch shape (runner_proto.h ao_run_kernel) */
static struct {
    uint64_t first, last; /* GPU timestamps, ns */
    unsigned records;
    struct ao_run_kernel kernels[AO_RUN_MAX_KERNELS];
    unsigned nkernels, dropped;
} ao_clock;

#ifdef AO_HAVE_CUPTI
/* Records land in a few static buffers (no allocation once filtered). */
#define AO_CLOCK_BUFS 8
#define AO_CLOCK_BUF_BYTES (256 * 1024)
static uint8_t ao_clock_buf[AO_CLOCK_BUFS][AO_CLOCK_BUF_BYTES] __attribute__((aligned(8)));
static int ao_clock_busy[AO_CLOCK_BUFS];

static CUptiResult (*ao_cupti_enable)(CUpti_ActivityKind);
static CUptiResult (*ao_cupti_flush)(uint32_t);
static CUptiResult (*ao_cupti_next)(uint8_t *, size_t, CUpti_Activity **);
static CUptiResult (*ao_cupti_callbacks)(CUpti_BuffersCallbackRequestFunc,
                                         CUpti_BuffersCallbackCompleteFunc);

static void CUPTIAPI ao_clock_request(uint8_t **buffer, size_t *size, size_t *max_records)
{
    *buffer = NULL;
    *size = 0;
    *max_records = 0;
    for (int i = 0; i < AO_CLOCK_BUFS; i++)
        if (!__atomic_exchange_n(&ao_clock_busy[i], 1, __ATOMIC_ACQ_REL)) {
            *buffer = ao_clock_buf[i];
            *size = AO_CLOCK_BUF_BYTES;
            return;
        }
    /* none free: CUPTI drops records and counts them; the window then
     * misses work, and the profiler's clock bounds what that can hide */
}

static void ao_clock_span(uint64_t start, uint64_t end)
{
    if (!end || end < start)
        return;
    if (!ao_clock.records || start < ao_clock.first)
        ao_clock.first = start;
    if (!ao_clock.records || end > ao_clock.last)
        ao_clock.last = end;
    ao_clock.records++;
}

/* a kernel's record into the table: summed with the launches of its shape */
static void ao_clock_kernel(const CUpti_ActivityKernel10 *k)
{
    struct ao_run_kernel e, *t = ao_clock.kernels;
    unsigned i;

    memset(&e, 0, sizeof e);
    e.grid[0] = k->gridX, e.grid[1] = k->gridY, e.grid[2] = k->gridZ;
    e.block[0] = k->blockX, e.block[1] = k->blockY, e.block[2] = k->blockZ;
    e.regs = k->registersPerThread;
    e.shared_bytes = (uint32_t)k->staticSharedMemory + (uint32_t)k->dynamicSharedMemory;
    e.local_bytes = k->localMemoryPerThread;
    for (i = 0; i < ao_clock.nkernels; i++)
        if (!memcmp(t[i].grid, e.grid, sizeof e.grid) && !memcmp(t[i].block, e.block, sizeof e.block) &&
            t[i].regs == e.regs && t[i].shared_bytes == e.shared_bytes && t[i].local_bytes == e.local_bytes)
            break;
    if (i == ao_clock.nkernels) {
        if (i == AO_RUN_MAX_KERNELS) {
            ao_clock.dropped++;
            return;
        }
        t[ao_clock.nkernels++] = e;
    }
    t[i].launches++;
    t[i].ns += k->end > k->start ? k->end - k->start : 0;
}

static void CUPTIAPI ao_clock_complete(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
                                       size_t valid)
{
    CUpti_Activity *r = NULL;

    (void)ctx, (void)stream, (void)size;
    while (ao_cupti_next(buffer, valid, &r) == CUPTI_SUCCESS) {
        if (r->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL || r->kind == CUPTI_ACTIVITY_KIND_KERNEL) {
            const CUpti_ActivityKernel10 *k = (const CUpti_ActivityKernel10 *)r;
            ao_clock_span(k->start, k->end);
            ao_clock_kernel(k);
        } else if (r->kind == CUPTI_ACTIVITY_KIND_MEMCPY) {
            const CUpti_ActivityMemcpy6 *m = (const CUpti_ActivityMemcpy6 *)r;
            ao_clock_span(m->start, m->end);
        } else if (r->kind == CUPTI_ACTIVITY_KIND_MEMSET) {
            const CUpti_ActivityMemset4 *m = (const CUpti_ActivityMemset4 *)r;
            ao_clock_span(m->start, m->end);
        }
    }
    for (int i = 0; i < AO_CLOCK_BUFS; i++)
        if (buffer == ao_clock_buf[i])
            __atomic_store_n(&ao_clock_busy[i], 0, __ATOMIC_RELEASE);
}

/* Open CUPTI and start its records: 1 on success.  Before the filter (it
 * loads a library and may start threads of its own). */
static int ao_clock_open(void)
{
    void *h = dlopen(AO_CUPTI_LIB, RTLD_NOW | RTLD_LOCAL);

    if (!h)
        return 0;
    *(void **)&ao_cupti_enable = dlsym(h, "cuptiActivityEnable");
    *(void **)&ao_cupti_flush = dlsym(h, "cuptiActivityFlushAll");
    *(void **)&ao_cupti_next = dlsym(h, "cuptiActivityGetNextRecord");
    *(void **)&ao_cupti_callbacks = dlsym(h, "cuptiActivityRegisterCallbacks");
    if (!ao_cupti_enable || !ao_cupti_flush || !ao_cupti_next || !ao_cupti_callbacks ||
        ao_cupti_callbacks(ao_clock_request, ao_clock_complete) != CUPTI_SUCCESS ||
        ao_cupti_enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) != CUPTI_SUCCESS ||
        ao_cupti_enable(CUPTI_ACTIVITY_KIND_MEMCPY) != CUPTI_SUCCESS ||
        ao_cupti_enable(CUPTI_ACTIVITY_KIND_MEMSET) != CUPTI_SUCCESS)
        return 0;
    return 1;
}

/* Deliver every record of finished work (the device synchronized first). */
static int ao_clock_flush(void)
{
    return ao_cupti_flush(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) == CUPTI_SUCCESS ? 0 : -1;
}
#else
static int ao_clock_open(void)
{
    return 0;
}

static int ao_clock_flush(void)
{
    return -1;
}
#endif

/* The window since the last take, and a fresh one: the ns from the first
 * start to the last end (0 when no record came), *records how many. */
static uint64_t ao_clock_take(unsigned *records)
{
    uint64_t ns = ao_clock.records ? ao_clock.last - ao_clock.first : 0;

    *records = ao_clock.records;
    ao_clock.records = 0;
    ao_clock.first = ao_clock.last = 0;
    ao_clock.nkernels = ao_clock.dropped = 0;
    return ns;
}

/* The window's kernels into the header (before ao_clock_take clears them). */
static void ao_clock_kernels_out(struct ao_run_hdr *h)
{
    h->span_ns = ao_clock.records ? ao_clock.last - ao_clock.first : 0;
    for (unsigned i = 0; i < ao_clock.nkernels; i++)
        h->kernels[i] = ao_clock.kernels[i];
    h->nkernels = ao_clock.nkernels;
    h->kernels_dropped = ao_clock.dropped;
}

#endif
