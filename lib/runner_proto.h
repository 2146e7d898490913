/* runner_proto.h - the shared-memory protocol between the profiler and the
 * kernel runner (nkibench/harness/cpu/runner.c).  The first page is this
 * header; the seccomp program follows it; tensors live after that. */
#ifndef AO_RUNNER_PROTO_H
#define AO_RUNNER_PROTO_H

#include <stdint.h>

#define AO_RUN_MAGIC 0x616f7275u /* "aoru" */
#define AO_RUN_MAX_PTRS 8
#define AO_RUN_MAX_DIMS 8
#define AO_RUN_HDR_SIZE 4096
#define AO_RUN_BPF_MAX (60 * 1024)
#define AO_RUN_DATA_OFFSET (64 * 1024)

/* The header is shared with the kernel's process, so the profiler reads
 * nothing back from it but `done` and `bad_syscall` (a number it only
 * names); the tensor offsets it keeps to itself. */
/* NOP: raise `done` without calling the kernel; the profiler times a few
 * before the kernel's first call, while only trusted code has run here */
enum { AO_RUN_CMD_CALL = 1, AO_RUN_CMD_EXIT = 2, AO_RUN_CMD_NOP = 3 };
#define AO_RUN_EXIT_SYSCALL 159 /* the runner's status after a forbidden syscall */

struct ao_run_hdr {
    uint32_t magic, bpf_len;
    uint64_t total_size;
    /* each flag on its own cache line: the two sides spin on them */
    _Alignas(64) volatile uint64_t go;       /* parent: sequence number of the call */
    _Alignas(64) volatile uint64_t done;     /* runner: last sequence finished */
    _Alignas(64) volatile uint32_t parent_sleeping;
    volatile int32_t bad_syscall;            /* set by the runner's SIGSYS handler */
    _Alignas(64) uint32_t cmd;
    int32_t dims[AO_RUN_MAX_DIMS];
    uint64_t off[AO_RUN_MAX_PTRS];           /* tensor offsets from the mapping base */
};

#endif
