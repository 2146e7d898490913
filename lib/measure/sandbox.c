/* sandbox.c - a fresh, contained process tree for untrusted work
 *
 * Layers (docs/MEASUREMENT.md, "The sandbox"; docs/THREATS.md): new PID, mount, network, IPC and UTS namespaces; a
 * read-only root of /usr alone plus a tmpfs and the job's work directory;
 * cgroup memory and pids limits; rlimits; a uid of its own (ao_sandbox_uid);
 * no_new_privs; seccomp.
 * Killing the namespace's first process kills everything in it, setsid'd
 * grandchildren included.  A layer the machine refuses is left out and the
 * result says which layers were active. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <linux/filter.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/futex.h>
#include <seccomp.h>

#include "core/alloc.h"
#include "core/log.h"
#include "core/util.h"
#include "measure/sandbox.h"

#define STACK_SIZE (256 * 1024)
#define SLOTS 4
/* the default range of sandbox uids: 2^24 of them, so that every profiler
 * process (pid < 2^22) has SLOTS of its own */
#define UID_FIRST 1500000000u
#define UID_COUNT (1u << 24)

struct child_args {
    const struct ao_sandbox_spec *spec;
    unsigned uid; /* ao_sandbox_uid(spec->slot), chosen by the parent */
    int use_ns;
    int sync_fd, err_fd;
    char root[600];
    char cg_procs[2][300];    /* cgroup.procs files to join, "" for none */
    struct sock_fprog *filter;
};

/* Report a failed step to the parent and die; only syscalls from here on. */
static void die(const struct child_args *a, const char *step)
{
    char msg[256];
    int e = errno;
    int n = snprintf(msg, sizeof msg, "%s: %s", step, strerror(e));
    if (write(a->err_fd, msg, (size_t)n) < 0)
        _exit(126);
    _exit(127);
}

/* ACCELOPT_SANDBOX_UIDS "FIRST-LAST", or the default range; 0 or -1. */
static int uid_range(unsigned *first, unsigned *count)
{
    const char *e = getenv("ACCELOPT_SANDBOX_UIDS");
    unsigned long long f, l;
    int n = 0;

    *first = UID_FIRST;
    *count = UID_COUNT;
    if (!e || !*e)
        return 0;
    if (sscanf(e, "%llu-%llu%n", &f, &l, &n) != 2 || e[n] || f < 1000 || l < f + SLOTS - 1 ||
        l >= 4294967295ull)
        return -1;
    *first = (unsigned)f;
    *count = (unsigned)(l - f + 1);
    return 0;
}

unsigned ao_sandbox_uid(int slot)
{
    unsigned first, count;

    if (slot < 0 || slot >= SLOTS)
        slot = 0;
    uid_range(&first, &count); /* a bad setting was refused by ao_sandbox_check_uids */
    return first + (unsigned)(((unsigned long long)getpid() * SLOTS + (unsigned)slot) % count);
}

int ao_sandbox_check_uids(char *err, size_t errlen)
{
    unsigned first, count;

    if (uid_range(&first, &count) < 0) {
        snprintf(err, errlen, "ACCELOPT_SANDBOX_UIDS must be FIRST-LAST, at least %d uids from "
                 "1000 up, none of them a real user's", SLOTS);
        return -1;
    }
    return 0;
}

static int write_str(const char *path, const char *s)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    ssize_t n;
    if (fd < 0)
        return -1;
    n = write(fd, s, strlen(s));
    close(fd);
    return n == (ssize_t)strlen(s) ? 0 : -1;
}

static void bind_ro(const struct child_args *a, const char *src, const char *dst)
{
    if (mount(src, dst, NULL, MS_BIND | MS_REC, NULL) < 0)
        die(a, "bind mount");
    if (mount(NULL, dst, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV, NULL) < 0)
        die(a, "read-only remount");
}

/* p = the new root's path for sub (an absolute path), or the child dies:
 * a path cut short would be another path. */
static void rooted(const struct child_args *a, char *p, size_t len, const char *sub)
{
    if (ao_name(p, len, "%s%s", a->root, sub) < 0)
        die(a, "a path in the new root is too long");
}

/* A host device node at the same path in the new root, if the host has it. */
static void bind_node(const struct child_args *a, const char *host)
{
    char p[700];
    int fd;

    if (access(host, F_OK) < 0)
        return;
    rooted(a, p, sizeof p, host);
    if ((fd = open(p, O_CREAT | O_WRONLY, 0644)) < 0)
        die(a, "create a device node");
    close(fd);
    if (mount(host, p, NULL, MS_BIND, NULL) < 0)
        die(a, "bind a device node");
}

/* The GPU's device nodes, as they are on the host, and a /proc that shows
 * only this PID namespace (mounted here, inside the private mount
 * namespace: never over the host's). */
static void device_nodes(const struct child_args *a, const struct ao_sandbox_device *d)
{
    char p[700], host[64];

    for (int i = 0; d->numbered && i < 64; i++) {
        if (ao_name(host, sizeof host, "/dev/%s%d", d->numbered, i) == 0)
            bind_node(a, host);
    }
    for (int i = 0; i < 6 && d->fixed[i]; i++) {
        if (ao_name(host, sizeof host, "/dev/%s", d->fixed[i]) == 0)
            bind_node(a, host);
    }
    if (!d->own_proc)
        return;
    rooted(a, p, sizeof p, "/proc");
    mkdir(p, 0555);
    if (a->use_ns && mount("proc", p, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
        die(a, "mount /proc");
}

/* Each of spec->ro_paths (absolute, no "..") at the same path, read-only. */
static void extra_paths(const struct child_args *a)
{
    for (int i = 0; i < 4 && a->spec->ro_paths[i]; i++) {
        const char *src = a->spec->ro_paths[i];
        char p[700];
        if (src[0] != '/' || strstr(src, "..") || access(src, F_OK) < 0)
            continue;
        rooted(a, p, sizeof p, src);
        for (char *s = p + strlen(a->root) + 1; *s; s++) /* mkdir -p in the new root */
            if (*s == '/') {
                *s = '\0';
                mkdir(p, 0755);
                *s = '/';
            }
        mkdir(p, 0755);
        bind_ro(a, src, p);
    }
}

static void build_root(const struct child_args *a)
{
    static const char *const sys_dirs[] = {"/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32"};
    static const char *const devs[] = {"/dev/null", "/dev/zero", "/dev/urandom"};
    char p[700], link[256];

    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
        die(a, "make mounts private");
    if (mount("tmpfs", a->root, "tmpfs", MS_NOSUID | MS_NODEV, "size=4m,mode=755") < 0)
        die(a, "mount root tmpfs");
    rooted(a, p, sizeof p, "/usr");
    mkdir(p, 0755);
    bind_ro(a, "/usr", p);
    for (size_t i = 0; i < sizeof sys_dirs / sizeof sys_dirs[0]; i++) {
        struct stat st;
        ssize_t n;
        if (lstat(sys_dirs[i], &st) < 0)
            continue;
        rooted(a, p, sizeof p, sys_dirs[i]);
        if (S_ISLNK(st.st_mode) && (n = readlink(sys_dirs[i], link, sizeof link - 1)) > 0) {
            link[n] = '\0';
            if (symlink(link, p) < 0)
                die(a, "symlink system dir");
        } else if (S_ISDIR(st.st_mode)) {
            mkdir(p, 0755);
            bind_ro(a, sys_dirs[i], p);
        }
    }
    rooted(a, p, sizeof p, "/dev");
    mkdir(p, 0755);
    for (size_t i = 0; i < sizeof devs / sizeof devs[0]; i++) {
        int fd;
        rooted(a, p, sizeof p, devs[i]);
        if ((fd = open(p, O_CREAT | O_WRONLY, 0644)) < 0)
            die(a, "create device node");
        close(fd);
        if (mount(devs[i], p, NULL, MS_BIND, NULL) < 0)
            die(a, "bind device");
    }
    if (a->spec->device)
        device_nodes(a, a->spec->device);
    rooted(a, p, sizeof p, "/tmp");
    mkdir(p, 01777);
    if (mount("tmpfs", p, "tmpfs", MS_NOSUID | MS_NODEV, "size=64m,mode=1777") < 0)
        die(a, "mount /tmp");
    extra_paths(a); /* after /tmp (one may be under it), before /work (which hides its own) */
    rooted(a, p, sizeof p, "/etc");
    mkdir(p, 0755);
    /* the loader's cache alone: saves a search of the library path */
    rooted(a, p, sizeof p, "/etc/ld.so.cache");
    if (access("/etc/ld.so.cache", R_OK) == 0) {
        int fd = open(p, O_CREAT | O_WRONLY, 0644);
        if (fd < 0)
            die(a, "create ld.so.cache");
        close(fd);
        bind_ro(a, "/etc/ld.so.cache", p);
    }
    rooted(a, p, sizeof p, "/work");
    mkdir(p, 0755);
    if (mount(a->spec->workdir, p, NULL, MS_BIND, NULL) < 0)
        die(a, "bind work dir");
    if (mount(NULL, p, NULL, MS_REMOUNT | MS_BIND | MS_NOSUID | MS_NODEV |
                               (a->spec->workdir_ro ? MS_RDONLY : 0), NULL) < 0)
        die(a, "remount work dir");
    if (chdir(a->root) < 0)
        die(a, "chdir new root");
    /* pivot onto the new root and detach the old one: nothing of the host
     * file system stays reachable */
    if (syscall(SYS_pivot_root, ".", ".") < 0)
        die(a, "pivot_root");
    if (umount2(".", MNT_DETACH) < 0)
        die(a, "detach old root");
    if (chdir("/") < 0 || mount(NULL, "/", NULL, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV, NULL) < 0)
        die(a, "read-only root");
    if (sethostname("sandbox", 7) < 0)
        die(a, "sethostname");
}

static void set_limits(const struct child_args *a)
{
    const struct ao_sandbox_spec *s = a->spec;
    struct rlimit r;

#define LIM(res, v) do { r.rlim_cur = r.rlim_max = (rlim_t)(v); \
        if (setrlimit(res, &r) < 0) die(a, "setrlimit " #res); } while (0)
    if (s->cpu_seconds > 0)
        LIM(RLIMIT_CPU, s->cpu_seconds);
    if (s->mem_bytes > 0 && !(s->device && s->device->no_as_limit))
        LIM(RLIMIT_AS, s->mem_bytes);
    if (s->file_bytes > 0)
        LIM(RLIMIT_FSIZE, s->file_bytes);
    if (s->max_procs > 0)
        LIM(RLIMIT_NPROC, s->max_procs);
    LIM(RLIMIT_CORE, 0);
    LIM(RLIMIT_NOFILE, 64);
#undef LIM
}

static int child_main(void *arg)
{
    const struct child_args *a = arg;
    const struct ao_sandbox_spec *s = a->spec;
    static char e_path[] = "PATH=/usr/bin:/bin", e_tmp[] = "TMPDIR=/work",
                e_home[] = "HOME=/work", e_lang[] = "LC_ALL=C";
    char e_lib[600], *envp[] = {e_path, e_tmp, e_home, e_lang, NULL, NULL};
    char go;
    int devnull;

    if (s->lib_path && snprintf(e_lib, sizeof e_lib, "LD_LIBRARY_PATH=%s", s->lib_path) <
                           (int)sizeof e_lib)
        envp[4] = e_lib;
    if (read(a->sync_fd, &go, 1) != 1) /* the parent has placed us in the cgroups */
        _exit(127);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() == 1 && !a->use_ns)
        _exit(127);
    for (int i = 0; i < 2; i++)
        if (a->cg_procs[i][0] && write_str(a->cg_procs[i], "0") < 0)
            die(a, "join cgroup");
    if (a->use_ns)
        build_root(a);
    else if (setsid() < 0)
        die(a, "setsid");
    if (chdir(a->use_ns ? "/work" : s->workdir) < 0)
        die(a, "chdir work dir");
    /* renumber the kept fds to 3.. by way of high numbers, so none clobbers another */
    if (dup3(a->err_fd, 190, O_CLOEXEC) < 0 || dup3(a->sync_fd, 191, O_CLOEXEC) < 0)
        die(a, "dup control pipes");
    ((struct child_args *)a)->err_fd = 190;
    for (int i = 0; i < s->nkeep; i++)
        if (dup3(s->keep_fds[i], 200 + i, 0) < 0)
            die(a, "dup kept fd");
    /* never the caller's own stdout and stderr: the output file, or nothing */
    if (s->out_fd >= 0 && (dup2(s->out_fd, 1) < 0 || dup2(s->out_fd, 2) < 0))
        die(a, "redirect output");
    if (s->out_fd < 0 && ((devnull = open("/dev/null", O_WRONLY)) < 0 || dup2(devnull, 1) < 0 ||
                          dup2(devnull, 2) < 0))
        die(a, "redirect output to /dev/null");
    if ((devnull = open("/dev/null", O_RDONLY)) < 0 || dup2(devnull, 0) < 0)
        die(a, "open /dev/null");
    for (int i = 0; i < s->nkeep; i++)
        if (dup3(200 + i, 3 + i, 0) < 0)
            die(a, "dup kept fd");
    /* keep the error pipe (close-on-exec) until exec reports success */
    if (dup3(190, 3 + s->nkeep, O_CLOEXEC) < 0 || dup3(191, 4 + s->nkeep, O_CLOEXEC) < 0)
        die(a, "dup control pipes");
    ((struct child_args *)a)->err_fd = 3 + s->nkeep;
    ((struct child_args *)a)->sync_fd = 4 + s->nkeep;
    syscall(SYS_close_range, 5 + s->nkeep, ~0U, 0);
    set_limits(a);
    if (s->cpu >= 0) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(s->cpu, &set);
        if (sched_setaffinity(0, sizeof set, &set) < 0)
            die(a, "pin to cpu");
    }
    if (getuid() == 0 &&
        (setgroups(0, NULL) < 0 || setresgid(a->uid, a->uid, a->uid) < 0 ||
         setresuid(a->uid, a->uid, a->uid) < 0))
        die(a, "drop to the sandbox's own uid");
    /* changing credentials cleared the parent-death signal: set it again,
     * or a kernel outlives a profiler killed -9 */
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
        die(a, "parent-death signal");
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
        die(a, "no_new_privs");
    if (a->filter && prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, a->filter) < 0)
        die(a, "seccomp");
    /* the same address layout in every run: timings that do not depend on
     * where ASLR happened to put code and data (nothing in the sandbox is
     * worth hiding from the code that runs in it) */
    personality(ADDR_NO_RANDOMIZE);
    if (s->hold && read(a->sync_fd, &go, 1) != 1)
        _exit(127); /* never released: the parent gave up on this sandbox */
    execve(s->argv[0], s->argv, envp);
    die(a, "exec");
    return 127;
}

/* Export a libseccomp filter as a raw BPF program (malloc'd). */
static int export_filter(scmp_filter_ctx ctx, void **bpf, size_t *len)
{
    char path[] = "/tmp/accelopt-bpf-XXXXXX";
    int fd = mkstemp(path), rc = -1;
    off_t n;

    *bpf = NULL;
    if (fd < 0)
        return -1;
    unlink(path);
    if (seccomp_export_bpf(ctx, fd) < 0 || (n = lseek(fd, 0, SEEK_CUR)) <= 0)
        goto out;
    if (!(*bpf = ao_malloc((size_t)n)) || pread(fd, *bpf, (size_t)n, 0) != n)
        goto out;
    *len = (size_t)n;
    rc = 0;
out:
    if (rc < 0) {
        free(*bpf);
        *bpf = NULL;
    }
    close(fd);
    return rc;
}

static int compile_filter(struct sock_fprog *prog, char *err, size_t errlen)
{
    static const char *const denied[] = {
        "socket", "socketpair", "connect", "bind", "listen", "accept", "accept4",
        "ptrace", "mount", "umount2", "pivot_root", "chroot", "unshare", "setns",
        "bpf", "perf_event_open", "io_uring_setup", "io_uring_enter", "io_uring_register",
        "userfaultfd", "kexec_load", "init_module", "finit_module", "delete_module",
        "keyctl", "add_key", "request_key", "process_vm_readv", "process_vm_writev"};
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
    void *bpf = NULL;
    size_t len = 0;
    int rc = -1;

    if (!ctx)
        goto out;
    for (size_t i = 0; i < sizeof denied / sizeof denied[0]; i++) {
        int nr = seccomp_syscall_resolve_name(denied[i]);
        if (nr != __NR_SCMP_ERROR && seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 0) < 0)
            goto out;
    }
    if (export_filter(ctx, &bpf, &len) < 0)
        goto out;
    prog->len = (unsigned short)(len / sizeof(struct sock_filter));
    prog->filter = bpf;
    rc = 0;
out:
    if (rc < 0)
        snprintf(err, errlen, "cannot build the compile seccomp filter");
    if (ctx)
        seccomp_release(ctx);
    return rc;
}


/* Cgroups are slow to create (tens of ms for a v1 memory cgroup), so each
 * process makes one per controller and reuses it: its sandboxes run one at
 * a time, and each leaves its cgroup empty. */
struct cgroup {
    char dir[256];
    int tried;
};
static struct cgroup cg_mem[SLOTS], cg_pids[SLOTS];

/* Remove the cgroups of profilers that died without cleaning up. */
static void remove_stale(const char *base)
{
    DIR *d = opendir(base);
    struct dirent *e;
    char path[600];
    int pid, slot;

    if (!d)
        return;
    while ((e = readdir(d)))
        if (sscanf(e->d_name, "accelopt-%d-%d", &pid, &slot) == 2 && kill(pid, 0) < 0 &&
            errno == ESRCH) {
            if (ao_name(path, sizeof path, "%s/%s", base, e->d_name) == 0)
                rmdir(path);
        }
    closedir(d);
}

static int cgroup_make(struct cgroup *cg, const char *const *bases, int slot)
{
    if (cg->tried)
        return cg->dir[0] ? 0 : -1;
    cg->tried = 1;
    for (int i = 0; bases[i]; i++)
        remove_stale(bases[i]);
    for (int i = 0; bases[i]; i++) {
        if (ao_name(cg->dir, sizeof cg->dir, "%s/accelopt-%d-%d", bases[i], (int)getpid(), slot) == 0 &&
            (mkdir(cg->dir, 0700) == 0 || errno == EEXIST))
            return 0;
    }
    cg->dir[0] = '\0';
    return -1;
}

/* Set the slot's cgroup limit; its directory on success, "" if refused.
 * The sandboxed process joins it itself, so the join (slow on cgroup v1:
 * it waits for an RCU grace period) overlaps the parent's other work. */
static void cgroup_prepare(char *out, size_t n, struct cgroup *cg, const char *const *bases,
                           const char *const *limit_files, const char *limit, int slot)
{
    char f[400];

    out[0] = '\0';
    if (cgroup_make(cg, bases, slot) < 0)
        return;
    for (int i = 0; limit_files[i]; i++) {
        if (ao_name(f, sizeof f, "%s/%s", cg->dir, limit_files[i]) == 0 && write_str(f, limit) == 0) {
            if (ao_name(out, n, "%s", cg->dir) < 0)
                out[0] = '\0';
            return;
        }
    }
}

void ao_sandbox_cleanup(void)
{
    for (int i = 0; i < 2 * SLOTS; i++) {
        struct cgroup *cg = i < SLOTS ? &cg_mem[i] : &cg_pids[i - SLOTS];
        if (cg->dir[0])
            rmdir(cg->dir);
        cg->dir[0] = '\0';
        cg->tried = 0;
    }
}

static void add_layer(struct ao_sandbox *sb, const char *l)
{
    size_t n = strlen(sb->layers);
    snprintf(sb->layers + n, sizeof sb->layers - n, "%s%s", n ? "," : "", l);
}

static long oom_kills(const char *cg);
static int await_exec(struct ao_sandbox *sb, char *err, size_t errlen);

/* The slot's cgroups limited for this sandbox (a controller that refuses
 * is left out: the layers say which held), and where the child joins them. */
static void slot_cgroups(const struct ao_sandbox_spec *spec, struct ao_sandbox *sb, struct child_args *a)
{
    static const char *const mem_bases[] = {"/sys/fs/cgroup/memory", "/sys/fs/cgroup", NULL};
    static const char *const pid_bases[] = {"/sys/fs/cgroup/pids", "/sys/fs/cgroup", NULL};
    static const char *const mem_files[] = {"memory.limit_in_bytes", "memory.max", NULL};
    static const char *const pid_files[] = {"pids.max", NULL};
    int slot = spec->slot >= 0 && spec->slot < SLOTS ? spec->slot : 0;
    char lim[32];

    if (spec->mem_bytes > 0) {
        snprintf(lim, sizeof lim, "%lld", spec->mem_bytes);
        cgroup_prepare(sb->cg_mem, sizeof sb->cg_mem, &cg_mem[slot], mem_bases, mem_files, lim, slot);
        if (sb->cg_mem[0]) {
            char f[400];
            if (ao_name(f, sizeof f, "%s/memory.failcnt", sb->cg_mem) == 0)
                write_str(f, "0");
            sb->oom_kills = oom_kills(sb->cg_mem);
            if (ao_name(a->cg_procs[0], sizeof a->cg_procs[0], "%s/cgroup.procs", sb->cg_mem) < 0)
                sb->cg_mem[0] = '\0'; /* not joined: not a layer */
        }
    }
    snprintf(lim, sizeof lim, "%d", spec->max_procs > 0 ? spec->max_procs : 64);
    cgroup_prepare(sb->cg_pids, sizeof sb->cg_pids, &cg_pids[slot], pid_bases, pid_files, lim, slot);
    if (sb->cg_pids[0] && ao_name(a->cg_procs[1], sizeof a->cg_procs[1], "%s/cgroup.procs", sb->cg_pids) < 0)
        sb->cg_pids[0] = '\0';
}

/* One try at starting a sandbox; *vanished is set when its process ended
 * before it was released without naming a failed step (killed from
 * outside while it set up: nothing untrusted has run yet). */
static int start_once(const struct ao_sandbox_spec *spec, struct ao_sandbox *sb, char *err,
                      size_t errlen, int *vanished)
{
    struct child_args a;
    struct sock_fprog prog = {0, NULL};
    int sync[2] = {-1, -1}, errp[2] = {-1, -1};
    char *stack = NULL;
    int flags = CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS;
    int rc = -1;

    memset(sb, 0, sizeof *sb);
    sb->pid = -1;
    sb->sync_fd = sb->err_fd = -1;
    memset(&a, 0, sizeof a);
    a.spec = spec;
    a.uid = ao_sandbox_uid(spec->slot);
    if (ao_name(a.root, sizeof a.root, "%s/.root", spec->workdir) < 0) {
        ao_errf(err, errlen, "a work directory too long (%zu bytes) for the sandbox's root in it: '%s'",
                strlen(spec->workdir), spec->workdir);
        goto out;
    }
    if (mkdir(a.root, 0755) < 0 && errno != EEXIST) {
        snprintf(err, errlen, "cannot create '%s': %s", a.root, strerror(errno));
        goto out;
    }
    if (spec->seccomp == AO_SECCOMP_COMPILE) {
        if (compile_filter(&prog, err, errlen) < 0)
            goto out;
        a.filter = &prog;
    }
    if (pipe2(sync, O_CLOEXEC) < 0 || pipe2(errp, O_CLOEXEC) < 0 || !(stack = ao_malloc(STACK_SIZE))) {
        snprintf(err, errlen, "cannot set up the sandbox: %s", strerror(errno));
        goto out;
    }
    slot_cgroups(spec, sb, &a);
    a.sync_fd = sync[0];
    a.err_fd = errp[1];
    a.use_ns = 1;
    sb->pid = clone(child_main, stack + STACK_SIZE, flags | SIGCHLD, &a);
    if (sb->pid < 0 && (errno == EPERM || errno == EINVAL || errno == ENOSPC)) {
        a.use_ns = 0; /* degrade loudly: the result lists the layers */
        sb->pid = clone(child_main, stack + STACK_SIZE, SIGCHLD, &a);
    }
    if (sb->pid < 0) {
        snprintf(err, errlen, "cannot start the sandbox: %s", strerror(errno));
        goto out;
    }
    sb->has_pidns = a.use_ns;
    if (a.use_ns)
        add_layer(sb, "pid-ns,mount-ns,net-ns,ipc-ns,uts-ns,ro-root");
    if (a.use_ns && spec->device) {
        add_layer(sb, spec->device->layer);
        if (spec->device->own_proc)
            add_layer(sb, "own-proc");
    }
    if (sb->cg_mem[0])
        add_layer(sb, "cgroup-memory");
    if (sb->cg_pids[0])
        add_layer(sb, "cgroup-pids");
    add_layer(sb, "rlimits");
    if (getuid() == 0)
        add_layer(sb, "own-uid");
    add_layer(sb, "no-new-privs");
    if (a.filter)
        add_layer(sb, "seccomp");
    close(sync[0]);
    sync[0] = -1;
    close(errp[1]);
    errp[1] = -1;
    sb->sync_fd = sync[1];
    sb->err_fd = errp[0];
    sync[1] = errp[0] = -1;
    if (write(sb->sync_fd, "g", 1) != 1) {
        /* gone before it read a byte: the release fails and says why (from
         * the error pipe) */
        close(sb->sync_fd);
        sb->sync_fd = -1;
        if (ao_sandbox_release(sb, err, errlen) < 0)
            goto kill;
    }
    /* a held sandbox is released later; any other goes straight on to its
     * exec, which may come before our next write (no second byte then: on
     * a busy machine its closed pipe failed that write, and a runner that
     * had started well was killed as lost) */
    if (!spec->hold && sb->sync_fd >= 0 && await_exec(sb, err, errlen) < 0)
        goto kill;
    rc = 0;
    goto out;
kill:
    *vanished = !sb->setup_failed;
    ao_sandbox_kill(sb);
    {
        int st = 0, to = 0, oom;
        ao_sandbox_wait(sb, 0, &st, &to);
        oom = ao_sandbox_oom(sb);
        if (WIFSIGNALED(st) || oom) {
            size_t n = strlen(err);
            snprintf(err + n, errlen - n, " (its process was killed by signal %d%s before "
                     "it was released)", WIFSIGNALED(st) ? WTERMSIG(st) : 0,
                     oom ? ", its memory cgroup at its limit" : "");
        }
    }
out:
    for (int i = 0; i < 2; i++) {
        if (sync[i] >= 0)
            close(sync[i]);
        if (errp[i] >= 0)
            close(errp[i]);
    }
    free(stack);
    free(prog.filter);
    return rc;
}

int ao_sandbox_start(const struct ao_sandbox_spec *spec, struct ao_sandbox *sb,
                     char *err, size_t errlen)
{
    int vanished = 0;

    if (start_once(spec, sb, err, errlen, &vanished) == 0)
        return 0;
    if (!vanished)
        return -1;
    /* killed from outside while it set up (rare): said, and tried once more */
    ao_warn("a sandbox ended before it was released: %s; starting it again", err);
    vanished = 0;
    return start_once(spec, sb, err, errlen, &vanished);
}

static void close_control(struct ao_sandbox *sb)
{
    if (sb->sync_fd > 0)
        close(sb->sync_fd);
    if (sb->err_fd > 0)
        close(sb->err_fd);
    sb->sync_fd = sb->err_fd = -1;
}

/* The child's word on its setup: the error pipe closes at exec, and
 * bytes on it name the step that failed.  0, or -1 + err. */
static int await_exec(struct ao_sandbox *sb, char *err, size_t errlen)
{
    char msg[300];
    ssize_t n;

    do
        n = read(sb->err_fd, msg, sizeof msg - 1);
    while (n < 0 && errno == EINTR);
    close_control(sb);
    if (n > 0) {
        msg[n] = '\0';
        snprintf(err, errlen, "sandbox setup failed at %s", msg);
        sb->setup_failed = 1;
        return -1;
    }
    return 0;
}

int ao_sandbox_release(struct ao_sandbox *sb, char *err, size_t errlen)
{
    char msg[300];
    ssize_t n;

    if (sb->sync_fd < 0 || write(sb->sync_fd, "x", 1) != 1) {
        int e = errno;
        /* the held child is gone: its error pipe may say which step failed */
        n = sb->err_fd >= 0 ? read(sb->err_fd, msg, sizeof msg - 1) : -1;
        if (n > 0) {
            msg[n] = '\0';
            snprintf(err, errlen, "cannot release the sandbox: its setup failed at %s", msg);
            sb->setup_failed = 1;
        } else {
            snprintf(err, errlen, "cannot release the sandbox: %s", strerror(e));
        }
        close_control(sb);
        return -1;
    }
    return await_exec(sb, err, errlen);
}

void ao_sandbox_kill(struct ao_sandbox *sb)
{
    if (sb->pid <= 0)
        return;
    if (sb->has_pidns)
        kill(sb->pid, SIGKILL); /* PID 1 of the namespace: takes all with it */
    else
        kill(-sb->pid, SIGKILL);
    kill(sb->pid, SIGKILL);
    if (sb->cg_pids[0]) { /* anything that escaped the group is still in the cgroup */
        char f[400];
        if (ao_name(f, sizeof f, "%s/cgroup.kill", sb->cg_pids) == 0)
            write_str(f, "1");
    }
}

/* Leave the cgroup empty: kill anything still in it (none is expected once
 * the namespace's first process is gone).  0 once it is found empty, -1
 * where it is not (or cannot be read); 1 where there is none. */
static int cgroup_drain(const char *dir)
{
    char f[400], *text, e[AO_ERRLEN];

    if (!dir[0])
        return 1;
    if (ao_name(f, sizeof f, "%s/cgroup.procs", dir) < 0)
        return -1;
    for (int tries = 0; tries < 400; tries++) {
        struct timespec ts = {0, 1000000};
        int any = 0;
        if (!(text = ao_read_file(f, NULL, e, sizeof e)))
            return -1;
        for (char *p = text; *p;) {
            long pid = strtol(p, &p, 10);
            if (pid > 0 && kill((pid_t)pid, SIGKILL) == 0)
                any = 1;
            while (*p == '\n')
                p++;
        }
        free(text);
        if (!any)
            return 0;
        nanosleep(&ts, NULL);
    }
    return -1;
}

int ao_sandbox_wait(struct ao_sandbox *sb, long long deadline_ns, int *status, int *timed_out)
{
    int pidfd;

    *timed_out = 0;
    *status = 0;
    if (sb->pid <= 0)
        return -1;
    /* a pidfd wakes us the moment the process ends; no polling delay */
    pidfd = (int)syscall(SYS_pidfd_open, sb->pid, 0);
    for (;;) {
        pid_t r = waitpid(sb->pid, status, WNOHANG);
        long long left;
        if (r == sb->pid)
            break;
        if (r < 0 && errno != EINTR) {
            if (pidfd >= 0)
                close(pidfd);
            return -1;
        }
        left = deadline_ns ? deadline_ns - ao_now_ns() : -1;
        if (deadline_ns && left <= 0) {
            *timed_out = 1;
            ao_sandbox_kill(sb);
            deadline_ns = 0;
            continue;
        }
        if (pidfd >= 0) {
            struct pollfd pfd = {pidfd, POLLIN, 0};
            poll(&pfd, 1, left < 0 ? -1 : (int)(left / 1000000 + 1));
        } else {
            struct timespec ts = {0, 1000000};
            nanosleep(&ts, NULL);
        }
    }
    if (pidfd >= 0)
        close(pidfd);
    if (!sb->has_pidns)
        kill(-sb->pid, SIGKILL); /* the group may outlive its leader */
    sb->pid = -1;
    close_control(sb);
    {
        int pids = cgroup_drain(sb->cg_pids), mem = cgroup_drain(sb->cg_mem);
        sb->gone = pids >= 0 && mem >= 0 && (sb->has_pidns || pids == 0);
    }
    return 0;
}

/* cgroup v2 counts its OOM kills in memory.events (never reset): the
 * count now, or -1 where there is none */
static long oom_kills(const char *cg)
{
    char f[400], e[AO_ERRLEN], *t, *at;
    long n = -1;

    if (ao_name(f, sizeof f, "%s/memory.events", cg) == 0 && (t = ao_read_file(f, NULL, e, sizeof e))) {
        if ((at = strstr(t, "oom_kill ")))
            n = atol(at + 9);
        free(t);
    }
    return n;
}

int ao_sandbox_oom(const struct ao_sandbox *sb)
{
    char f[400], e[AO_ERRLEN], *t;
    int oom = 0;
    if (!sb->cg_mem[0])
        return 0;
    if (ao_name(f, sizeof f, "%s/memory.failcnt", sb->cg_mem) == 0 &&
        (t = ao_read_file(f, NULL, e, sizeof e))) { /* cgroup v1 */
        oom = atol(t) > 0;
        free(t);
    } else if (sb->oom_kills >= 0) {
        oom = oom_kills(sb->cg_mem) > sb->oom_kills;
    }
    return oom;
}

/* futex for a runner of one thread (the cpu target): the harness waits
 * for its next command (FUTEX_WAIT, no timeout) and wakes the profiler,
 * and nothing else in one thread needs it.  A timed wait let a kernel pad
 * its own calls unseen, as a parent flattering its child in a head-to-head
 * (issue 68); it now traps.  0, or -1. */
static int one_thread_futex(scmp_filter_ctx ctx)
{
    static const int waits[] = {FUTEX_WAIT, FUTEX_WAIT_PRIVATE}, wakes[] = {FUTEX_WAKE, FUTEX_WAKE_PRIVATE};

    for (int i = 0; i < 2; i++)
        if (seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(futex), 2, SCMP_A1(SCMP_CMP_EQ, (scmp_datum_t)waits[i], 0),
                             SCMP_A3(SCMP_CMP_EQ, 0, 0)) < 0 ||
            seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(futex), 1,
                             SCMP_A1(SCMP_CMP_EQ, (scmp_datum_t)wakes[i], 0)) < 0)
            return -1;
    return 0;
}

/* The runner's filter: the calls every runner makes, and more's (a
 * device's runtime, whose threads also wait with timeouts: futex whole
 * there); a runner of one thread gets one_thread_futex. */
static int runner_filter(const char *const *more, void **bpf, size_t *len, char *err,
                         size_t errlen)
{
    static const char *const allowed[] = {
        "read", "write", "close", "fstat", "newfstatat", "lseek", "munmap", "mremap", "brk",
        "exit", "exit_group", "rt_sigreturn", "rt_sigprocmask", "getpid",
        "gettid", "getrandom", "clock_gettime", "clock_getres", "gettimeofday", "sched_yield",
        "sched_getaffinity",
        /* the kernel's way of resuming a timed sleep that a stop interrupted
         * (the profiler stops the runner between commands; the call was
         * allowed when it began): the CUDA driver's threads need it */
        "restart_syscall", NULL};
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_TRAP);
    int rc = -1;

    *bpf = NULL;
    /* another ABI's call (x32, i386) traps too, so the handler can name it */
    if (!ctx || seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_TRAP) < 0)
        goto out;
    for (int k = 0; k < 2; k++)
        for (const char *const *a = k ? more : allowed; a && *a; a++) {
            int nr = seccomp_syscall_resolve_name(*a);
            if (nr != __NR_SCMP_ERROR && seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 0) < 0)
                goto out;
        }
    if (!more && one_thread_futex(ctx) < 0)
        goto out;
    /* advice that changes no data (issue 56: MADV_REMOVE punched the
     * shared tensor memory out from under the profiler): what malloc and
     * the drivers give, and nothing that frees, pages out or merges */
    {
        static const int advice[] = {MADV_NORMAL, MADV_RANDOM, MADV_SEQUENTIAL, MADV_WILLNEED, MADV_DONTNEED,
                                     MADV_FREE, MADV_DONTFORK, MADV_DOFORK, MADV_HUGEPAGE, MADV_NOHUGEPAGE,
                                     MADV_DONTDUMP, MADV_DODUMP};
        for (size_t i = 0; i < sizeof advice / sizeof advice[0]; i++)
            if (seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(madvise), 1,
                                 SCMP_A2(SCMP_CMP_EQ, (scmp_datum_t)advice[i], 0)) < 0)
                goto out;
    }
    /* memory may be mapped and protected, but never executable: no JIT,
     * no patching of the harness or of libc */
    if (seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(mmap), 1,
                         SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0)) < 0 ||
        seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(mprotect), 1,
                         SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0)) < 0)
        goto out;
    if (export_filter(ctx, bpf, len) < 0)
        goto out;
    rc = 0;
out:
    if (rc < 0)
        snprintf(err, errlen, "cannot build the runner seccomp filter");
    if (ctx)
        seccomp_release(ctx);
    return rc;
}

int ao_sandbox_runner_filter(void **bpf, size_t *len, char *err, size_t errlen)
{
    return runner_filter(NULL, bpf, len, err, errlen);
}

/* A GPU's runner installs its filter once the driver is up (context made,
 * memory allocated, a kernel launched), and the driver goes on needing its
 * device files: ioctl on them, polling and sleeping while it waits, and
 * opening them again.  What an H200 needed (issue 26): this list and
 * restart_syscall in the common one. */
int ao_sandbox_gpu_runner_filter(void **bpf, size_t *len, char *err, size_t errlen)
{
    static const char *const gpu[] = {"futex", "ioctl", "openat", "poll", "ppoll", "nanosleep",
                                      "clock_nanosleep", "sched_setaffinity", "getrusage",
                                      "readlink", "fcntl", NULL};
    return runner_filter(gpu, bpf, len, err, errlen);
}

const char *ao_syscall_name(int nr)
{
    static char name[80];
    /* the x32 ABI numbers its calls with bit 30 set (__X32_SYSCALL_BIT) */
    int x32 = nr >= 0 && (nr & 0x40000000);
    char *s = seccomp_syscall_resolve_num_arch(x32 ? SCMP_ARCH_X32 : SCMP_ARCH_NATIVE, nr);
    if (!s && x32)
        s = seccomp_syscall_resolve_num_arch(SCMP_ARCH_X86_64, nr & ~0x40000000);
    if (!s)
        return NULL;
    snprintf(name, sizeof name, "%s%s", s, x32 ? " (x32 ABI)" : "");
    free(s);
    return name;
}
