/* runner_side.h - the runner's half of the protocol in lib/runner_proto.h,
 * shared by every target's trusted runner (harness/<target>/runner.*, C or
 * C++): take over the shared region, lock the process down, wait for each
 * command and say it is done.  Included once per runner, so its functions
 * are static. */
#ifndef AO_RUNNER_SIDE_H
#define AO_RUNNER_SIDE_H

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

static struct ao_run_hdr *ao_hdr;

static void ao_on_sigsys(int sig, siginfo_t *si, void *uc)
{
    (void)sig;
    (void)uc;
    ao_hdr->bad_syscall = si->si_syscall;
    syscall(SYS_exit_group, AO_RUN_EXIT_SYSCALL);
}

/* Map the region (fd 3, its size and the tensor count in argv) and check
 * its header: the mapping's base, or NULL with *code the exit status. */
static char *ao_runner_attach(int argc, char **argv, uint64_t *size, int *nptrs, int *code)
{
    struct sigaction sa;
    char *base;

    *code = 120;
    if (argc != 3)
        return NULL;
    *size = strtoull(argv[1], NULL, 10);
    *nptrs = atoi(argv[2]);
    if (*nptrs < 1 || *nptrs > AO_RUN_MAX_PTRS || *size <= AO_RUN_DATA_OFFSET)
        return NULL;
    *code = 121;
    /* every page mapped now, not in the kernel's first call (a head-to-head
     * may time that call: issue 66's opening round) */
    base = (char *)mmap(NULL, *size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, 3, 0);
    if (base == MAP_FAILED)
        return NULL;
    close(3);
    ao_hdr = (struct ao_run_hdr *)base;
    *code = 122;
    if (ao_hdr->magic != AO_RUN_MAGIC || ao_hdr->total_size != *size || ao_hdr->bpf_len == 0 ||
        ao_hdr->bpf_len > AO_RUN_BPF_MAX)
        return NULL;
    *code = 123;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = ao_on_sigsys;
    sa.sa_flags = SA_SIGINFO;
    if (sigaction(SIGSYS, &sa, NULL) < 0)
        return NULL;
    return base;
}

/* Install the profiler's seccomp program on every thread of the process
 * (TSYNC: a runtime's own threads, started before, are filtered too): from
 * here on only the allowed system calls work, from any thread.  0, or 124
 * (the exit status) if any thread could not be filtered. */
static int ao_runner_lockdown(char *base)
{
    struct sock_fprog prog;

    prog.len = (unsigned short)(ao_hdr->bpf_len / sizeof(struct sock_filter));
    prog.filter = (struct sock_filter *)(base + AO_RUN_HDR_SIZE);
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
        syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog) != 0)
        return 124;
    return 0;
}

/* Wait for the command after `seq`: spin a while, then sleep until the
 * profiler wakes us (it does whenever it raises `go` without having
 * stopped us).  Returns the new sequence number. */
static uint64_t ao_runner_next(uint64_t seq)
{
    int spins = 0;

    while (ao_hdr->go == seq) {
        if (++spins < 2000000) {
            __builtin_ia32_pause();
            continue;
        }
        /* the futex word is the low half of the 64-bit counter (little
         * endian); the flag is raised before the wait checks it, so the
         * profiler either sees the flag or we see its new `go` */
        __atomic_store_n(&ao_hdr->runner_sleeping, 1, __ATOMIC_SEQ_CST);
        syscall(SYS_futex, (uint32_t *)&ao_hdr->go, FUTEX_WAIT, (uint32_t)seq, NULL, NULL, 0);
        __atomic_store_n(&ao_hdr->runner_sleeping, 0, __ATOMIC_SEQ_CST);
    }
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    /* the profiler posts one command at a time: a jump means someone else
     * answered the one between (a kernel that raised `done` for a command
     * and then put `go` back) */
    if (ao_hdr->go != seq + 1)
        syscall(SYS_exit_group, AO_RUN_EXIT_PROTOCOL);
    return seq + 1;
}

/* Command `seq` is done: say so, and wake the profiler if it sleeps.
 * The kernel's code has returned by now and no thread of it runs (the
 * filter allows no clone), so these checks are the runner's own: if the
 * profiler already saw this command done, or posted the next, the kernel
 * raised `done` during its call, the clock stopped early, and its work
 * after that went untimed.  The process ends with the reason instead. */
static void ao_runner_done(uint64_t seq)
{
    if (__atomic_load_n(&ao_hdr->go, __ATOMIC_SEQ_CST) != seq ||
        __atomic_load_n(&ao_hdr->done, __ATOMIC_SEQ_CST) != seq - 1)
        syscall(SYS_exit_group, AO_RUN_EXIT_PROTOCOL);
    __atomic_store_n(&ao_hdr->done, seq, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&ao_hdr->parent_sleeping, __ATOMIC_SEQ_CST))
        syscall(SYS_futex, (uint32_t *)&ao_hdr->done, FUTEX_WAKE, 1, NULL, NULL, 0);
}

#endif
