/* stage.c - the common start and end of every stage's main */
#include <stdlib.h>
#include <string.h>

#include "core/exitcode.h"
#include "core/log.h"
#include "core/rc.h"
#include "core/redis.h"
#include "core/signals.h"
#include "core/util.h"
#include "core/version.h"
#include "wire/attempts.h"
#include "wire/once.h"
#include "wire/kafka.h"
#include "wire/names.h"
#include "wire/stage.h"

int ao_tool_setup(const char *tool, struct ao_config *c, const struct ao_option *opts, int n,
                  int argc, char **argv, const char *synopsis, int *code)
{
    char err[AO_ERRLEN];
    enum ao_log_level lv;

    if (ao_config_load(c, opts, n, argc, argv, err, sizeof err) < 0) {
        ao_err("%s", err);
        *code = AO_EXIT_USAGE;
        return -1;
    }
    if (ao_config_bool(c, "help")) {
        ao_config_usage(stdout, synopsis, opts, n);
        *code = AO_EXIT_OK;
        return -1;
    }
    if (ao_config_bool(c, "version")) {
        printf("%s %s\n", tool, AO_VERSION);
        *code = AO_EXIT_OK;
        return -1;
    }
    if (ao_log_level_parse(ao_config_str(c, "log"), &lv) == 0)
        ao_log_set_level(lv);
    if (ao_dirs_check(err, sizeof err) < 0) { /* a setting: every path under them would be refused */
        ao_err("%s", err);
        *code = AO_EXIT_USAGE;
        return -1;
    }
    for (int i = 0; i < n; i++) /* every tool that talks to brokers: a list that cannot work is a usage error */
        if ((strcmp(opts[i].name, "brokers") == 0 && ao_config_str(c, "brokers") &&
             ao_kafka_brokers_check(ao_config_str(c, "brokers"), err, sizeof err) < 0) ||
            (strcmp(opts[i].name, "topic-prefix") == 0 &&
             ao_kafka_prefix_check(ao_config_str(c, "topic-prefix"), err, sizeof err) < 0)) {
            ao_err("%s", err);
            *code = AO_EXIT_USAGE;
            return -1;
        }
    return 0;
}

int ao_stage_open(struct ao_stage *s, const char *tool, const char *synopsis,
                  const struct ao_option *opts, int nopts, const char *const *topics, int argc,
                  char **argv, int *code)
{
    char err[AO_ERRLEN], group[128];
    int rc;
    const char *brokers;
    const char *dlq;

    memset(s, 0, sizeof *s);
    s->tool = tool;
    s->name = strchr(tool, '-') ? strchr(tool, '-') + 1 : tool;
    ao_log_init(tool);
    *code = AO_EXIT_USAGE;
    if (ao_tool_setup(tool, &s->cfg, opts, nopts, argc, argv, synopsis, code) < 0)
        return 0;
    *code = AO_EXIT_USAGE;
    if (s->cfg.nargs > 0) {
        ao_err("unexpected argument '%s' (messages come on stdin)", s->cfg.args[0]);
        return 0;
    }
    ao_signals_install();
    if (topics && topics[0] && strstr(topics[0], "{target}")) {
        /* a topic per target: the stage's --target names it (whether this
         * build has that target is the stage's own check, before it reads) */
        const char *t = ao_config_str(&s->cfg, "target"), *def = NULL;
        for (int i = 0; i < nopts; i++)
            if (strcmp(opts[i].name, "target") == 0)
                def = opts[i].def;
        if (!t || !t[0] || strspn(t, "abcdefghijklmnopqrstuvwxyz0123456789_-") != strlen(t)) {
            ao_err("--target '%.40s' is not a target's name", t ? t : "");
            return 0;
        }
        if (ao_name(s->topic, sizeof s->topic, "%.*s%s", (int)(strstr(topics[0], "{target}") - topics[0]),
                    topics[0], t) < 0) {
            ao_err("no topic for target '%.40s'", t);
            return 0;
        }
        s->topics[0] = s->topic;
        s->topics[1] = NULL;
        topics = s->topics;
        /* one consumer group per target, so that a cuda profiler and a cpu
         * one never share (or rebalance) each other's partitions; the
         * default target keeps the plain name */
        if (!def || strcmp(t, def) != 0)
            (void)!ao_name(s->group, sizeof s->group, "accelopt-%s-%s", s->name, t); /* too long: no group */
    }
    if ((brokers = ao_config_str(&s->cfg, "brokers"))) {
        if (s->group[0])
            snprintf(group, sizeof group, "%s", s->group);
        else
            snprintf(group, sizeof group, "accelopt-%s", s->name);
        struct ao_kafka_site site = ao_kafka_site_of(&s->cfg);
        site.instance = ao_config_str(&s->cfg, "instance");
        if (!(s->io = ao_io_kafka_new(s->name, &site,
                                      ao_config_str(&s->cfg, "group") ? ao_config_str(&s->cfg, "group")
                                                                      : group,
                                      topics, err, sizeof err))) {
            ao_err("%s", err);
            return 0;
        }
        if (ao_config_int(&s->cfg, "max-attempts") < 1) {
            ao_err("--max-attempts must be at least 1");
            return 0;
        }
        if (ao_config_str(&s->cfg, "redis")) {
            const char *g = ao_config_str(&s->cfg, "group") ? ao_config_str(&s->cfg, "group") : group;
            if (!(s->guard_redis = ao_redis_new(ao_config_str(&s->cfg, "redis"),
                                                ao_config_str(&s->cfg, "redis-prefix"), err,
                                                sizeof err))) {
                ao_err("%s", err);
                *code = AO_EXIT_FAIL;
                return 0;
            }
            if (ao_attempts_guard(s->io, s->guard_redis, g, ao_config_int(&s->cfg, "max-attempts")) < 0) {
                ao_err("--group '%.60s' is too long for its attempts key", g);
                *code = AO_EXIT_USAGE;
                return 0;
            }
            ao_once_guard(s->io, s->guard_redis, s->name);
            /* the embedded broker's doorbell: an idle stage stops fetching */
            if (ao_io_kafka_bell(s->io, ao_config_str(&s->cfg, "redis"), ao_config_str(&s->cfg, "redis-prefix"),
                                 s->guard_redis, ao_config_bool(&s->cfg, "doorbell"), err, sizeof err) < 0)
                ao_warn("no doorbell (%s): fetching all the time", err);
        } else {
            ao_warn("no --redis: an input that kills this stage is not counted, and comes again "
                    "after every restart");
        }
        ao_info("consuming '%s' from %s", topics[0], brokers);
    } else {
        if ((dlq = ao_config_str(&s->cfg, "dlq")) && !(s->dlq = fopen(dlq, "a"))) {
            ao_err("cannot open dead-letter file '%s'", dlq);
            return 0;
        }
        s->io = ao_io_stdio_new(s->name, stdin, stdout, s->dlq);
    }
    /* every message out is signed; on a broker, every message in must be */
    if ((rc = ao_io_set_key(s->io, brokers != NULL, err, sizeof err)) < 0) {
        ao_err("%s", err);
        *code = ao_exit_for(rc); /* an unsafe place or key: a setting */
        return 0;
    }
    *code = AO_EXIT_OK;
    return 1;
}

int ao_stage_close(struct ao_stage *s, int code)
{
    ao_io_free(s->io);
    s->io = NULL;
    ao_redis_free(s->guard_redis);
    s->guard_redis = NULL;
    if (s->dlq)
        fclose(s->dlq);
    s->dlq = NULL;
    ao_config_release(&s->cfg);
    if (fclose(stdout) != 0 && code == AO_EXIT_OK)
        code = AO_EXIT_FAIL;
    return code;
}

int ao_stage_run(struct ao_stage *s, ao_process_fn process, void *ctx, const char *what_in,
                 const char *what_out)
{
    int code = AO_EXIT_OK;

    int rc = s->loop ? s->loop(s->io, process, s->tick, ctx, s->calls) : ao_io_run_ticking(s->io, process, s->tick, ctx);

    if (rc < 0 && !ao_stop_requested()) {
        ao_err("%s", s->io->err);
        code = AO_EXIT_FAIL;
    } else {
        if (s->io->err[0]) /* stopped with a message in hand: it was not committed */
            ao_info("stopped: %s", s->io->err);
        ao_info("%lld %s in, %lld %s out, %lld dead letters", s->io->in, what_in, s->io->out,
                what_out, s->io->dead);
    }
    return ao_stage_close(s, code);
}
