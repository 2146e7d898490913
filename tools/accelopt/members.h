/* members.h - what `accelopt run`'s stages hold of their consumer groups.
 * Each stage writes a line on a pipe at every assignment (wire/kafka.c,
 * tell_supervisor): its pid, the partitions it holds, and those of the
 * topics it reads.  The run waits for every stage to join before its first
 * task, and on its own broker it stops when a kind of stage is left short
 * of its topics' partitions for long: a run's groups are its stages' alone,
 * so another consumer is in the group, taking messages no stage of the run
 * will answer (any local user can reach the embedded broker; issue 68). */
#ifndef AO_MEMBERS_H
#define AO_MEMBERS_H

#include <stddef.h>
#include <sys/types.h>

#include "procs.h"

#define MEMBERS_MAX 80
#define MEMBERS_KINDS 8
/* short of its partitions this long: not a rebalance (the embedded
 * broker's session timeout, 6 s in tests, 45 s at most, then a join) */
#define MEMBERS_SHORT_S 60

struct members {
    int fd; /* the pipe's read end, or -1 */
    struct {
        pid_t pid;
        int held, parts;
    } m[MEMBERS_MAX];
    int n;
    struct {
        char name[32];
        double since; /* short of its partitions since (0: not short) */
    } kind[MEMBERS_KINDS];
    int nkinds;
    char buf[512]; /* a line not yet whole */
    size_t len;
};

/* The pipe: *write_fd goes to the stages (ACCELOPT_READY_FD), non-blocking
 * (a full pipe drops a line rather than stop a stage).  0, or -1. */
int members_open(struct members *ms, int *write_fd);
void members_close(struct members *ms);
/* Take the lines the stages wrote since. */
void members_read(struct members *ms);
/* How many of the n processes have said what they hold at least once. */
int members_joined(const struct members *ms, const struct proc *procs, int n);
/* A kind of stage (procs' names) short of its topics' partitions for
 * MEMBERS_SHORT_S by `now`: 1 and a sentence in why; else 0. */
int members_short(struct members *ms, const struct proc *procs, int n, double now, char *why, size_t len);

#endif
