/* runner_proto.h - the shared-memory protocol between the profiler and a
 * kernel runner (nkibench/harness/<target>/runner.*).  The first page is this
 * header; the seccomp program follows it; tensors live after that. */
#ifndef AO_RUNNER_PROTO_H
#define AO_RUNNER_PROTO_H

#include <stdint.h>

#ifdef __cplusplus /* the cuda runner is C++ */
#define AO_RUN_LINE alignas(64)
#else
#define AO_RUN_LINE _Alignas(64)
#endif

#define AO_RUN_MAGIC 0x616f7275u /* "aoru" */
#define AO_RUN_MAX_PTRS 8
#define AO_RUN_MAX_DIMS 8
#define AO_RUN_HDR_SIZE 4096
#define AO_RUN_BPF_MAX (60 * 1024)
#define AO_RUN_DATA_OFFSET (64 * 1024)

/* The header is shared with the kernel's process, so the profiler reads
 * nothing back from it but `done` and `bad_syscall` (a number it only
 * names); the tensor offsets it keeps to itself. */
/* LOAD and FETCH carry every tensor, except that a runner that poisons on
 * its device fills the outputs there at LOAD (first_output, poison below)
 * rather than copying them.
 * NOP: raise `done` without calling the kernel (a target whose calls always
 * cost something more, such as a launch and a synchronize, does that too);
 * the profiler times a few before the kernel's first call, while only
 * trusted code has run here.  LOAD and FETCH are for a runner whose
 * tensors live on a device: copy every tensor from the region to the
 * device (and clear the device's caches), and every tensor back; both are
 * untimed, around a timed CALL.  DRAIN: wait until the device is idle;
 * the profiler sends it right after each CALL and NOP, inside the clock,
 * so work the kernel left queued on the device (its code may raise `done`
 * before the runner's own synchronize) is timed, not done in FETCH. */
/* COUNTERS (the cuda metrics pass only): the call again, as many times as
 * the GPU's hardware counters need passes, under CUPTI's range profiler;
 * their values into hw[] (below). */
enum { AO_RUN_CMD_CALL = 1, AO_RUN_CMD_EXIT = 2, AO_RUN_CMD_NOP = 3, AO_RUN_CMD_LOAD = 4,
       AO_RUN_CMD_FETCH = 5, AO_RUN_CMD_DRAIN = 6, AO_RUN_CMD_COUNTERS = 7 };
/* device_clock's values (below) */
enum { AO_RUN_CLOCK_NONE = 0, AO_RUN_CLOCK_EVENTS = 1, AO_RUN_CLOCK_CUPTI = 2, AO_RUN_CLOCK_GATED = 3 };
#define AO_RUN_EXIT_SYSCALL 159 /* the runner's status after a forbidden syscall */
#define AO_RUN_EXIT_DEVICE 158  /* after an error of its device (the message on stderr) */
/* the runner found its commands out of order: a `done` it did not raise
 * (the kernel's code raised it during a call) or a command it never saw */
#define AO_RUN_EXIT_PROTOCOL 157

/* A cuda runner under CUPTI (clock_want 2 or 3: 3 is the metrics pass, a
 * process of its own, untimed) sums its last CALL's kernels by launch
 * shape here,
 * in the order they first ran; the device's limits beside them, written
 * before the kernel's code ever ran.  The kernel's process can write all
 * of it: reported to a planner, never judged. */
#define AO_RUN_MAX_KERNELS 16
struct ao_run_kernel {
    uint64_t ns;       /* the device's time of its launches, summed */
    uint32_t launches;
    int32_t grid[3], block[3];
    uint32_t regs;         /* registers per thread */
    uint32_t shared_bytes; /* shared memory per block, static and dynamic */
    uint32_t local_bytes;  /* local memory per thread: spills, stack, local arrays */
};
/* The hardware counters of COUNTERS, in this order (CUPTI's metric names
 * in nkibench/harness/cuda/hw_counters.cuh): DRAM throughput and SM
 * throughput in % of their sustained peaks over the call, the warps
 * resident in % of the SM's most (achieved occupancy), the L2's sector
 * hit rate in %.  hw_status: 0 not asked; 1 the range profiler was set
 * up before the kernel's code ran; 2 hw[] holds a COUNTERS call's
 * values; negative, the step that failed (hw_counters.cuh). */
#define AO_RUN_HW_METRICS 4
enum { AO_RUN_HW_READY = 1, AO_RUN_HW_READ = 2 };
enum { AO_RUN_HW_DRAM = 0, AO_RUN_HW_SM = 1, AO_RUN_HW_WARPS = 2, AO_RUN_HW_L2_HIT = 3 };

struct ao_run_device {
    uint32_t sms, threads_per_sm, regs_per_sm, shared_per_sm, blocks_per_sm, shared_reserved;
};

struct ao_run_hdr {
    uint32_t magic, bpf_len;
    uint64_t total_size;
    /* each flag on its own cache line: the two sides spin on them */
    AO_RUN_LINE volatile uint64_t go;       /* parent: sequence number of the call */
    AO_RUN_LINE volatile uint64_t done;     /* runner: last sequence finished */
    AO_RUN_LINE volatile uint32_t parent_sleeping;
    volatile int32_t bad_syscall;            /* set by the runner's SIGSYS handler */
    /* set by the runner while it sleeps on `go` (a FUTEX_WAIT): only then
     * does posting a command need a wake-up, a system call (~1 us) that
     * would otherwise delay the DRAIN after every call */
    volatile uint32_t runner_sleeping;
    AO_RUN_LINE uint32_t cmd;
    int32_t dims[AO_RUN_MAX_DIMS];
    uint64_t off[AO_RUN_MAX_PTRS];           /* tensor offsets from the mapping base */
    uint64_t bytes[AO_RUN_MAX_PTRS];         /* and their sizes */
    /* the runner's own timing of its last CALL (a device's event timer):
     * the kernel's process can write it, so it is reported, never trusted */
    volatile uint64_t device_ns;
    /* set by the profiler: the device is to profile each CALL while it is
     * set (the trn runner writes a trace of each, for the device's own
     * time); read only by trusted runners */
    volatile uint32_t profile;
    /* set by the profiler for LOAD, for a runner that poisons on its device
     * (ao_target.poisons_on_device): tensors from first_output on are not
     * copied but filled with the 32-bit word poison there; first_output is
     * the tensor count where every tensor is to be copied */
    uint32_t first_output, poison;
    /* a device runner's own clock (the cuda runner, nkibench/harness/cuda/
     * device_clock.cuh).  Set by the profiler before the runner starts:
     * clock_want (ACCELOPT_DEVICE_CLOCK) 0 the default, 1 events alone
     * around the call, 2 CUPTI's records; 3 the metrics pass: CUPTI's
     * records and its range profiler.  Written by the runner, never
     * trusted alone: device_clock, which clock gave device_ns (0 none, 1
     * events around the call, 2 CUPTI's records of every piece of work the
     * call launched, 3 events around the work held behind a gate, the
     * launch left out); late_records, how many records of finished work the
     * DRAIN after a call found (CUPTI: work the call's window missed). */
    uint32_t clock_want;
    volatile uint32_t device_clock, late_records;
    volatile uint64_t events_ns; /* the same call by the CUDA events around it, beside */
    /* the metrics pass's records (above): how many shapes, how many
     * launches did not fit the table, the span of the call's work */
    struct ao_run_device device;
    volatile uint32_t nkernels, kernels_dropped;
    volatile uint64_t span_ns;
    struct ao_run_kernel kernels[AO_RUN_MAX_KERNELS];
    volatile int32_t hw_status;
    volatile uint32_t hw_passes;
    volatile double hw[AO_RUN_HW_METRICS];
};
#ifdef __cplusplus
static_assert(sizeof(struct ao_run_hdr) <= AO_RUN_HDR_SIZE, "the header fits its page");
#else
_Static_assert(sizeof(struct ao_run_hdr) <= AO_RUN_HDR_SIZE, "the header fits its page");
#endif

#endif
