/* test_sandbox.c - the sandbox contains a process tree and kills all of it */
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "core/util.h"
#include "measure/sandbox.h"

/* libc's write, interposed for this test: with slow_go set, the
 * sandbox's one-byte go ('g') is followed by a pause, as a busy machine
 * pauses a parent between two system calls */
static int slow_go;
ssize_t write(int fd, const void *buf, size_t n)
{
    ssize_t r = syscall(SYS_write, fd, buf, n);
    if (slow_go && n == 1 && r == 1 && *(const char *)buf == 'g')
        usleep(300000);
    return r;
}

static int ro_workdir;       /* the next run's /work read-only, as a runner's is */
static const char *lib_path; /* the next run's LD_LIBRARY_PATH, as a GPU runner's may be */

static int run(const char *script, double timeout, int *status, int *timed_out, char *layers)
{
    char dir[] = "/tmp/accelopt-sbx-XXXXXX", err[AO_ERRLEN];
    char sh[] = "/bin/sh", c[] = "-c", cmd[1024];
    char *argv[] = {sh, c, cmd, NULL};
    struct ao_sandbox_spec spec = {0};
    struct ao_sandbox sb;
    int rc;

    snprintf(cmd, sizeof cmd, "%s", script);
    if (!mkdtemp(dir) || chmod(dir, 0777) < 0)
        return -1;
    spec.workdir = dir;
    spec.workdir_ro = ro_workdir;
    spec.lib_path = lib_path;
    spec.argv = argv;
    spec.out_fd = -1;
    spec.cpu_seconds = 30;
    spec.mem_bytes = 1LL << 30;
    spec.max_procs = 32;
    spec.seccomp = AO_SECCOMP_COMPILE;
    spec.cpu = -1;
    rc = ao_sandbox_start(&spec, &sb, err, sizeof err);
    if (rc == 0) {
        snprintf(layers, 512, "%s", sb.layers);
        rc = ao_sandbox_wait(&sb, ao_now_ns() + (long long)(timeout * 1e9), status, timed_out);
    } else {
        fprintf(stderr, "%s\n", err);
    }
    ao_rmtree(dir);
    return rc;
}

/* processes of the sandbox user alive (the test compares with the count
 * from before it started anything) */
static int nobody_procs(void)
{
    char cmd[300];
    FILE *p;
    unsigned first = ao_sandbox_uid(0) - ao_sandbox_uid(0) % 4, last = first + 3;
    /* this process's sandboxes: the uids of its own slots */
    snprintf(cmd, sizeof cmd, "ps -eo uid= | awk '$1 >= %u && $1 <= %u { n++ } END { print n + 0 }'",
             first, last);
    p = popen(cmd, "r");
    int n = -1;
    if (p) {
        if (fscanf(p, "%d", &n) != 1)
            n = 0;
        pclose(p);
    }
    return n;
}

/* A kernel runner's seccomp program (the GPU's, or the plain one) in a
 * child, then system call nr: 1 if it returned, 0 if the filter stopped
 * the process (SIGSYS), -1 otherwise. */
static int runner_allows(int gpu, long nr)
{
    void *bpf = NULL;
    size_t len = 0;
    char err[AO_ERRLEN];
    int st = 0;
    pid_t pid;

    if ((gpu ? ao_sandbox_gpu_runner_filter : ao_sandbox_runner_filter)(&bpf, &len, err, sizeof err) < 0)
        return -1;
    if ((pid = fork()) == 0) {
        struct sock_fprog prog = {(unsigned short)(len / sizeof(struct sock_filter)), bpf};
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
            syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0)
            _exit(3);
        syscall(nr, -1L, 0L, 0L);
        _exit(0);
    }
    free(bpf);
    if (pid < 0 || waitpid(pid, &st, 0) != pid)
        return -1;
    return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 1 : WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS ? 0 : -1;
}

int main(void)
{
    int st, to, before = nobody_procs();
    char layers[512], script[400];

    CHECK(run("exit 7", 10, &st, &to, layers) == 0 && WIFEXITED(st) && WEXITSTATUS(st) == 7 && !to,
          "exit status comes back");
    CHECK(strstr(layers, "pid-ns") && strstr(layers, "net-ns") && strstr(layers, "own-uid"),
          "layers reported: %s", layers);
    snprintf(script, sizeof script, "test \"$(id -u)\" = %u && test ! -e /etc/passwd && "
             "test ! -e /root && touch /work/x && ! touch /usr/x 2>/dev/null", ao_sandbox_uid(0));
    CHECK(run(script, 10, &st, &to, layers) == 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0 &&
              ao_sandbox_uid(0) != 65534 && ao_sandbox_uid(1) != ao_sandbox_uid(0),
          "runs as a uid of its own (%u; slot 1: %u, not the shared 65534), sees no /etc or "
          "/root, writes only its work dir", ao_sandbox_uid(0), ao_sandbox_uid(1));
    slow_go = 1;
    CHECK(run("exit 0", 10, &st, &to, layers) == 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0,
          "a sandbox that sets up and starts before its parent writes again starts well (CI "
          "killed such runners as lost, under load)");
    slow_go = 0;
    ro_workdir = 1;
    CHECK(run("test -r /work && ! touch /work/x 2>/dev/null && ! mkdir /work/d 2>/dev/null", 10,
              &st, &to, layers) == 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0,
          "a runner's work dir is read-only: a kernel cannot change what is there (issue 25)");
    ro_workdir = 0;
    CHECK(run("test -z \"${LD_LIBRARY_PATH+set}\"", 10, &st, &to, layers) == 0 && WIFEXITED(st) &&
              WEXITSTATUS(st) == 0,
          "no library path reaches a sandbox unless the target names one");
    lib_path = "/usr/local/nvidia/lib64";
    CHECK(run("test \"$LD_LIBRARY_PATH\" = /usr/local/nvidia/lib64", 10, &st, &to, layers) == 0 &&
              WIFEXITED(st) && WEXITSTATUS(st) == 0,
          "the driver's directory a target names is the sandbox's LD_LIBRARY_PATH (issue 26)");
    lib_path = NULL;
    CHECK(run("setsid sh -c 'sleep 1000' & sh -c 'sleep 1000 &' ; sleep 1000", 0.5, &st, &to,
              layers) == 0 && to, "an endless tree times out");
    usleep(100000);
    CHECK(nobody_procs() == before, "nothing left running, setsid'd grandchildren included (%d)",
          nobody_procs() - before);
    CHECK(run("i=0; while [ $i -lt 100 ]; do sleep 5 & i=$((i+1)); done; wait", 3, &st, &to,
              layers) == 0, "a process flood is contained");
    usleep(100000);
    CHECK(nobody_procs() == before, "the flood left nothing running");
    /* the kernel restarts a sleeping call a signal interrupted by way of
     * restart_syscall: the CUDA driver's threads did so on an H200, and the
     * filter killed an honest runner (issue 26) */
    CHECK(runner_allows(1, SYS_restart_syscall) == 1 && runner_allows(0, SYS_restart_syscall) == 1,
          "a runner's filter lets an interrupted call be restarted (restart_syscall)");
    CHECK(runner_allows(1, SYS_ioctl) == 1 && runner_allows(0, SYS_ioctl) == 0,
          "the GPU runner's filter allows ioctl (the driver's), the plain one does not");
    CHECK(runner_allows(1, SYS_socket) == 0 && runner_allows(1, SYS_execve) == 0 &&
              runner_allows(1, SYS_getppid) == 0,
          "the GPU runner's filter stops socket, execve and getppid");
    ao_sandbox_cleanup();
    {
        /* a work directory whose sandbox root ("/.root" in it) would not
         * fit its buffer: refused, nothing made, never cut (issue 70: cut,
         * it named a directory beside the job's) */
        char dir[640], cut[700], err[512];
        char *argv[] = {"/bin/true", NULL};
        struct ao_sandbox_spec spec = {0};
        struct ao_sandbox sb;
        struct stat made;
        int n = snprintf(dir, sizeof dir, "/tmp/accelopt-long-%d-", (int)getpid());
        memset(dir + n, 'x', sizeof dir - (size_t)n - 1);
        dir[596] = '\0';
        snprintf(cut, sizeof cut, "%s/.r", dir); /* what the cut one was: its first 599 bytes */
        spec.workdir = dir;
        spec.argv = argv;
        spec.out_fd = -1;
        spec.cpu = -1;
        CHECK(ao_sandbox_start(&spec, &sb, err, sizeof err) < 0 && strstr(err, "too long") &&
                  stat(cut, &made) < 0,
              "a work directory too long for the sandbox's root in it is refused, nothing made (%.60s)", err);
    }
    return CHECK_DONE();
}
