/* procs.h - the processes `accelopt run` starts and keeps alive: the five
 * stages and, unless one is named, a private redis-server */
#ifndef AO_PROCS_H
#define AO_PROCS_H

#include <sys/types.h>

#define PROC_MAX_ARGS 48

struct proc {
    char name[32];
    char *argv[PROC_MAX_ARGS]; /* owned; NULL-terminated */
    int argc;
    char log[600];             /* stdout and stderr go here */
    pid_t pid;                 /* 0: not running */
    int restarts;
    double next_start;         /* when a dead one may start again */
};

/* Append an argument (copied); -1 when full. */
int proc_arg(struct proc *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Start it in its own process group (so a terminal's Ctrl-C reaches only
 * `accelopt run`, which stops the children in order); it gets SIGKILL if
 * we die.  0 or -1 + err. */
int proc_start(struct proc *p, char *err, size_t errlen);
/* Reap it if it exited: 1 and *status (a waitpid status), 0 still running. */
int proc_reap(struct proc *p, int *status);
/* SIGTERM, wait up to grace_s, then SIGKILL; reaps it. */
void proc_stop(struct proc *p, double grace_s);
/* Stop several at once: SIGTERM to all, then the same wait. */
void proc_stop_all(struct proc *ps, int n, double grace_s);
void proc_release(struct proc *p);

/* A free loopback TCP port (closed again: the child binds it); 0 on failure. */
int free_port(void);
double mono_s(void);

#endif
