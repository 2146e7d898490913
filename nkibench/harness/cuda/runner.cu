/* runner.cu - the trusted side of a cuda kernel's process: maps the shared
 * tensors, owns their device copies, locks itself down with seccomp once
 * the driver is up, then serves the profiler's commands (runner_proto.h):
 *
 *   LOAD   every tensor from the region to the device (inputs, and outputs
 *          as the profiler poisoned them), then the L2 flushed by writing a
 *          buffer twice its size, then a device-wide synchronize;
 *   CALL   kernel() with device pointers, then a device-wide synchronize
 *          (the profiler's clock runs from `go` to `done`; CUDA events
 *          around the call are reported in device_ns, untrusted);
 *   FETCH  every tensor back to the region (inputs too: they must be
 *          unchanged), synchronously;
 *   NOP    an empty trusted kernel and a synchronize: what every call costs
 *          beside the kernel, taken off each timed call by the profiler.
 *
 * Device buffers mirror the region's data area, so the profiler's secret
 * choice of tensor positions moves the device addresses too.  Any CUDA
 * error ends the process with AO_RUN_EXIT_DEVICE and the error's name on
 * stderr: a sticky error dies with it, and the next kernel starts clean. */
#include <cuda_runtime.h>
#include <linux/filter.h>
#include <linux/futex.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "runner_proto.h"

/* generated per task: calls kernel() with the task's signature */
extern "C" void ao_call(float *const *p, const int *dims);

static struct ao_run_hdr *hdr;

static __global__ void ao_empty(void)
{
}

static void on_sigsys(int sig, siginfo_t *si, void *uc)
{
    (void)sig;
    (void)uc;
    hdr->bad_syscall = si->si_syscall;
    syscall(SYS_exit_group, AO_RUN_EXIT_SYSCALL);
}

static void futex_wait(volatile uint64_t *addr, uint64_t val)
{
    syscall(SYS_futex, (uint32_t *)addr, FUTEX_WAIT, (uint32_t)val, NULL, NULL, 0);
}

static void futex_wake(volatile uint64_t *addr)
{
    syscall(SYS_futex, (uint32_t *)addr, FUTEX_WAKE, 1, NULL, NULL, 0);
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

int main(int argc, char **argv)
{
    struct sock_fprog prog;
    struct sigaction sa;
    uint64_t size, seq = 0;
    int nptrs, l2 = 0;
    char *base, *dev = NULL;
    void *flush = NULL;
    size_t flush_bytes;
    cudaEvent_t ev0, ev1;

    if (argc != 3)
        return 120;
    size = strtoull(argv[1], NULL, 10);
    nptrs = atoi(argv[2]);
    if (nptrs < 1 || nptrs > AO_RUN_MAX_PTRS || size <= AO_RUN_DATA_OFFSET)
        return 120;
    base = (char *)mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, 3, 0);
    if (base == MAP_FAILED)
        return 121;
    close(3);
    hdr = (struct ao_run_hdr *)base;
    if (hdr->magic != AO_RUN_MAGIC || hdr->total_size != size || hdr->bpf_len == 0 ||
        hdr->bpf_len > AO_RUN_BPF_MAX)
        return 122;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_sigsys;
    sa.sa_flags = SA_SIGINFO;
    if (sigaction(SIGSYS, &sa, NULL) < 0)
        return 123;
    /* the driver up before the filter: context, buffers, a first launch */
    check(cudaSetDevice(0), "selecting the GPU");
    check(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0), "reading the L2 size");
    flush_bytes = 2 * (size_t)(l2 > (4 << 20) ? l2 : (4 << 20));
    check(cudaMalloc((void **)&dev, size - AO_RUN_DATA_OFFSET), "allocating the tensors");
    check(cudaMalloc(&flush, flush_bytes), "allocating the L2 flush buffer");
    check(cudaEventCreate(&ev0), "creating an event");
    check(cudaEventCreate(&ev1), "creating an event");
    ao_empty<<<1, 1>>>();
    check(cudaGetLastError(), "launching the empty kernel");
    check(cudaDeviceSynchronize(), "starting the GPU");
    prog.len = (unsigned short)(hdr->bpf_len / sizeof(struct sock_filter));
    prog.filter = (struct sock_filter *)(base + AO_RUN_HDR_SIZE);
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
        prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0)
        return 124;
    for (;;) {
        float *ptrs[AO_RUN_MAX_PTRS];
        int dims[AO_RUN_MAX_DIMS];
        uint64_t off[AO_RUN_MAX_PTRS], bytes[AO_RUN_MAX_PTRS];
        int spins = 0;
        uint32_t cmd;

        while (hdr->go == seq) {
            if (++spins < 2000000) {
                __builtin_ia32_pause();
                continue;
            }
            futex_wait(&hdr->go, seq);
        }
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        seq = hdr->go;
        cmd = hdr->cmd;
        if (cmd == AO_RUN_CMD_EXIT)
            return 0;
        for (int i = 0; i < nptrs; i++) {
            off[i] = hdr->off[i];
            bytes[i] = hdr->bytes[i];
            if (cmd != AO_RUN_CMD_NOP &&
                (off[i] < AO_RUN_DATA_OFFSET || off[i] > size || bytes[i] > size - off[i]))
                return 125;
            ptrs[i] = (float *)(dev + (off[i] - AO_RUN_DATA_OFFSET));
        }
        if (cmd == AO_RUN_CMD_LOAD) {
            for (int i = 0; i < nptrs; i++)
                check(cudaMemcpy(ptrs[i], base + off[i], bytes[i], cudaMemcpyHostToDevice),
                      "copying a tensor to the GPU");
            check(cudaMemset(flush, (int)(seq & 0xff), flush_bytes), "flushing the L2");
            check(cudaDeviceSynchronize(), "flushing the L2");
        } else if (cmd == AO_RUN_CMD_CALL) {
            float ms = 0;
            memcpy(dims, (const void *)hdr->dims, sizeof dims);
            check(cudaEventRecord(ev0, 0), "recording an event");
            ao_call(ptrs, dims);
            check(cudaGetLastError(), "launching the kernel");
            check(cudaEventRecord(ev1, 0), "recording an event");
            check(cudaDeviceSynchronize(), "running the kernel");
            check(cudaEventElapsedTime(&ms, ev0, ev1), "reading the events");
            hdr->device_ns = (uint64_t)((double)ms * 1e6);
        } else if (cmd == AO_RUN_CMD_FETCH) {
            for (int i = 0; i < nptrs; i++)
                check(cudaMemcpy(base + off[i], ptrs[i], bytes[i], cudaMemcpyDeviceToHost),
                      "copying a tensor from the GPU");
        } else if (cmd == AO_RUN_CMD_NOP) {
            /* a CALL's every step, around an empty kernel */
            check(cudaEventRecord(ev0, 0), "recording an event");
            ao_empty<<<1, 1>>>();
            check(cudaGetLastError(), "launching the empty kernel");
            check(cudaEventRecord(ev1, 0), "recording an event");
            check(cudaDeviceSynchronize(), "running the empty kernel");
        }
        __atomic_store_n(&hdr->done, seq, __ATOMIC_SEQ_CST);
        if (__atomic_load_n(&hdr->parent_sleeping, __ATOMIC_SEQ_CST))
            futex_wake(&hdr->done);
    }
}
