/* status.c - accelopt status: the runs in flight (or the runs named) and
 * their progress, read from the stages' redis */
#include <libgen.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "exitcode.h"
#include "front.h"
#include "log.h"
#include "msg.h"
#include "redis.h"
#include "runstore.h"
#include "util.h"

#define N(a) ((int)(sizeof a / sizeof a[0]))

static const struct ao_option status_opts[] = {
    {"redis", 0, AO_OPT_STR, NULL, "URL", "the stages' redis (required)"},
    {"redis-prefix", 0, AO_OPT_STR, "accelopt:", "PREFIX", "prefix of every redis key"},
    {"json", 0, AO_OPT_BOOL, "0", NULL, "one JSON object per run instead of the table"},
    AO_COMMON_OPTIONS,
};

static double wall_s(void)
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (double)tv.tv_sec + tv.tv_usec / 1e6;
}

static cJSON *state_of(struct ao_runstore *rs, const char *run)
{
    char key[300], err[AO_ERRLEN], *text = NULL;
    cJSON *j = NULL;

    snprintf(key, sizeof key, "run:%s", run);
    if (ao_rs_hget(rs, key, "state", &text, err, sizeof err) == 1)
        j = cJSON_Parse(text);
    free(text);
    return j;
}

/* One run as a JSON object: what the table shows. */
static cJSON *row(struct ao_runstore *rs, const char *run)
{
    cJSON *st = state_of(rs, run), *o = cJSON_CreateObject();
    const cJSON *cfg = cJSON_GetObjectItemCaseSensitive(st, "config");
    const cJSON *hist = cJSON_GetObjectItemCaseSensitive(st, "history");
    const cJSON *h = cJSON_GetArrayItem(hist, cJSON_GetArraySize(hist) - 1);
    struct ao_run_usage u = ao_runstore_usage(rs, run);
    char path[512];

    cJSON_AddStringToObject(o, "run", run);
    if (!st) {
        cJSON_AddStringToObject(o, "phase", "unknown");
        return o;
    }
    snprintf(path, sizeof path, "%s", ao_json_str(st, "task_path", "?"));
    cJSON_AddStringToObject(o, "task", basename(path));
    cJSON_AddStringToObject(o, "phase", ao_json_str(st, "phase", "?"));
    cJSON_AddNumberToObject(o, "iter", ao_json_num(st, "iter", 0));
    cJSON_AddNumberToObject(o, "iters", ao_json_num(cfg, "iters", 0));
    cJSON_AddNumberToObject(o, "kernels", ao_json_num(st, "kernels", 0));
    cJSON_AddNumberToObject(o, "failures", ao_json_num(st, "failures", 0));
    cJSON_AddNumberToObject(o, "speedup", ao_json_num(h, "speedup", 1));
    cJSON_AddNumberToObject(o, "pct_of_peak", ao_json_num(h, "pct_of_peak", 0));
    cJSON_AddNumberToObject(o, "tokens", (double)(u.prompt + u.completion));
    cJSON_AddNumberToObject(o, "cost_usd", u.usd);
    cJSON_AddNumberToObject(o, "age_s", round(wall_s() - ao_json_num(st, "started", wall_s())));
    cJSON_Delete(st);
    return o;
}

int cmd_status(int argc, char **argv)
{
    struct ao_config c;
    struct ao_redis *r = NULL;
    struct ao_runstore *rs = NULL;
    cJSON *runs = NULL;
    char err[AO_ERRLEN];
    const cJSON *it;
    int code, json;

    if (front_setup(&c, status_opts, N(status_opts), argc, argv,
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
    } else if (!(runs = ao_rs_smembers(rs, "runs:active", err, sizeof err))) {
        ao_err("%s", err);
        goto out;
    }
    json = ao_config_bool(&c, "json");
    if (!json)
        printf("%-36s %-14s %-8s %5s %7s %6s %7s %6s %9s %8s %6s\n", "RUN", "TASK", "PHASE",
               "ITER", "KERNELS", "FAILED", "BEST", "%PEAK", "TOKENS", "USD", "AGE");
    cJSON_ArrayForEach(it, runs) {
        cJSON *o = row(rs, it->valuestring);
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
                   ao_json_str(o, "phase", "?"), ao_json_num(o, "iter", 0),
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
