/* status.c - accelopt status: the runs in flight (or the runs named) and
 * their progress, read from the stages' redis */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/exitcode.h"
#include "core/log.h"
#include "core/redis.h"
#include "core/util.h"
#include "front.h"
#include "localruns.h"
#include "report.h"
#include "state/runstore.h"
#include "wire/msg.h"
#include "wire/names.h"
#include "wire/stage.h"

#define N(a) ((int)(sizeof a / sizeof a[0]))

static const struct ao_option status_opts[] = {
    {"redis", 0, AO_OPT_STR, NULL, "URL",
     "the stages' redis (default: the runs that accelopt run has in flight on this machine)"},
    {"redis-prefix", 0, AO_OPT_STR, "accelopt:", "PREFIX", "prefix of every redis key"},
    {"json", 0, AO_OPT_BOOL, "0", NULL, "one JSON object per run instead of the table"},
    AO_COMMON_OPTIONS,
};

/* Is run one of those asked for (all when none is named)?  A name is a
 * task's run id or the id of the accelopt run that holds it. */
static int asked(const struct ao_config *c, const char *run, const char *local_id)
{
    for (int i = 0; i < c->nargs; i++)
        if (strcmp(c->args[i], run) == 0 || (local_id && strcmp(c->args[i], local_id) == 0))
            return 1;
    return c->nargs == 0;
}

/* One row per run: a table, or JSON Lines.  0, or -1 (a row that does not print). */
static int show_rows(struct ao_runstore *rs, const cJSON *runs, const struct ao_config *c, const char *local_id,
                     int *shown)
{
    const cJSON *it;

    cJSON_ArrayForEach(it, runs) {
        cJSON *o;
        if (!cJSON_IsString(it) || !asked(c, it->valuestring, local_id))
            continue;
        if (!(o = report_run_row(rs, it->valuestring)))
            return -1;
        if (ao_config_bool(c, "json")) {
            char *s = cJSON_PrintUnformatted(o);
            if (s)
                printf("%s\n", s);
            cJSON_free(s);
        } else {
            char calls[200];
            report_calls_text(o, calls, sizeof calls);
            if (!(*shown)++)
                printf("%-36s %-14s %-8s %5s %7s %6s %7s %6s %9s %8s %6s  %s\n", "RUN", "TASK", "PHASE",
                       "ITER", "KERNELS", "FAILED", "BEST", "%PEAK", "TOKENS", "USD", "AGE", "MODEL CALLS");
            printf("%-36s %-14s %-8s %2.0f/%-2.0f %7.0f %6.0f %6.2fx %5.1f%% %9.0f %8.4f %5.0fs  %s\n",
                   ao_json_str(o, "run", "?"), ao_json_str(o, "task", "-"),
                   ao_json_str(o, "phase", "starting"), ao_json_num(o, "iter", 0),
                   ao_json_num(o, "iters", 0), ao_json_num(o, "kernels", 0),
                   ao_json_num(o, "failures", 0), ao_json_num(o, "speedup", 1),
                   100 * ao_json_num(o, "pct_of_peak", 0), ao_json_num(o, "tokens", 0),
                   ao_json_num(o, "cost_usd", 0), ao_json_num(o, "age_s", 0), calls[0] ? calls + 11 : "-");
        }
        cJSON_Delete(o);
    }
    return 0;
}

/* No --redis: the runs accelopt run has in flight here, each from its own
 * (private) redis, found in the state dir (localruns.h). */
static int status_local(const struct ao_config *c)
{
    cJSON *regs = localruns_live();
    const cJSON *g;
    int shown = 0, code = AO_EXIT_OK;

    if (!regs)
        return AO_EXIT_FAIL;
    cJSON_ArrayForEach(g, regs) {
        char err[AO_ERRLEN];
        struct ao_redis *r = ao_redis_new(ao_json_str(g, "redis", ""), ao_json_str(g, "prefix", "accelopt:"),
                                          err, sizeof err);
        struct ao_runstore *rs = r ? ao_runstore_redis(r) : NULL;
        if (!rs) /* it ended between the look and the call */
            ao_debug("run %s: %s", ao_json_str(g, "id", "?"), err);
        else if (show_rows(rs, cJSON_GetObjectItemCaseSensitive(g, "runs"), c, ao_json_str(g, "id", NULL),
                           &shown) < 0)
            code = AO_EXIT_FAIL;
        ao_runstore_free(rs);
        ao_redis_free(r);
    }
    cJSON_Delete(regs);
    if (!shown && code == AO_EXIT_OK && !ao_config_bool(c, "json"))
        printf(c->nargs ? "none of the runs named is in flight on this machine (a finished run's results "
                          "are in its directory; a deployment's runs: --redis URL)\n"
                        : "no run of yours is in flight on this machine (a deployment's runs: --redis URL)\n");
    return code;
}

int cmd_status(int argc, char **argv)
{
    struct ao_config c;
    struct ao_redis *r = NULL;
    struct ao_runstore *rs = NULL;
    cJSON *runs = NULL;
    char err[AO_ERRLEN];
    int code, shown = 0;

    if (ao_tool_setup("accelopt", &c, status_opts, N(status_opts), argc, argv,
                    "accelopt status [--redis URL] [--json] [RUN...]", &code) < 0)
        return code;
    if (!ao_config_str(&c, "redis")) {
        code = status_local(&c);
        goto out;
    }
    code = AO_EXIT_FAIL;
    if (!(r = ao_redis_new(ao_config_str(&c, "redis"), ao_config_str(&c, "redis-prefix"), err,
                           sizeof err)) ||
        !(rs = ao_runstore_redis(r))) {
        ao_err("%s", err);
        goto out;
    }
    if (c.nargs) { /* the runs named, finished ones too */
        runs = cJSON_CreateArray();
        for (int i = 0; runs && i < c.nargs; i++)
            cJSON_AddItemToArray(runs, cJSON_CreateString(c.args[i]));
    } else if (!(runs = ao_rs_smembers(rs, AO_KEY_ACTIVE, err, sizeof err))) {
        ao_err("%s", err);
        goto out;
    }
    if (!runs || show_rows(rs, runs, &c, NULL, &shown) < 0)
        goto out;
    if (!shown && !ao_config_bool(&c, "json"))
        printf("no run in flight in this redis\n");
    code = AO_EXIT_OK;
out:
    cJSON_Delete(runs);
    ao_runstore_free(rs);
    ao_redis_free(r);
    ao_config_release(&c);
    return code;
}
