/* report.h - what `accelopt run` shows while it runs and leaves in runs/<id>/ */
#ifndef AO_REPORT_H
#define AO_REPORT_H

#include <stdio.h>

#include <cjson/cJSON.h>

#include "state/runstore.h"

struct run_task {
    char task[64];
    char ext[8];   /* the target's kernel file extension: best.<ext> */
    char run[200]; /* the run id: the Kafka key and the redis run:<id> */
    char spec[512];  /* the task's directory */
    cJSON *done;   /* the done message, once it came */
    int refused;   /* the selector dead-lettered its task: the run never started */
};

/* A run's progress as an object: run, and once the selector has it task,
 * phase, iter, iters, kernels, failures, speedup, pct_of_peak, tokens,
 * cost_usd, age_s, calls_in_flight ({role: {calls, oldest_s}}). */
cJSON *report_run_row(struct ao_runstore *rs, const char *run);
/* "waiting on 2 planner calls, 45 s; 1 executor call, 3 s" from a row's
 * calls in flight ("" with none). */
void report_calls_text(const cJSON *row, char *out, size_t len);

/* A finished run's done message, from its last phase's messages in the run
 * store (the selector keeps them to send again); NULL when it has none. */
cJSON *report_done_of(struct ao_runstore *rs, const char *run);
/* One line per task (iteration, kernels, failures, best speedup, % of peak,
 * tokens, cost), redrawn in place on a terminal. */
void report_progress(FILE *tty, struct ao_runstore *rs, const struct run_task *t, int n,
                     int *drawn);
/* What a run came to, over its tasks (for the exit status). */
struct report_outcome {
    int all_failed;   /* every task had kernels written, and not one worked */
    int none_written; /* no kernel was written at all: every slot a duplicate
                         plan or the search out of moves */
    int gained;       /* tasks whose result beats their baseline, head to head */
    int searched;     /* tasks that ended above their baseline by the search's own
                         figure alone, never compared head to head */
    int ended;        /* tasks that ended with a done */
};

/* Write dir/<task>/{best.<ext>,done.json,history.jsonl,experiences.jsonl,
 * usage.json} and dir/summary.txt (a row per task, then per task what its
 * candidates came to: duplicates, the search out of moves, failures and
 * the commonest reason) from the run store (and the done messages that
 * came), and print the summary on `echo` unless it is NULL; *o (if given)
 * what the run came to.  Every figure of a task's row is its done's, from
 * one measurement (the final head-to-head where there was one), and best.*
 * is the done's result.  0 or -1 + err. */
int report_write(const char *dir, struct ao_runstore *rs, const struct run_task *t, int n,
                 FILE *echo, struct report_outcome *o, char *err, size_t errlen);

#endif
