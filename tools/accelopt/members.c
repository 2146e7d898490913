/* members.c - what `accelopt run`'s stages hold of their groups (members.h). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "members.h"

int members_open(struct members *ms, int *write_fd)
{
    int fds[2];

    memset(ms, 0, sizeof *ms);
    ms->fd = -1;
    if (pipe(fds) < 0)
        return -1;
    if (fcntl(fds[0], F_SETFD, FD_CLOEXEC) < 0 || fcntl(fds[0], F_SETFL, O_NONBLOCK) < 0 ||
        fcntl(fds[1], F_SETFL, O_NONBLOCK) < 0) {
        close(fds[0]);
        close(fds[1]);
        return -1;
    }
    ms->fd = fds[0];
    *write_fd = fds[1];
    return 0;
}

void members_close(struct members *ms)
{
    if (ms->fd >= 0)
        close(ms->fd);
    ms->fd = -1;
}

static void take_line(struct members *ms, const char *line)
{
    long pid;
    int held, parts, i;

    if (sscanf(line, "%ld %d %d", &pid, &held, &parts) != 3 || pid <= 0 || held < 0 || parts < 0)
        return;
    for (i = 0; i < ms->n && ms->m[i].pid != (pid_t)pid; i++)
        ;
    if (i == ms->n) {
        if (ms->n == MEMBERS_MAX) { /* the oldest, a stage long dead, makes room */
            memmove(&ms->m[0], &ms->m[1], sizeof ms->m[0] * (MEMBERS_MAX - 1));
            ms->n--;
        }
        i = ms->n++;
    }
    ms->m[i].pid = (pid_t)pid;
    ms->m[i].held = held;
    ms->m[i].parts = parts;
}

void members_read(struct members *ms)
{
    ssize_t got;

    while (ms->fd >= 0 && (got = read(ms->fd, ms->buf + ms->len, sizeof ms->buf - 1 - ms->len)) > 0) {
        char *line = ms->buf, *nl;
        ms->len += (size_t)got;
        ms->buf[ms->len] = '\0';
        while ((nl = strchr(line, '\n'))) {
            *nl = '\0';
            take_line(ms, line);
            line = nl + 1;
        }
        ms->len -= (size_t)(line - ms->buf);
        memmove(ms->buf, line, ms->len);
        if (ms->len == sizeof ms->buf - 1) /* no line is this long: not ours */
            ms->len = 0;
    }
}

static int member_of(const struct members *ms, pid_t pid)
{
    for (int i = 0; pid > 0 && i < ms->n; i++)
        if (ms->m[i].pid == pid)
            return i;
    return -1;
}

int members_joined(const struct members *ms, const struct proc *procs, int n)
{
    int joined = 0;

    for (int i = 0; i < n; i++)
        joined += member_of(ms, procs[i].pid) >= 0;
    return joined;
}

int members_short(struct members *ms, const struct proc *procs, int n, double now, char *why, size_t len)
{
    for (int i = 0; i < n; i++) {
        int k, held = 0, parts = 0, all = 1;
        /* each kind once, from its first process */
        for (k = 0; k < i && strcmp(procs[k].name, procs[i].name) != 0; k++)
            ;
        if (k < i)
            continue;
        for (int j = i; j < n; j++)
            if (strcmp(procs[j].name, procs[i].name) == 0) {
                int m = member_of(ms, procs[j].pid);
                if (m < 0) { /* not joined yet, or started again: wait */
                    all = 0;
                    break;
                }
                held += ms->m[m].held;
                parts = ms->m[m].parts;
            }
        for (k = 0; k < ms->nkinds && strcmp(ms->kind[k].name, procs[i].name) != 0; k++)
            ;
        if (k == ms->nkinds) {
            if (k == MEMBERS_KINDS)
                continue;
            snprintf(ms->kind[k].name, sizeof ms->kind[k].name, "%s", procs[i].name);
            ms->kind[k].since = 0;
            ms->nkinds++;
        }
        if (!all || parts == 0 || held >= parts) {
            ms->kind[k].since = 0;
            continue;
        }
        if (ms->kind[k].since == 0)
            ms->kind[k].since = now;
        if (now - ms->kind[k].since >= MEMBERS_SHORT_S) {
            snprintf(why, len, "the run's %s has held %d of the %d partitions of its topics for %d s: "
                     "a consumer that is not this run's is in its group and takes its messages, which "
                     "no stage of the run will answer (any local user can reach the run's own broker: "
                     "docs/OPERATING.md); the run stops rather than wait out the slot deadline",
                     procs[i].name, held, parts, MEMBERS_SHORT_S);
            return 1;
        }
    }
    return 0;
}
