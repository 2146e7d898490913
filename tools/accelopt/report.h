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
 * cost_usd, age_s.  NULL on OOM. */
cJSON *report_run_row(struct ao_runstore *rs, const char *run);
/* One line per task (iteration, kernels, failures, best speedup, % of peak,
 * tokens, cost), redrawn in place on a terminal. */
void report_progress(FILE *tty, struct ao_runstore *rs, const struct run_task *t, int n,
                     int *drawn);
/* Write dir/<task>/{best.<ext>,done.json,history.jsonl,experiences.jsonl,
 * usage.json} and dir/summary.txt (a row per task, then per task whose
 * model kernels failed, how many and the commonest reason) from the run
 * store (and the done messages that came), and print the summary on `echo`
 * unless it is NULL; *all_failed (if given) set when every task had model
 * kernels and not one of them worked.  0 or -1 + err. */
int report_write(const char *dir, struct ao_runstore *rs, const struct run_task *t, int n,
                 FILE *echo, int *all_failed, char *err, size_t errlen);

#endif
