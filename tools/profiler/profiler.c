/* profiler.c - accelopt-profiler: kernel messages in, one result each out */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "exitcode.h"
#include "io.h"
#include "log.h"
#include "msg.h"
#include "profstage.h"
#include "signals.h"
#include "util.h"
#include "version.h"

static const struct ao_option options[] = {
    AO_PROFILER_OPTIONS,
    {"dlq", 0, AO_OPT_STR, NULL, "FILE", "pipe mode: append dead letters to FILE (default stderr)"},
    AO_COMMON_OPTIONS,
};
#define NOPTS ((int)(sizeof options / sizeof options[0]))

/* One kernel message: decode, profile, emit its result. */
static int process(void *ctx, struct ao_io *io, const cJSON *msg, char *reason, size_t len)
{
    struct ao_profstage *st = ctx;
    struct ao_kernel_msg k;
    struct ao_result_msg r;
    cJSON *out = NULL;
    int rc = -1;

    ao_msg_init(&ao_msg_result, &r);
    if (ao_msg_decode(&ao_msg_kernel, msg, &k, reason, len) < 0)
        return -1;
    if (ao_profstage_kernel(st, &k, &r, reason, len) < 0)
        goto out;
    ao_info("%s: %s%s%s", k.env.id, r.status, r.reason ? ": " : "", r.reason ? r.reason : "");
    if (!(out = ao_msg_encode(&ao_msg_result, &r))) {
        snprintf(reason, len, "out of memory encoding the result");
        goto out;
    }
    rc = ao_io_emit_json(io, "accelopt.results", r.env.run, out);
out:
    cJSON_Delete(out);
    ao_msg_release(&ao_msg_kernel, &k);
    ao_msg_release(&ao_msg_result, &r);
    return rc;
}

int main(int argc, char **argv)
{
    struct ao_config cfg;
    struct ao_profstage_opts po;
    struct ao_profstage *st = NULL;
    struct ao_io *io = NULL;
    FILE *dlq = NULL;
    char err[AO_ERRLEN];
    int code = AO_EXIT_FAIL;

    ao_log_init("accelopt-profiler");
    if (ao_config_load(&cfg, options, NOPTS, argc, argv, err, sizeof err) < 0 ||
        ao_profstage_opts_from_config(&cfg, &po, err, sizeof err) < 0) {
        ao_err("%s", err);
        code = AO_EXIT_USAGE;
        goto out;
    }
    if (ao_config_bool(&cfg, "help")) {
        ao_config_usage(stdout, "accelopt-profiler [options] < kernels.jsonl > results.jsonl",
                        options, NOPTS);
        code = AO_EXIT_OK;
        goto out;
    }
    if (ao_config_bool(&cfg, "version")) {
        printf("accelopt-profiler %s\n", AO_VERSION);
        code = AO_EXIT_OK;
        goto out;
    }
    {
        enum ao_log_level lv;
        if (ao_log_level_parse(ao_config_str(&cfg, "log"), &lv) == 0)
            ao_log_set_level(lv);
    }
    if (cfg.nargs > 0) {
        ao_err("unexpected argument '%s' (kernels come on stdin)", cfg.args[0]);
        code = AO_EXIT_USAGE;
        goto out;
    }
    if (ao_config_str(&cfg, "dlq") && !(dlq = fopen(ao_config_str(&cfg, "dlq"), "a"))) {
        ao_err("cannot open dead-letter file '%s'", ao_config_str(&cfg, "dlq"));
        code = AO_EXIT_USAGE;
        goto out;
    }
    ao_signals_install();
    if (!(st = ao_profstage_new(&po, err, sizeof err))) {
        ao_err("%s", err);
        goto out;
    }
    if (!(io = ao_io_stdio_new("profiler", stdin, stdout, dlq))) {
        ao_err("out of memory");
        goto out;
    }
    if (ao_io_run(io, process, st) < 0) {
        ao_err("%s", io->err);
        goto out;
    }
    ao_info("%lld kernels in, %lld results out, %lld dead letters", io->in, io->out, io->dead);
    code = AO_EXIT_OK;
out:
    ao_io_free(io);
    ao_profstage_free(st);
    if (dlq)
        fclose(dlq);
    ao_config_release(&cfg);
    if (fclose(stdout) != 0 && code == AO_EXIT_OK)
        code = AO_EXIT_FAIL;
    return code;
}
