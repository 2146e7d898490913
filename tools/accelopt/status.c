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
#include "report.h"
#include "state/runstore.h"
#include "wire/msg.h"
#include "wire/names.h"
#include "wire/stage.h"

#define N(a) ((int)(sizeof a / sizeof a[0]))

static const struct ao_option status_opts[] = {
    {"redis", 0, AO_OPT_STR, NULL, "URL", "the stages' redis (required)"},
    {"redis-prefix", 0, AO_OPT_STR, "accelopt:", "PREFIX", "prefix of every redis key"},
    {"json", 0, AO_OPT_BOOL, "0", NULL, "one JSON object per run instead of the table"},
    AO_COMMON_OPTIONS,
};

int cmd_status(int argc, char **argv)
{
    struct ao_config c;
    struct ao_redis *r = NULL;
    struct ao_runstore *rs = NULL;
    cJSON *runs = NULL;
    char err[AO_ERRLEN];
    const cJSON *it;
    int code, json;

    if (ao_tool_setup("accelopt", &c, status_opts, N(status_opts), argc, argv,
                    "accelopt status --redis URL [--json] [RUN...]", &code) < 0)
        return code;
    code = AO_EXIT_USAGE;
    if (!ao_config_str(&c, "redis")) {
        ao_err("status wants the stages' --redis (or ACCELOPT_REDIS)");
        goto out;
    }
    code = AO_EXIT_FAIL;
    if (!(r = ao_redis_new(ao_config_str(&c, "redis"), ao_config_str(&c, "redis-prefix"), err,
                           sizeof err)) ||
        !(rs = ao_runstore_redis(r))) {
        ao_err("%s", r ? "out of memory" : err);
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
    json = ao_config_bool(&c, "json");
    if (!json)
        printf("%-36s %-14s %-8s %5s %7s %6s %7s %6s %9s %8s %6s\n", "RUN", "TASK", "PHASE",
               "ITER", "KERNELS", "FAILED", "BEST", "%PEAK", "TOKENS", "USD", "AGE");
    cJSON_ArrayForEach(it, runs) {
        cJSON *o = report_run_row(rs, it->valuestring);
        if (!o)
            goto out;
        if (json) {
            char *s = cJSON_PrintUnformatted(o);
            if (s)
                printf("%s\n", s);
            cJSON_free(s);
        } else {
            printf("%-36s %-14s %-8s %2.0f/%-2.0f %7.0f %6.0f %6.2fx %5.1f%% %9.0f %8.4f %5.0fs\n",
                   ao_json_str(o, "run", "?"), ao_json_str(o, "task", "-"),
                   ao_json_str(o, "phase", "unknown"), ao_json_num(o, "iter", 0),
                   ao_json_num(o, "iters", 0), ao_json_num(o, "kernels", 0),
                   ao_json_num(o, "failures", 0), ao_json_num(o, "speedup", 1),
                   100 * ao_json_num(o, "pct_of_peak", 0), ao_json_num(o, "tokens", 0),
                   ao_json_num(o, "cost_usd", 0), ao_json_num(o, "age_s", 0));
        }
        cJSON_Delete(o);
    }
    code = AO_EXIT_OK;
out:
    cJSON_Delete(runs);
    ao_runstore_free(rs);
    ao_redis_free(r);
    ao_config_release(&c);
    return code;
}
