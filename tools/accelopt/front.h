/* front.h - what the front's command files share */
#ifndef AO_FRONT_H
#define AO_FRONT_H

#include <stdio.h>

#include "config.h"

/* Each command sets itself up with ao_tool_setup (lib/stage.h), as the
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

/* status.c: the runs in flight, from redis. */
int cmd_status(int argc, char **argv);

#endif
