/* runner.cu - the trusted side of a cuda kernel's process: maps the shared
 * tensors, owns their device copies, locks itself down with seccomp once
 * the driver is up, then serves the profiler's commands (runner_proto.h):
 *
 *   LOAD   the inputs from the region to the device, the outputs filled
 *          with the header's poison word on the device (a trusted kernel:
 *          bmm's outputs are 1 GB at paper, not worth a copy), then the L2
 *          flushed by writing a buffer twice its size, then a device-wide
 *          synchronize;
 *   CALL   kernel() with device pointers, then a device-wide synchronize
 *          (the profiler's clock runs from `go` to `done`); the device's
 *          own time of the work it launched goes in device_ns: CUDA
 *          events around the call's work queued behind a gate, or CUPTI's
 *          records, or events around the call (device_clock says which;
 *          device_clock.cuh); under CUPTI (the metrics pass) its kernels
 *          summed by launch shape too;
 *   FETCH  every tensor back to the region (inputs too: they must be
 *          unchanged), synchronously; sent only after a call whose
 *          tensors the profiler reads;
 *   NOP    an empty trusted kernel and a synchronize: what every call costs
 *          beside the kernel, taken off each timed call by the profiler;
 *   COUNTERS  (the metrics pass only) the call again under CUPTI's range
 *          profiler, once per pass its hardware counters need, their
 *          values into the header (hw_counters.cuh);
 *   DRAIN  a device-wide synchronize, sent by the profiler right after each
 *          CALL and NOP with its clock still running: if the kernel's code
 *          raised `done` itself, its queued work finishes here, timed; the
 *          records of work that finished only now are counted in
 *          late_records.
 *
 * Device buffers mirror the region's data area, so the profiler's secret
 * choice of tensor positions moves the device addresses too.  Any CUDA
 * error ends the process with AO_RUN_EXIT_DEVICE and the error's name on
 * stderr: a sticky error dies with it, and the next kernel starts clean. */
#include <cuda_runtime.h>
#include <stdio.h>

#include "../runner_side.h"
#include "device_clock.cuh"
#include "hw_counters.cuh"

/* generated per task: calls kernel() with the task's signature */
extern "C" void ao_call(float *const *p, const int *dims);

static __global__ void ao_empty(void)
{
}

/* n 32-bit words at p set to w: the outputs' poison, on the GPU */
static __global__ void ao_poison(uint32_t *p, size_t n, uint32_t w)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        p[i] = w;
}

/* A CUDA error ends the process: its name for the profiler to quote. */
static void check(cudaError_t e, const char *what)
{
    if (e == cudaSuccess)
        return;
    fprintf(stderr, "%s: %s (%s)\n", what, cudaGetErrorName(e), cudaGetErrorString(e));
    fflush(stderr);
    _exit(AO_RUN_EXIT_DEVICE);
}

/* What bounds the blocks an SM holds, for the metrics pass's occupancy. */
static void device_limits(struct ao_run_device *d)
{
    int v[6] = {0, 0, 0, 0, 0, 0};
    const cudaDeviceAttr a[6] = {cudaDevAttrMultiProcessorCount, cudaDevAttrMaxThreadsPerMultiProcessor,
                                 cudaDevAttrMaxRegistersPerMultiprocessor,
                                 cudaDevAttrMaxSharedMemoryPerMultiprocessor,
                                 cudaDevAttrMaxBlocksPerMultiprocessor, cudaDevAttrReservedSharedMemoryPerBlock};

    for (int i = 0; i < 6; i++)
        check(cudaDeviceGetAttribute(&v[i], a[i], 0), "reading the GPU's limits");
    d->sms = (uint32_t)v[0], d->threads_per_sm = (uint32_t)v[1], d->regs_per_sm = (uint32_t)v[2];
    d->shared_per_sm = (uint32_t)v[3], d->blocks_per_sm = (uint32_t)v[4], d->shared_reserved = (uint32_t)v[5];
}

/* The gate unless events alone or CUPTI were asked for. */
static int ao_hdr_want_gate(void)
{
    return ao_hdr->clock_want == AO_WANT_GATED || ao_hdr->clock_want == AO_WANT_CUPTI ||
           ao_hdr->clock_want == AO_WANT_METRICS;
}

/* COUNTERS' call: the kernel's, then a wait for the device */
struct counted_call {
    float **ptrs;
    int *dims;
};

static void counted_call(void *arg)
{
    struct counted_call *c = (struct counted_call *)arg;

    ao_call(c->ptrs, c->dims);
    check(cudaGetLastError(), "launching the kernel");
    check(cudaDeviceSynchronize(), "running the kernel");
}

/* Drop the records of the runner's own copies and fills. */
static void discard_records(int cupti)
{
    unsigned recs;

    if (cupti && ao_clock_flush() == 0)
        (void)ao_clock_take(&recs);
}

/* What the runner holds of the GPU between commands. */
struct gpu {
    char *dev;           /* the tensors' device copy (the region's data area) */
    void *flush;         /* written between calls: the L2 flushed */
    size_t flush_bytes;
    cudaEvent_t ev0, ev1;
    volatile unsigned *gate; /* the gate's word, mapped */
    unsigned *gate_d;
    int gated, cupti, hw;
};

/* Everything the GPU needs, before the filter: the context, the buffers,
 * the kernels loaded, the gate, CUPTI and the counters' profiler as the
 * header asks. */
static void gpu_start(struct gpu *g, char *base, uint64_t size)
{
    int l2 = 0;

    check(cudaSetDevice(0), "selecting the GPU");
    check(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0), "reading the L2 size");
    g->flush_bytes = 2 * (size_t)(l2 > (4 << 20) ? l2 : (4 << 20));
    device_limits(&ao_hdr->device);
    check(cudaMalloc((void **)&g->dev, size - AO_RUN_DATA_OFFSET), "allocating the tensors");
    check(cudaMalloc(&g->flush, g->flush_bytes), "allocating the L2 flush buffer");
    check(cudaEventCreate(&g->ev0), "creating an event");
    check(cudaEventCreate(&g->ev1), "creating an event");
    /* the tensors' area pinned, so LOAD and FETCH run at the bus's rate
     * rather than through the driver's staging copies (a paper-size
     * profile was mostly those); where the driver will not, pageable */
    if (cudaHostRegister(base + AO_RUN_DATA_OFFSET, size - AO_RUN_DATA_OFFSET,
                         cudaHostRegisterDefault) != cudaSuccess)
        (void)cudaGetLastError();
    ao_empty<<<1, 1>>>();
    check(cudaGetLastError(), "launching the empty kernel");
    ao_poison<<<1, 1>>>((uint32_t *)g->flush, 0, 0); /* loaded before the filter too */
    check(cudaGetLastError(), "launching the poison kernel");
    check(cudaDeviceSynchronize(), "starting the GPU");
    /* the gate's word, mapped, and the gate loaded, before the filter */
    check(cudaHostAlloc((void **)&g->gate, 64, cudaHostAllocMapped), "allocating the gate");
    check(cudaHostGetDevicePointer((void **)&g->gate_d, (void *)g->gate, 0), "mapping the gate");
    *g->gate = 1;
    ao_gate<<<1, 1>>>(g->gate_d, 0);
    check(cudaGetLastError(), "launching the gate");
    check(cudaDeviceSynchronize(), "starting the gate");
    g->gated = ao_hdr_want_gate();
    /* CUPTI up, its threads started and one window read, before the filter */
    if ((ao_hdr->clock_want == AO_WANT_CUPTI || ao_hdr->clock_want == AO_WANT_METRICS) && ao_clock_open()) {
        unsigned recs = 0;
        ao_empty<<<1, 1>>>();
        check(cudaGetLastError(), "launching the empty kernel");
        check(cudaDeviceSynchronize(), "starting the GPU's records");
        g->cupti = ao_clock_flush() == 0;
        (void)ao_clock_take(&recs);
        g->cupti = g->cupti && recs > 0;
    }
    g->gated = g->gated && !g->cupti;
    /* the metrics pass: the hardware counters' profiler set up, before the filter */
    g->hw = AO_HW_NONE;
    if (ao_hdr->clock_want == AO_WANT_METRICS) {
        uint32_t passes = 0;
        g->hw = ao_hw_open(&passes);
        ao_hdr->hw_status = g->hw;
        ao_hdr->hw_passes = passes;
    }
}

/* LOAD: the inputs copied in, the outputs poisoned on the GPU, the L2
 * flushed. */
static void load(struct gpu *g, char *base, float **ptrs, const uint64_t *off, const uint64_t *bytes, int nptrs,
                 uint64_t seq)
{
    uint32_t first_output = ao_hdr->first_output, poison = ao_hdr->poison;

    for (int i = 0; i < nptrs; i++) {
        if ((uint32_t)i < first_output) {
            check(cudaMemcpy(ptrs[i], base + off[i], bytes[i], cudaMemcpyHostToDevice),
                  "copying a tensor to the GPU");
            continue;
        }
        ao_poison<<<1024, 256>>>((uint32_t *)ptrs[i], bytes[i] / 4, poison);
        check(cudaGetLastError(), "poisoning an output");
    }
    check(cudaMemset(g->flush, (int)(seq & 0xff), g->flush_bytes), "flushing the L2");
    check(cudaDeviceSynchronize(), "flushing the L2");
    discard_records(g->cupti); /* the runner's own work: not the call's */
}

/* CALL or NOP (a NOP is a CALL's every step around an empty kernel): the
 * gate, the events, and the device's own time by the best clock there is. */
static void timed_call(struct gpu *g, uint32_t cmd, float **ptrs, int *dims)
{
    float ms = 0;
    unsigned recs = 0;
    uint64_t ns = 0;

    memcpy(dims, (const void *)ao_hdr->dims, sizeof(int) * AO_RUN_MAX_DIMS);
    if (g->gated) {
        __atomic_store_n(g->gate, 0u, __ATOMIC_SEQ_CST);
        ao_gate<<<1, 1>>>(g->gate_d, AO_GATE_NS);
        check(cudaGetLastError(), "launching the gate");
    }
    check(cudaEventRecord(g->ev0, 0), "recording an event");
    if (cmd == AO_RUN_CMD_CALL)
        ao_call(ptrs, dims);
    else
        ao_empty<<<1, 1>>>();
    check(cudaGetLastError(), "launching the kernel");
    check(cudaEventRecord(g->ev1, 0), "recording an event");
    if (g->gated)
        __atomic_store_n(g->gate, 1u, __ATOMIC_SEQ_CST);
    check(cudaDeviceSynchronize(), "running the kernel");
    check(cudaEventElapsedTime(&ms, g->ev0, g->ev1), "reading the events");
    if (g->cupti && ao_clock_flush() == 0) {
        ao_clock_kernels_out(ao_hdr); /* the metrics pass reads them */
        ns = ao_clock_take(&recs);
    }
    ao_hdr->device_clock = recs ? AO_RUN_CLOCK_CUPTI : g->gated ? AO_RUN_CLOCK_GATED : AO_RUN_CLOCK_EVENTS;
    ao_hdr->events_ns = (uint64_t)((double)ms * 1e6);
    ao_hdr->device_ns = recs ? ns : ao_hdr->events_ns;
    ao_hdr->late_records = 0;
}

int main(int argc, char **argv)
{
    uint64_t size, seq = 0;
    int nptrs, code;
    char *base = ao_runner_attach(argc, argv, &size, &nptrs, &code);
    struct gpu g;

    if (!base)
        return code;
    memset(&g, 0, sizeof g);
    gpu_start(&g, base, size); /* the driver up before the filter */
    if ((code = ao_runner_lockdown(base)) != 0)
        return code;
    for (;;) {
        float *ptrs[AO_RUN_MAX_PTRS];
        int dims[AO_RUN_MAX_DIMS];
        uint64_t off[AO_RUN_MAX_PTRS], bytes[AO_RUN_MAX_PTRS];
        uint32_t cmd;

        seq = ao_runner_next(seq);
        cmd = ao_hdr->cmd;
        if (cmd == AO_RUN_CMD_EXIT)
            return 0;
        for (int i = 0; i < nptrs; i++) {
            off[i] = ao_hdr->off[i];
            bytes[i] = ao_hdr->bytes[i];
            if ((cmd == AO_RUN_CMD_CALL || cmd == AO_RUN_CMD_LOAD || cmd == AO_RUN_CMD_FETCH ||
                 cmd == AO_RUN_CMD_COUNTERS) &&
                (off[i] < AO_RUN_DATA_OFFSET || off[i] > size || bytes[i] > size - off[i]))
                return 125;
            ptrs[i] = (float *)(g.dev + (off[i] - AO_RUN_DATA_OFFSET));
        }
        if (cmd == AO_RUN_CMD_LOAD) {
            load(&g, base, ptrs, off, bytes, nptrs, seq);
        } else if (cmd == AO_RUN_CMD_CALL || cmd == AO_RUN_CMD_NOP) {
            timed_call(&g, cmd, ptrs, dims);
        } else if (cmd == AO_RUN_CMD_FETCH) {
            for (int i = 0; i < nptrs; i++)
                check(cudaMemcpy(base + off[i], ptrs[i], bytes[i], cudaMemcpyDeviceToHost),
                      "copying a tensor from the GPU");
            discard_records(g.cupti);
        } else if (cmd == AO_RUN_CMD_COUNTERS) {
            /* the call under the range profiler, untimed: only where it
             * was set up (our own word, not the header's) */
            struct counted_call c = {ptrs, dims};
            memcpy(dims, (const void *)ao_hdr->dims, sizeof dims);
            ao_hdr->hw_status = g.hw == AO_HW_READY ? ao_hw_read(counted_call, &c, ao_hdr->hw) : g.hw;
            discard_records(g.cupti);
        } else if (cmd == AO_RUN_CMD_DRAIN) {
            unsigned recs = 0;
            check(cudaDeviceSynchronize(), "waiting for the GPU");
            if (g.cupti && ao_clock_flush() == 0)
                (void)ao_clock_take(&recs);
            ao_hdr->late_records = recs;
        }
        ao_runner_done(seq);
    }
}
