/* test_msg.c - every example message decodes and re-encodes to itself;
 * bad messages are refused with a reason.  With --fields, prints the C
 * field tables as JSON (tests/schemas.py checks them against schemas/). */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/util.h"
#include "wire/msg.h"
#include "wire/runconfig.h"

static void add_fields(cJSON *all, const struct ao_msg_type *ty)
{
    cJSON *req = cJSON_CreateArray(), *opt = cJSON_CreateArray(), *t = cJSON_CreateObject();
    for (int f = 0; f < ty->nfields; f++)
        cJSON_AddItemToArray(ty->fields[f].required ? req : opt, cJSON_CreateString(ty->fields[f].name));
    cJSON_AddItemToObject(t, "required", req);
    cJSON_AddItemToObject(t, "optional", opt);
    cJSON_AddItemToObject(all, ty->name, t);
}

/* the messages, and the records with a schema of their own */
static void print_fields(void)
{
    cJSON *all = cJSON_CreateObject();
    for (int i = 0; ao_msg_types[i]; i++)
        add_fields(all, ao_msg_types[i]);
    add_fields(all, &ao_rec_run_config);
    { /* and the config's bounds, for the schema's minimum and maximum */
        cJSON *b = cJSON_AddObjectToObject(cJSON_GetObjectItem(all, "config"), "bounds");
        for (int f = 0; f < ao_rec_run_config.nfields; f++) {
            double lo, hi;
            if (ao_run_config_bounds(ao_rec_run_config.fields[f].name, &lo, &hi)) {
                cJSON *p = cJSON_AddArrayToObject(b, ao_rec_run_config.fields[f].name);
                cJSON_AddItemToArray(p, cJSON_CreateNumber(lo));
                cJSON_AddItemToArray(p, cJSON_CreateNumber(hi));
            }
        }
    }
    char *s = cJSON_Print(all);
    printf("%s\n", s);
    cJSON_free(s);
    cJSON_Delete(all);
}

static void round_trip_file(const char *home, const struct ao_msg_type *t)
{
    char path[600], err[AO_ERRLEN], *text, *save = NULL;
    int n = 0;

    snprintf(path, sizeof path, "%s/schemas/examples/%s.jsonl", home, t->name);
    text = ao_read_file(path, NULL, err, sizeof err);
    CHECK(text != NULL, "examples for '%s' exist", t->name);
    if (!text)
        return;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        cJSON *in = cJSON_Parse(line), *out = NULL;
        void *msg = malloc(t->size);
        int ok = in && ao_msg_decode(t, in, msg, err, sizeof err) == 0;
        if (ok) {
            out = ao_msg_encode(t, msg);
            ok = out && cJSON_Compare(in, out, 1);
            ao_msg_release(t, msg);
        }
        CHECK(ok, "%s example %d round-trips%s%s", t->name, ++n, ok ? "" : ": ", ok ? "" : err);
        cJSON_Delete(in);
        cJSON_Delete(out);
        free(msg);
    }
    free(text);
}

/* through the stages' own path: the strict parse, then the decoder */
static void refuse_as(const struct ao_msg_type *t, const char *json, size_t len, const char *want,
                      const char *what)
{
    char err[AO_ERRLEN] = "";
    union { struct ao_result_msg r; struct ao_plan_msg p; } m;
    cJSON *j = ao_msg_parse(json, len, err, sizeof err);
    int rc = j ? ao_msg_decode(t, j, &m, err, sizeof err) : -1;
    CHECK(rc < 0 && strstr(err, want), "%s is refused: %s", what, err);
    if (rc == 0)
        ao_msg_release(t, &m);
    cJSON_Delete(j);
}

static void refuse(const char *json, const char *want, const char *what)
{
    refuse_as(&ao_msg_result, json, strlen(json), want, what);
}

int main(int argc, char **argv)
{
    const char *home = ao_home();

    if (argc > 1 && !strcmp(argv[1], "--fields")) {
        print_fields();
        return 0;
    }
    for (int i = 0; ao_msg_types[i]; i++)
        round_trip_file(home, ao_msg_types[i]);
#define ENV "\"type\":\"result\",\"v\":1,\"id\":\"x\",\"run\":\"r\",\"task\":\"t\",\"target\":\"cpu\",\"iter\":0"
    refuse("{" ENV ",\"size\":\"tiny\",\"status\":\"ok\"}", "kernel_id", "a missing required field");
    refuse("{" ENV ",\"kernel_id\":\"k\",\"size\":\"tiny\",\"status\":\"great\"}", "great",
           "a status outside the enum");
    refuse("{" ENV ",\"kernel_id\":\"k\",\"size\":\"tiny\",\"status\":\"ok\",\"latency_ns\":\"1\"}",
           "latency_ns", "a string where a number belongs");
    refuse("{" ENV ",\"kernel_id\":\"k\",\"size\":\"tiny\",\"status\":\"ok\",\"extra\":1}", "extra",
           "an unknown field");
    refuse("{" ENV ",\"kernel_id\":\"k\",\"size\":\"tiny\",\"status\":\"ok\",\"repeats\":1.5}",
           "repeats", "a fraction where an integer belongs");
    refuse("[1,2]", "not a JSON object", "an array");
    /* issue 14: what the decoder used to let through */
#define OKR ",\"kernel_id\":\"k\",\"size\":\"tiny\",\"status\":\"ok\""
    refuse("{" ENV OKR "} trailing", "trailing bytes", "trailing garbage");
    refuse("{" ENV OKR ",\"status\":\"crash\"}", "appears twice", "a duplicate key");
    refuse("{\"type\":\"result\",\"v\":999,\"id\":\"x\",\"run\":\"r\",\"task\":\"t\","
           "\"target\":\"cpu\",\"iter\":0" OKR "}", "version 999", "v: 999");
    refuse("{\"type\":\"result\",\"v\":1,\"id\":\"x\",\"run\":\"r\",\"task\":\"t\","
           "\"target\":\"cpu\",\"iter\":-3" OKR "}", "negative", "a negative iteration");
    refuse("{" ENV OKR ",\"reason\":\"cut\\u0000here\"}", "u0000", "a \\u0000 in a string");
    refuse("{" ENV OKR ",\"reason\":\"bad \xff\xfe utf8\"}", "UTF-8", "invalid UTF-8");
    refuse("{" ENV OKR ",\"reason\":\"overlong \xc0\xaf\"}", "UTF-8", "an overlong UTF-8 form");
    refuse_as(&ao_msg_result, "{" ENV OKR ",\"reason\":\"a\0b\"}", sizeof("{" ENV OKR ",\"reason\":\"a\0b\"}") - 1,
              "NUL", "a raw NUL byte");
#define PLAN "{\"type\":\"plan\",\"v\":1,\"id\":\"p\",\"run\":\"r\",\"task\":\"t\",\"target\":\"cpu\"," \
             "\"iter\":1,\"candidate_id\":\"c\",\"candidate_sha256\":\"e3\",\"index\":0,\"text\":\"t\""
    refuse_as(&ao_msg_plan, PLAN ",\"config\":{\"samples\":1.5}}", strlen(PLAN ",\"config\":{\"samples\":1.5}}"),
              "whole number", "a config value 1.5 where a whole number belongs");
    refuse_as(&ao_msg_plan, PLAN ",\"config\":{\"samples\":\"4\"}}", strlen(PLAN ",\"config\":{\"samples\":\"4\"}}"),
              "whole number", "a config value \"4\" (a string)");
    refuse_as(&ao_msg_plan, PLAN ",\"config\":{\"a\":1,\"a\":2}}", strlen(PLAN ",\"config\":{\"a\":1,\"a\":2}}"),
              "appears twice", "a duplicate key inside config");
    /* issue 27: the config is one record (wire/runconfig.h, schemas/config.json) */
#define CFG(x) PLAN ",\"config\":" x "}"
    refuse_as(&ao_msg_plan, CFG("{\"beams\":2}"), strlen(CFG("{\"beams\":2}")), "unknown field 'beams'",
              "a config key that is none of the run's settings (a typo is not ignored)");
    refuse_as(&ao_msg_plan, CFG("{\"beam\":0}"), strlen(CFG("{\"beam\":0}")), "from 1 to 64",
              "a beam of 0: out of its bounds");
    refuse_as(&ao_msg_plan, CFG("{\"slot_deadline_s\":0.05}"), strlen(CFG("{\"slot_deadline_s\":0.05}")),
              "from 0.1", "a slot deadline under 0.1 s");
    refuse_as(&ao_msg_plan, CFG("{\"plan_mode\":\"greedy\"}"), strlen(CFG("{\"plan_mode\":\"greedy\"}")),
              "unknown value 'greedy'", "a plan mode that is neither distinct nor independent");
    refuse_as(&ao_msg_plan, CFG("[1]"), strlen(CFG("[1]")), "config must be an object", "a config that is an array");
    /* issue 29: a run names models, never a server: a URL or a header's
     * text cannot pass for a name, nor a role that does not exist */
    refuse_as(&ao_msg_plan, CFG("{\"models\":{\"planner\":\"http://evil.example/v1 x\"}}"),
              strlen(CFG("{\"models\":{\"planner\":\"http://evil.example/v1 x\"}}")), "must be a model name",
              "a model 'name' with a space in it (a URL and more)");
    refuse_as(&ao_msg_plan, CFG("{\"models\":{\"planner\":\"m\\r\\nAuthorization: x\"}}"),
              strlen(CFG("{\"models\":{\"planner\":\"m\\r\\nAuthorization: x\"}}")), "must be a model name",
              "a model name with a header after a line break");
    refuse_as(&ao_msg_plan, CFG("{\"models\":{\"fixer\":\"m\"}}"), strlen(CFG("{\"models\":{\"fixer\":\"m\"}}")),
              "not 'fixer'", "a model for a role that does not exist");
    refuse_as(&ao_msg_plan, CFG("{\"models\":\"m\"}"), strlen(CFG("{\"models\":\"m\"}")),
              "must be an object", "models that are not an object of roles");
    {
        struct ao_run_config c;
        char err[AO_ERRLEN] = "";
        cJSON *j = cJSON_Parse("{\"models\":{\"planner\":\"meta-llama/Llama-3.1-70B-Instruct\","
                               "\"summarizer\":\"qwen2.5:7b\"}}");
        CHECK(ao_run_config_decode(j, &c, err, sizeof err) == 0 &&
                  !strcmp(ao_run_config_model(&c, "planner"), "meta-llama/Llama-3.1-70B-Instruct") &&
                  !strcmp(ao_run_config_model(&c, "summarizer"), "qwen2.5:7b") &&
                  !ao_run_config_model(&c, "executor"),
              "a run's models by role, real names with / . : and -, and none for a role not named %s", err);
        ao_run_config_release(&c);
        cJSON_Delete(j);
    }
    {
        /* and the escaped backslash before u0000 is plain text, accepted */
        const char *ok = "{" ENV OKR ",\"reason\":\"a\\\\u0000 b \u00e9\"}";
        char err[AO_ERRLEN] = "";
        cJSON *j = ao_msg_parse(ok, strlen(ok), err, sizeof err);
        CHECK(j != NULL, "an escaped backslash before 'u0000' and valid UTF-8 pass: %s", err);
        cJSON_Delete(j);
    }
    {
        char err[AO_ERRLEN];
        struct ao_kernel_msg k;
        cJSON *j = cJSON_Parse("{\"type\":\"result\",\"v\":1,\"id\":\"x\",\"run\":\"r\",\"task\":\"t\","
                               "\"target\":\"cpu\",\"iter\":0,\"size\":\"tiny\"}");
        CHECK(ao_msg_decode(&ao_msg_kernel, j, &k, err, sizeof err) < 0 && strstr(err, "'kernel'"),
              "a message of another type is refused: %s", err);
        cJSON_Delete(j);
    }
    return CHECK_DONE();
}
