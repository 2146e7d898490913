/* runner.c - the trusted side of a kernel's process: maps the shared
 * tensors, locks itself down with seccomp, then calls `kernel` whenever the
 * profiler asks.  The stopwatch is not here: the profiler times each call
 * from outside, and keeps this process stopped (SIGSTOP) except inside a
 * call, so nothing here runs while it writes inputs or reads outputs. */
#include <linux/filter.h>
#include <linux/futex.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "runner_proto.h"

/* generated per task: calls kernel() with the task's signature */
void ao_call(float *const *p, const int *dims);

static struct ao_run_hdr *hdr;

static void on_sigsys(int sig, siginfo_t *si, void *uc)
{
    (void)sig; (void)uc;
    hdr->bad_syscall = si->si_syscall;
    syscall(SYS_exit_group, AO_RUN_EXIT_SYSCALL);
}

static void futex_wait(volatile uint64_t *addr, uint64_t val)
{
    /* the futex word is the low half of the 64-bit counter (little endian) */
    syscall(SYS_futex, (uint32_t *)addr, FUTEX_WAIT, (uint32_t)val, NULL, NULL, 0);
}

static void futex_wake(volatile uint64_t *addr)
{
    syscall(SYS_futex, (uint32_t *)addr, FUTEX_WAKE, 1, NULL, NULL, 0);
}

int main(int argc, char **argv)
{
    struct sock_fprog prog;
    struct sigaction sa;
    uint64_t size, seq = 0;
    int nptrs;
    char *base;

    if (argc != 3)
        return 120;
    size = strtoull(argv[1], NULL, 10);
    nptrs = atoi(argv[2]);
    if (nptrs < 1 || nptrs > AO_RUN_MAX_PTRS)
        return 120;
    base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, 3, 0);
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
    prog.len = (unsigned short)(hdr->bpf_len / sizeof(struct sock_filter));
    prog.filter = (struct sock_filter *)(base + AO_RUN_HDR_SIZE);
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
        prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0)
        return 124;
    /* from here on only the allowed system calls work */
    for (;;) {
        float *ptrs[AO_RUN_MAX_PTRS];
        int dims[AO_RUN_MAX_DIMS];
        int spins = 0;

        while (hdr->go == seq) {
            if (++spins < 2000000) {
                __builtin_ia32_pause();
                continue;
            }
            /* idle for a while: sleep until the profiler wakes us (it does
             * whenever it raises `go` without having stopped us) */
            futex_wait(&hdr->go, seq);
        }
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        seq = hdr->go;
        if (hdr->cmd == AO_RUN_CMD_EXIT)
            return 0;
        if (hdr->cmd == AO_RUN_CMD_CALL) {
            for (int i = 0; i < nptrs; i++) {
                if (hdr->off[i] < AO_RUN_DATA_OFFSET || hdr->off[i] >= size)
                    return 125;
                ptrs[i] = (float *)(base + hdr->off[i]);
            }
            memcpy(dims, (const void *)hdr->dims, sizeof dims);
            ao_call(ptrs, dims);
        }
        __atomic_store_n(&hdr->done, seq, __ATOMIC_SEQ_CST);
        if (__atomic_load_n(&hdr->parent_sleeping, __ATOMIC_SEQ_CST))
            futex_wake(&hdr->done);
    }
}
