/* front.h - what the front's command files share */
#ifndef AO_FRONT_H
#define AO_FRONT_H

#include <stdio.h>

#include "core/config.h"

/* Each command sets itself up with ao_tool_setup (lib/wire/stage.h), as the
 * stages do. */

/* topics.c: the embedded broker, kcat-like produce and consume, and relay
 * (the stage loop with no work). */
int cmd_broker(int argc, char **argv);
int cmd_produce(int argc, char **argv);
int cmd_consume(int argc, char **argv);
int cmd_relay(int argc, char **argv);

/* run.c: the whole loop on one machine, or runs submitted to stages
 * already running. */
int cmd_run(int argc, char **argv);
int cmd_submit(int argc, char **argv);

/* task.c: accelopt task new, a task directory from a reference function. */
int cmd_task(int argc, char **argv);

/* status.c: the runs in flight, from redis. */
int cmd_status(int argc, char **argv);

/* memory.c: the optimization memory: list, show, export, import, rm,
 * prune, clear. */
int cmd_memory(int argc, char **argv);

/* report_html.c: a run directory's report.html.  report_html writes it
 * (0, or -1 + err); report_html_available says whether the page's
 * libraries are installed (0, or -1 + err saying how to get them). */
int cmd_report(int argc, char **argv);
int report_html(const char *dir, const char *out, char *err, size_t errlen);
int report_html_available(char *err, size_t errlen);

#endif
