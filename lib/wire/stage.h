/* stage.h - what every stage's main does before its loop: options, --help,
 * --version, the log level, the dead-letter file, the pipe transport */
#ifndef AO_STAGE_H
#define AO_STAGE_H

#include <stdio.h>

#include "core/config.h"
#include "wire/io.h"
#include "wire/kafka.h"

/* The options of every stage; put before AO_COMMON_OPTIONS. */
#define AO_STAGE_OPTIONS                                                                        \
    {"brokers", 0, AO_OPT_STR, NULL, "HOST:PORT", "Kafka mode: bootstrap brokers (unset: stdin/stdout)"}, \
    AO_TOPIC_PREFIX_OPTION,                                                                     \
    {"group", 0, AO_OPT_STR, NULL, "ID", "Kafka consumer group (default: accelopt-<stage>)"},   \
    {"instance", 0, AO_OPT_STR, NULL, "ID", "a static member of its group, ID unique in it: restarted, " \
     "it takes back its partitions at once (a real Kafka cluster)"},                              \
    {"kafka", 'X', AO_OPT_LIST, NULL, "KEY=VALUE", "a librdkafka setting (repeatable; TLS, SASL...)"}, \
    AO_KAFKA_FILE_OPTION,                                                                       \
    {"dlq", 0, AO_OPT_STR, NULL, "FILE", "pipe mode: append dead letters to FILE (default stderr)"}, \
    {"max-attempts", 0, AO_OPT_INT, "5", "N", "Kafka mode with --redis: an input in hand at N deaths of the stage goes to the dead letters"}, \
    {"doorbell", 0, AO_OPT_BOOL, NULL, NULL, "the embedded broker with --redis: idle a second, stop fetching until a producer " \
     "rings (a first message then waits up to a second; accelopt run sets it where a model server answers)"}

struct ao_stage {
    const char *tool;  /* "accelopt-planner" */
    const char *name;  /* "planner": the dead letters' stage */
    struct ao_config cfg;
    FILE *dlq;
    struct ao_io *io;
    struct ao_redis *guard_redis; /* the attempt counts (attempts.h) */
    ao_tick_fn tick;   /* set before ao_stage_run for work due by the clock */
    /* set before ao_stage_run for another loop than ao_io_run_ticking:
     * one with up to `calls` messages in hand (agents/flight.h) */
    int (*loop)(struct ao_io *io, ao_process_fn process, ao_tick_fn tick, void *ctx, int calls);
    int calls;
    char topic[128];   /* a "{target}" topic, named for the stage's --target */
    char group[128];   /* the default consumer group of a stage for another target */
    const char *topics[2];
};

/* What every tool does first, the front's commands and the stages alike:
 * load the options (argv, environment, config file), handle --help and
 * --version, set the log level.  0 to go on; -1 to exit with *code (0
 * after help or version, 2 after a reported usage error). */
int ao_tool_setup(const char *tool, struct ao_config *c, const struct ao_option *opts, int n,
                  int argc, char **argv, const char *synopsis, int *code);

/* ao_tool_setup, then open
 * the transport (Kafka on `topics`, a NULL-terminated list, with --brokers;
 * a single topic holding "{target}" is named for the --target option;
 * else stdin/stdout and the dead-letter file); install the signals.
 * Returns 1 to go on, or 0 with *code set (help shown, or a usage error
 * reported) to exit. */
int ao_stage_open(struct ao_stage *s, const char *tool, const char *synopsis,
                  const struct ao_option *opts, int nopts, const char *const *topics, int argc,
                  char **argv, int *code);

/* Run the loop, report the counts, release everything; returns the exit code. */
int ao_stage_run(struct ao_stage *s, ao_process_fn process, void *ctx, const char *what_in,
                 const char *what_out);

/* Release (for a failure between open and run); returns code. */
int ao_stage_close(struct ao_stage *s, int code);

#endif
