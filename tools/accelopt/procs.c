/* procs.c - start, reap and stop the child processes of `accelopt run` */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "procs.h"

double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int proc_arg(struct proc *p, const char *fmt, ...)
{
    va_list ap;
    char *s;
    int n;

    if (p->argc >= PROC_MAX_ARGS - 1)
        return -1;
    va_start(ap, fmt);
    n = vasprintf(&s, fmt, ap);
    va_end(ap);
    if (n < 0)
        return -1;
    p->argv[p->argc++] = s;
    p->argv[p->argc] = NULL;
    return 0;
}

int proc_start(struct proc *p, char *err, size_t errlen)
{
    pid_t parent = getpid(), pid;
    int fd = open(p->log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);

    if (fd < 0) {
        snprintf(err, errlen, "cannot open log '%s': %s", p->log, strerror(errno));
        return -1;
    }
    if ((pid = fork()) < 0) {
        snprintf(err, errlen, "cannot start %s: %s", p->name, strerror(errno));
        close(fd);
        return -1;
    }
    if (pid == 0) {
        int null = open("/dev/null", O_RDONLY);
        sigset_t none;
        setpgid(0, 0);
        prctl(PR_SET_PDEATHSIG, SIGKILL); /* a stuck child must not outlive us */
        if (getppid() != parent)
            _exit(127); /* the parent died before prctl */
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        signal(SIGPIPE, SIG_DFL);
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        if (null >= 0)
            dup2(null, 0);
        dup2(fd, 1);
        dup2(fd, 2);
        execvp(p->argv[0], p->argv);
        dprintf(2, "cannot run %s: %s\n", p->argv[0], strerror(errno));
        _exit(127);
    }
    close(fd);
    p->pid = pid;
    return 0;
}

int proc_reap(struct proc *p, int *status)
{
    pid_t r;

    if (p->pid <= 0)
        return 0;
    do
        r = waitpid(p->pid, status, WNOHANG);
    while (r < 0 && errno == EINTR);
    if (r == p->pid || (r < 0 && errno == ECHILD)) {
        p->pid = 0;
        return 1;
    }
    return 0;
}

void proc_stop_all(struct proc *ps, int n, double grace_s)
{
    double until = mono_s() + grace_s;
    int st, left;

    for (int i = 0; i < n; i++)
        if (ps[i].pid > 0)
            kill(ps[i].pid, SIGTERM);
    do {
        left = 0;
        for (int i = 0; i < n; i++)
            if (ps[i].pid > 0 && !proc_reap(&ps[i], &st))
                left++;
        if (left) {
            struct timespec ts = {0, 20000000L};
            nanosleep(&ts, NULL);
        }
    } while (left && mono_s() < until);
    for (int i = 0; i < n; i++)
        if (ps[i].pid > 0) {
            kill(ps[i].pid, SIGKILL);
            while (waitpid(ps[i].pid, &st, 0) < 0 && errno == EINTR)
                ;
            ps[i].pid = 0;
        }
}

void proc_stop(struct proc *p, double grace_s)
{
    proc_stop_all(p, 1, grace_s);
}

void proc_release(struct proc *p)
{
    for (int i = 0; i < p->argc; i++)
        free(p->argv[i]);
    p->argc = 0;
    p->argv[0] = NULL;
}

int free_port(void)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    int fd = socket(AF_INET, SOCK_STREAM, 0), port = 0;

    if (fd < 0)
        return 0;
    if (bind(fd, (struct sockaddr *)&a, sizeof a) == 0 &&
        getsockname(fd, (struct sockaddr *)&a, &len) == 0)
        port = ntohs(a.sin_port);
    close(fd);
    return port;
}
