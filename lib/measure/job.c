/* job.c - a kernel's job, its runner process: started in its sandbox,
 * spoken to through the shared region (runner_proto.h), stopped between
 * calls, timed from here, and classified when it dies.  What runs in it is
 * the target's. */
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "measure/job.h"
#include "core/alloc.h"
#include "core/util.h"

/* Tensors are laid out 17 cache lines apart beyond their size, so that two
 * of them never share their address bits below 4 KiB (4K aliasing would
 * make some calls slower than others for no fault of the kernel). */
#define STAGGER (17 * 64)

size_t ao_job_bytes(const struct ao_task *t, const long long *dims)
{
    size_t s = 0;
    for (int i = 0; i < t->ninputs + t->noutputs; i++)
        s += ((ao_task_elems(t, i, dims) * sizeof(float) + 63) & ~(size_t)63) + STAGGER;
    return s;
}

/* The runner runs on one core (--cpu, or the one we are on now).  Between
 * calls we move to that core to write its inputs, so that a call starts
 * with them in the runner's caches (no untimed step of its own can do that:
 * it must not see inputs before the clock), then move off it to wait, so
 * our spinning never shares its core.  Without a second core we stay put. */
static cpu_set_t our_cpus; /* as we started: restored after every job */
static int have_our_cpus;

static void unpin_us(struct ao_job *j)
{
    if (j->migrate)
        sched_setaffinity(0, sizeof our_cpus, &our_cpus);
}

static void pin_runner(struct ao_job *j, int *cpu)
{
    cpu_set_t all;
    int c = *cpu >= 0 ? *cpu : sched_getcpu();

    j->migrate = 0;
    j->cpu = c;
    if (!have_our_cpus && sched_getaffinity(0, sizeof our_cpus, &our_cpus) == 0)
        have_our_cpus = 1;
    if (c < 0 || !have_our_cpus)
        return;
    all = our_cpus;
    *cpu = c;
    CPU_ZERO(&j->on_runner);
    CPU_SET(c, &j->on_runner);
    j->off_runner = all;
    CPU_CLR(c, &j->off_runner);
    j->migrate = CPU_ISSET(c, &all) && CPU_COUNT(&j->off_runner) > 0;
}

/* Start the runner's sandbox.  Held, it is set up (namespaces, cgroups:
 * slow on some kernels) while the compiler works, and execs at release. */
int ao_job_start(struct ao_job *j, const struct ao_job_opts *o, const struct ao_task *t,
                 const long long *dims, char *err, size_t errlen)
{
    char size_arg[32], nptr_arg[16], runner[] = "/work/runner";
    char *argv[] = {runner, size_arg, nptr_arg, NULL};
    struct ao_sandbox_spec spec = {0};
    int outfd = -1, rc = -1;

    j->tg = o->tg;
    j->drain = o->drain;
    j->task = t;
    j->slot_size = ao_job_bytes(t, dims) + (AO_JOB_PLACES / 2) * 64;
    j->place_a = (o->place_a % AO_JOB_PLACES) | 1; /* odd: a permutation */
    j->place_b = o->place_b % AO_JOB_PLACES;
    j->shm_size = AO_RUN_DATA_OFFSET + 2 * j->slot_size;
    if (ao_region_take(&j->rg, j->shm_size, err, errlen) < 0)
        goto out;
    j->shm = j->rg.map;
    ao_region_prepare(&j->rg, AO_RUN_DATA_OFFSET); /* the header's pages, before it is written */
    j->hdr = (struct ao_run_hdr *)j->shm;
    j->hdr->magic = AO_RUN_MAGIC;
    j->hdr->total_size = j->shm_size;
    j->hdr->bpf_len = (uint32_t)o->bpf_len;
    j->hdr->bad_syscall = -1;
    {
        /* a device runner's clock: its default, or where asked (to compare
         * them) its events alone or CUPTI's records (runner_proto.h) */
        const char *clock = getenv("ACCELOPT_DEVICE_CLOCK");
        j->hdr->clock_want = o->metrics ? 3 : !clock ? 0 : !strcmp(clock, "events") ? 1
                                            : !strcmp(clock, "cupti") ? 2 : 0;
    }
    memcpy(j->shm + AO_RUN_HDR_SIZE, o->bpf, o->bpf_len);
    snprintf(size_arg, sizeof size_arg, "%zu", j->shm_size);
    snprintf(nptr_arg, sizeof nptr_arg, "%d", t->ninputs + t->noutputs);
    /* the kernel's own output goes to a file of ours, outside its work
     * directory, capped by RLIMIT_FSIZE; diagnostics may quote it */
    snprintf(j->out_path, sizeof j->out_path, "%s.out", j->dir);
    if ((outfd = open(j->out_path, O_CREAT | O_TRUNC | O_WRONLY | O_APPEND | O_CLOEXEC, 0600)) < 0) {
        snprintf(err, errlen, "cannot create '%s': %s", j->out_path, strerror(errno));
        goto out;
    }
    spec.workdir = j->dir;
    spec.workdir_ro = 1;
    spec.argv = argv;
    spec.keep_fds = &j->rg.fd;
    spec.nkeep = 1;
    spec.out_fd = outfd;
    /* a backstop only: each command has its own wall limit (ao_job_run) */
    spec.cpu_seconds = (long)(o->timeout_s * 10) + 5;
    spec.mem_bytes = (long long)j->shm_size + o->mem_bytes;
    spec.file_bytes = 1 << 20;
    spec.max_procs = 16;
    spec.seccomp = AO_SECCOMP_NONE; /* the runner installs the strict one itself */
    spec.cpu = o->cpu;
    pin_runner(j, &spec.cpu);
    spec.hold = o->hold;
    spec.slot = o->second == 2 ? 3 : o->second ? 2 : 1;
    if (o->runner_sandbox) /* what the target's device needs */
        o->runner_sandbox(&spec);
    j->timeout_s = o->timeout_s;
    if (!o->hold) /* it runs at once: its region ready first */
        ao_region_prepare(&j->rg, SIZE_MAX);
    if (ao_sandbox_start(&spec, &j->sb, err, errlen) < 0)
        goto out;
    j->started = 1;
    j->deadline = ao_now_ns() + (long long)(o->timeout_s * 1e9);
    rc = 0;
out:
    if (rc < 0) { /* a process of the sandbox may have it: not kept */
        ao_region_drop(&j->rg);
        j->shm = NULL;
    }
    if (outfd >= 0)
        close(outfd);
    return rc;
}

/* Let a held runner start; its time limit counts from here. */
int ao_job_release(struct ao_job *j, char *err, size_t errlen)
{
    ao_region_prepare(&j->rg, SIZE_MAX);
    if (ao_sandbox_release(&j->sb, err, errlen) < 0)
        return -1;
    j->deadline = ao_now_ns() + (long long)(j->timeout_s * 1e9);
    return 0;
}

/* Quote the start of what the kernel printed, if anything, after a failure:
 * printable ASCII only, and short. */
static void quote_output(struct ao_job *j)
{
    char buf[161];
    size_t n, len = strlen(j->reason);
    int fd;
    ssize_t r;

    if (!j->out_path[0] || (fd = open(j->out_path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)) < 0)
        return;
    r = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (r <= 0)
        return;
    n = (size_t)r;
    for (size_t i = 0; i < n; i++)
        if (buf[i] < 0x20 || buf[i] > 0x7e)
            buf[i] = buf[i] == '\n' ? '|' : '?';
    buf[n] = '\0';
    snprintf(j->reason + len, sizeof j->reason - len, "; it printed: %s%s", buf,
             n == sizeof buf - 1 ? "..." : "");
}

/* The runner is gone: say why, from its wait status. */
static void classify_exit(struct ao_job *j, int st, int timed_out, const char *phase)
{
    if (timed_out) {
        j->status = AO_V_TIMEOUT;
        /* the limit said as it was made: the job's own (the kernel's
         * --timeout, ten times that for a reference), or the calls' pace */
        if (j->limit_ns > (long long)(j->timeout_s * 1e9))
            snprintf(j->reason, sizeof j->reason, "still running %s after the time limit of %.3g s "
                     "(%d times its longest call so far)", phase, j->limit_ns / 1e9, AO_CALL_LIMIT_FACTOR);
        else
            snprintf(j->reason, sizeof j->reason, "still running %s after the time limit of %.3g s", phase,
                     j->limit_ns / 1e9);
    } else if ((WIFEXITED(st) && WEXITSTATUS(st) == AO_RUN_EXIT_SYSCALL) ||
               (WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS)) {
        /* the number is the runner's word (its memory is the kernel's too):
         * a name to show, never acted on */
        int nr = __atomic_load_n(&j->hdr->bad_syscall, __ATOMIC_RELAXED);
        const char *name = nr >= 0 ? ao_syscall_name(nr) : NULL;
        j->status = AO_V_REJECTED;
        snprintf(j->reason, sizeof j->reason,
                 "made the system call '%s' %s; kernels may only compute and allocate memory",
                 name ? name : "?", phase);
    } else if (WIFEXITED(st) && WEXITSTATUS(st) == AO_RUN_EXIT_PROTOCOL) {
        j->status = AO_V_REJECTED;
        snprintf(j->reason, sizeof j->reason,
                 "raised the runner's `done` itself %s, before its call returned (a call ends "
                 "when the kernel returns: work after `done` would go untimed)", phase);
    } else if (WIFEXITED(st) && WEXITSTATUS(st) == AO_RUN_EXIT_DEVICE) {
        /* an illegal address, a trap, a launch the device refused: the
         * runner's message (quoted below) names it */
        j->status = AO_V_CRASH;
        snprintf(j->reason, sizeof j->reason, "the device reported an error %s", phase);
    } else if (WIFSIGNALED(st) && WTERMSIG(st) == SIGXCPU) {
        j->status = AO_V_TIMEOUT;
        snprintf(j->reason, sizeof j->reason, "used up its CPU time %s", phase);
    } else if (WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL && ao_sandbox_oom(&j->sb)) {
        j->status = AO_V_CRASH;
        snprintf(j->reason, sizeof j->reason, "ran out of memory %s", phase);
    } else if (WIFSIGNALED(st)) {
        j->status = AO_V_CRASH;
        snprintf(j->reason, sizeof j->reason, "killed by %s %s", sigabbrev_np(WTERMSIG(st)) ?
                 sigabbrev_np(WTERMSIG(st)) : "a signal", phase);
    } else if (WIFEXITED(st) && WEXITSTATUS(st) >= 120 && WEXITSTATUS(st) <= 125 &&
               j->seq <= 1) {
        j->status = AO_V_INTERNAL_ERROR;
        snprintf(j->reason, sizeof j->reason, "the runner could not start (status %d)",
                 WEXITSTATUS(st));
    } else {
        j->status = AO_V_CRASH;
        snprintf(j->reason, sizeof j->reason, "the process exited (status %d) %s; kernels must "
                 "return", WIFEXITED(st) ? WEXITSTATUS(st) : -1, phase);
    }
    quote_output(j);
}

void ao_job_stop(struct ao_job *j, const char *phase)
{
    int st = 0, to = 0;

    if (!j->started)
        return;
    if (!j->status) {
        /* a clean exit */
        j->hdr->cmd = AO_RUN_CMD_EXIT;
        __atomic_store_n(&j->hdr->go, j->seq + 1, __ATOMIC_SEQ_CST);
        if (j->stopped)
            kill(j->sb.pid, SIGCONT);
        j->stopped = 0;
        syscall(SYS_futex, (uint32_t *)&j->hdr->go, FUTEX_WAKE, 1, NULL, NULL, 0);
        ao_sandbox_wait(&j->sb, ao_now_ns() + 5000000000LL, &st, &to);
        if (to || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
            classify_exit(j, st, to, phase);
    } else {
        ao_sandbox_kill(&j->sb);
        ao_sandbox_wait(&j->sb, 0, &st, &to);
    }
    j->started = 0;
}

/* The job's process and what it holds are gone; its directory stays. */
void ao_job_end(struct ao_job *j)
{
    ao_job_stop(j, "at exit");
    unpin_us(j);
    /* kept for the next job only where no process of this one can be
     * left to reach it (its sandbox reaped and emptied) */
    if (j->sb.gone)
        ao_region_keep(&j->rg);
    else
        ao_region_drop(&j->rg);
    j->shm = NULL;
    if (j->out_path[0])
        unlink(j->out_path);
    j->out_path[0] = '\0';
    free(j->seen);
    j->seen = NULL;
    j->seen_cap = 0;
}

void ao_job_free(struct ao_job *j)
{
    ao_job_end(j);
    if (j->dir[0])
        ao_rmtree(j->dir);
    j->dir[0] = '\0';
}

/* Has the runner ended?  Peek without reaping, so ao_sandbox_wait can. */
static int runner_ended(struct ao_job *j)
{
    siginfo_t si;
    memset(&si, 0, sizeof si);
    return waitid(P_PID, (id_t)j->sb.pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid != 0;
}

float *ao_job_tensor(struct ao_job *j, int i)
{
    return (float *)(j->shm + j->off[i]);
}

/* The runner has ended, or overran its deadline: reap it and say why; -1. */
static int runner_gone(struct ao_job *j, int timed_out, const char *phase)
{
    int st = 0, to = 0;
    if (timed_out)
        ao_sandbox_kill(&j->sb);
    ao_sandbox_wait(&j->sb, ao_now_ns() + 5000000000LL, &st, &to);
    j->started = 0;
    j->stopped = 0;
    classify_exit(j, st, timed_out || to, phase);
    return -1;
}

/* The runner is kept stopped (SIGSTOP) whenever it is not inside a timed
 * call.  We write a call's inputs while it cannot run and copy its outputs
 * after it is stopped again, so a kernel that takes over the runner's loop
 * can neither see a call's inputs before the clock starts nor work on after
 * it stops.  -1 (with j->status) if the runner is gone. */
int ao_job_hold(struct ao_job *j, const char *phase)
{
    siginfo_t si;

    if (j->stopped)
        return 0;
    if (!j->started || j->sb.pid <= 0) /* already reaped: j->status says why */
        return -1;
    if (kill(j->sb.pid, SIGSTOP) < 0)
        return runner_gone(j, 0, phase);
    for (;;) {
        memset(&si, 0, sizeof si);
        if (waitid(P_PID, (id_t)j->sb.pid, &si, WSTOPPED | WEXITED | WNOWAIT) == 0)
            break;
        if (errno != EINTR)
            return runner_gone(j, 0, phase);
    }
    if (si.si_code != CLD_STOPPED && si.si_code != CLD_TRAPPED)
        return runner_gone(j, 0, phase); /* it ended: reap it and say why */
    memset(&si, 0, sizeof si);
    waitid(P_PID, (id_t)j->sb.pid, &si, WSTOPPED | WNOHANG); /* consume the report */
    j->stopped = 1;
    return 0;
}

/* Where the tensors live for the next call: one of AO_JOB_PLACES positions (two
 * slots, 128 cache-line offsets each), visited in an order the kernel cannot
 * guess and never twice within AO_JOB_PLACES calls, so a cache keyed by address
 * never hits. */
void ao_job_place(struct ao_job *j, const long long *dims)
{
    unsigned pos = (j->place_a * j->placed++ + j->place_b) % AO_JOB_PLACES;
    size_t off = AO_RUN_DATA_OFFSET + (pos & 1) * j->slot_size + (size_t)(pos >> 1) * 64;
    const struct ao_task *t = j->task;

    /* the header too is written only while the runner cannot run (if it
     * is gone, the call that follows says why) */
    ao_job_hold(j, "between calls");
    for (int i = 0; i < t->ninputs + t->noutputs; i++) {
        j->off[i] = j->hdr->off[i] = off;
        j->hdr->bytes[i] = ao_task_elems(t, i, dims) * sizeof(float);
        off += ((ao_task_elems(t, i, dims) * sizeof(float) + 63) & ~(size_t)63) + STAGGER;
    }
    for (int i = 0; i < t->ndims; i++)
        j->hdr->dims[i] = (int32_t)dims[i];
    j->dims = dims;
}

/* Wait for the runner to say command j->seq is done (spinning, then
 * sleeping once 20 ms have passed since `since`).  0, or -1 with j->status set if it ended or
 * overran its deadline. */
static int wait_done(struct ao_job *j, long long since, int watching, const char *phase)
{
    struct ao_run_hdr *h = j->hdr;
    unsigned spins = 0;
    long long now;

    for (;;) {
        if (watching) { /* how long we were away: every spin reads the clock */
            now = ao_now_ns();
            if (now - j->watch_last > j->watch_gap)
                j->watch_gap = now - j->watch_last;
            j->watch_last = now;
        }
        if (__atomic_load_n(&h->done, __ATOMIC_ACQUIRE) == j->seq)
            return 0;
        if (++spins & 1023) {
            __builtin_ia32_pause();
            continue;
        }
        now = ao_now_ns();
        if (now > j->deadline || runner_ended(j))
            return runner_gone(j, now > j->deadline, phase);
        if (now - since > 20000000) { /* long call: sleep instead of spinning */
            struct timespec ts = {0, 5000000};
            __atomic_store_n(&h->parent_sleeping, 1, __ATOMIC_SEQ_CST);
            if (__atomic_load_n(&h->done, __ATOMIC_SEQ_CST) != j->seq)
                syscall(SYS_futex, (uint32_t *)&h->done, FUTEX_WAIT, (uint32_t)(j->seq - 1),
                        &ts, NULL, 0);
            __atomic_store_n(&h->parent_sleeping, 0, __ATOMIC_SEQ_CST);
        }
    }
}

/* The outputs in WATCH_CHUNK pieces, numbered across the output tensors:
 * piece g's address in our mapping and its length. */
#define WATCH_CHUNK 256
#define WATCH_MAX 4096 /* pieces sampled: 1 MiB at most */

static unsigned char *watch_piece(struct ao_job *j, size_t g, size_t *len)
{
    const struct ao_task *t = j->task;

    for (int i = t->ninputs; i < t->ninputs + t->noutputs; i++) {
        size_t bytes = ao_task_elems(t, i, j->dims) * sizeof(float);
        size_t n = (bytes + WATCH_CHUNK - 1) / WATCH_CHUNK;
        if (g < n) {
            *len = bytes - g * WATCH_CHUNK < WATCH_CHUNK ? bytes - g * WATCH_CHUNK : WATCH_CHUNK;
            return (unsigned char *)ao_job_tensor(j, i) + g * WATCH_CHUNK;
        }
        g -= n;
    }
    *len = 0;
    return NULL;
}

static size_t gcd(size_t a, size_t b)
{
    while (b) {
        size_t r = a % b;
        a = b;
        b = r;
    }
    return a;
}

/* Before the call: which pieces to copy at its `done`, up to WATCH_MAX
 * of them, all where they are fewer, in an order drawn now (a permutation
 * a*i + b mod n): a kernel still writing cannot tell which piece is read
 * next.  Chosen (and the room made) before the clock starts, so the copy
 * begins the moment `done` is seen. */
static void watch_prepare(struct ao_job *j)
{
    const struct ao_task *t = j->task;
    uint64_t r = (uint64_t)ao_now_ns() * 0x9e3779b97f4a7c15ull ^ (uint64_t)j->seq;
    size_t n = 0;

    for (int i = t->ninputs; i < t->ninputs + t->noutputs; i++)
        n += (ao_task_elems(t, i, j->dims) * sizeof(float) + WATCH_CHUNK - 1) / WATCH_CHUNK;
    j->watch_n = n;
    j->watch_k = n < WATCH_MAX ? n : WATCH_MAX;
    if (n == 0)
        return;
    if (j->seen_cap < j->watch_k * WATCH_CHUNK) {
        free(j->seen);
        j->seen_cap = 0;
        j->seen = ao_malloc(j->watch_k * WATCH_CHUNK);
        j->seen_cap = j->watch_k * WATCH_CHUNK;
    }
    r ^= r >> 29;
    j->watch_b = (size_t)(r % n);
    j->watch_a = (size_t)((r >> 17) % n) | 1;
    while (gcd(j->watch_a, n) != 1)
        j->watch_a++;
}

/* At `done`, while the runner may still run: copy the chosen pieces,
 * reading the clock after each (pieces are far apart: each can miss the
 * TLB and the caches, and sixteen of them took longer than the limit
 * below on a busy VM, voiding calls where nobody was away).  If we were
 * away (descheduled) anywhere from the DRAIN's post to the last piece,
 * a kernel could have finished its work meanwhile, unseen: the call is
 * void (its caller draws another in its place, ao_job.watch_void).  Work
 * hidden so is at most the gap, so a gap counts when it passes
 * WATCH_GAP_NS and 1/WATCH_GAP_SHARE of the call: a 700 ms call was
 * voided 41 times for gaps of microseconds (issue 53), while a call of a
 * few ms keeps the 5 us bound. */
#define WATCH_GAP_NS 5000
/* ... up to the first WATCH_PROMPT pieces: a kernel still writing after
 * its `done` writes over pieces copied before, and those first ones take
 * about 0.15 ms; the rest of the 4096 (another millisecond) only add
 * pieces to compare.  Held over them all, a short call was voided
 * whenever this VM's timer tick (30-40 us, one in every 3 ms or so) fell
 * in the copy: a third of rope's calls quiet, four in five in a run
 * (issue 66). */
#define WATCH_PROMPT 512
#define WATCH_GAP_SHARE 1024 /* 256 let a 2.3 ms call hide 9 us: takeover_done_early passed once on a busy CI */

static void watch_copy(struct ao_job *j, long long call_ns)
{
    size_t len;

    for (size_t i = 0; i < j->watch_k; i++) {
        unsigned char *at = watch_piece(j, (j->watch_a * i + j->watch_b) % j->watch_n, &len);
        long long now;
        memcpy(j->seen + i * WATCH_CHUNK, at, len);
        if (i >= WATCH_PROMPT)
            continue;
        now = ao_now_ns();
        if (now - j->watch_last > j->watch_gap)
            j->watch_gap = now - j->watch_last;
        j->watch_last = now;
    }
    j->watch_void = j->watch_gap > WATCH_GAP_NS && j->watch_gap > call_ns / WATCH_GAP_SHARE;
}

/* After the runner is stopped: did any sampled piece change since? */
static int outputs_moved(struct ao_job *j)
{
    size_t len;

    for (size_t i = 0; i < j->watch_k; i++) {
        unsigned char *at = watch_piece(j, (j->watch_a * i + j->watch_b) % j->watch_n, &len);
        if (memcmp(j->seen + i * WATCH_CHUNK, at, len) != 0)
            return 1;
    }
    return 0;
}

/* Raise `go` for the next command; the runner spins on it. */
static void post(struct ao_job *j, uint32_t cmd)
{
    j->hdr->cmd = cmd;
    j->seq++;
    __atomic_store_n(&j->hdr->go, j->seq, __ATOMIC_SEQ_CST);
}

/* ... or sleeps on it after a long wait (it says so): wake it then.  A
 * kernel that clears the flag while the runner sleeps only stalls its own
 * call into its time limit. */
static void wake_runner(struct ao_job *j)
{
    if (__atomic_load_n(&j->hdr->runner_sleeping, __ATOMIC_SEQ_CST))
        syscall(SYS_futex, (uint32_t *)&j->hdr->go, FUTEX_WAKE, 1, NULL, NULL, 0);
}

/* One command to the (stopped) runner: the clock starts, the runner
 * continues, the clock stops the moment it says done, and it is stopped
 * again.  Warm-up repeats (hold 0) skip the stopping: they write nothing
 * and are not timed.  On a target whose device runs on after the host
 * says done (j->drain), a CALL or NOP is followed at once, the runner not
 * stopped between, by a DRAIN (the device synchronized by trusted code),
 * and the clock stops at its done: a `done` raised early by the kernel's
 * code moves its unfinished work into the DRAIN, not out of the clock.
 * Returns the elapsed ns less the cost of continuing the runner (wake_ns),
 * or -1 with j->status set. */
long long ao_job_run(struct ao_job *j, uint32_t cmd, int hold, const char *phase)
{
    long long t0, t1;

    if (hold && ao_job_hold(j, phase) < 0)
        return -1;
    j->watch_void = 0;
    if (j->watch && cmd == AO_RUN_CMD_CALL)
        watch_prepare(j);
    post(j, cmd);
    t0 = ao_now_ns();
    /* the limit follows the work: a busy machine makes calls slower, and
     * that must not make them wrong */
    j->limit_ns = (long long)(j->timeout_s * 1e9);
    if (AO_CALL_LIMIT_FACTOR * j->longest_ns > j->limit_ns)
        j->limit_ns = AO_CALL_LIMIT_FACTOR * j->longest_ns;
    j->deadline = t0 + j->limit_ns;
    if (j->stopped)
        kill(j->sb.pid, SIGCONT);
    else /* a warm-up repeat: it may have gone to sleep on `go` */
        wake_runner(j);
    j->stopped = 0;
    if (wait_done(j, t0, 0, phase) < 0)
        return -1;
    if (j->drain && (cmd == AO_RUN_CMD_CALL || cmd == AO_RUN_CMD_NOP)) {
        post(j, AO_RUN_CMD_DRAIN);
        wake_runner(j);
        /* spun on from its own start, not the call's: after a long call a
         * sleeping wait would answer its `done` late, and the outputs'
         * sample be copied only after a kernel that raised it had finished
         * its work */
        j->watch_last = ao_now_ns();
        j->watch_gap = 0;
        if (wait_done(j, j->watch_last, j->watch && cmd == AO_RUN_CMD_CALL, phase) < 0)
            return -1;
    }
    t1 = ao_now_ns();
    /* the last CALL's or NOP's: a device target's LOAD and FETCH around a
     * call must not stand in for the call's time */
    if (cmd == AO_RUN_CMD_CALL || cmd == AO_RUN_CMD_NOP)
        j->raw_ns = t1 - t0;
    if (cmd == AO_RUN_CMD_CALL && t1 - t0 > j->longest_ns)
        j->longest_ns = t1 - t0;
    if (j->watch && cmd == AO_RUN_CMD_CALL)
        watch_copy(j, t1 - t0);
    if (hold && ao_job_hold(j, phase) < 0)
        return -1;
    if (j->watch && cmd == AO_RUN_CMD_CALL && outputs_moved(j)) {
        j->status = AO_V_REJECTED;
        snprintf(j->reason, sizeof j->reason, "went on writing its outputs %s after its call "
                 "said it was done (a call ends when the kernel returns)", phase);
        return -1;
    }
    return hold && t1 - t0 > j->wake_ns ? t1 - t0 - j->wake_ns : t1 - t0;
}

void ao_job_on_runner(struct ao_job *j)
{
    if (j->migrate)
        sched_setaffinity(0, sizeof j->on_runner, &j->on_runner);
}

void ao_job_off_runner(struct ao_job *j)
{
    if (j->migrate)
        sched_setaffinity(0, sizeof j->off_runner, &j->off_runner);
}

void ao_job_on_all(struct ao_job *j)
{
    unpin_us(j);
}

int ao_job_prepare(struct ao_job *j, size_t len)
{
    return ao_region_prepare(&j->rg, len);
}
