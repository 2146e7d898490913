/* agent.c - the model, Redis, budget, prompts and problem of an agent stage */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <curl/curl.h>
#include <hiredis/hiredis.h>

#include "agents/agent.h"
#include "agents/flight.h"
#include "agents/gate.h"
#include "agents/machine.h"
#include "core/alloc.h"
#include "core/exitcode.h"
#include "core/log.h"
#include "core/rc.h"
#include "core/signals.h"
#include "core/task.h"
#include "core/util.h"
#include "measure/calib.h"
#include "state/memfold.h"
#include "state/memory.h"
#include "targets/target.h"
#include "wire/msg.h"
#include "wire/names.h"
#include "wire/runconfig.h"

/* What this role serves, for accelopt submit to check a run's models
 * against before it sends the run (the stages check each call anyway):
 * models:<role> = "own,other,...".  Replicas of a role share their
 * settings; the last to start says it. */
static void say_models(struct ao_agent *a)
{
    char key[AO_KEY_MAX], val[1200], e[AO_ERRLEN];
    const char *argv[3] = {"SET", key, val};
    redisReply *r;

    snprintf(val, sizeof val, "%s%s%s", a->conf.model, a->conf.models ? "," : "",
             a->conf.models ? a->conf.models : "");
    if (!ao_redis_key(a->redis, key, sizeof key, AO_KEY_MODELS, a->role))
        return;
    if ((r = ao_redis_argv(a->redis, 3, argv, NULL, e, sizeof e)))
        freeReplyObject(r);
    else
        ao_warn("cannot say which models this %s serves: %s", a->role, e);
}

int ao_agent_init(struct ao_agent *a, const struct ao_config *c, const char *role, int *usage,
                  char *err, size_t errlen)
{
    const char *url = ao_config_str(c, "redis");

    memset(a, 0, sizeof *a);
    *usage = 1;
    if (ao_llm_conf_from_config(c, role, &a->conf, err, errlen) < 0)
        return -1;
    a->prompts = ao_config_str(c, "prompts");
    a->size = ao_config_str(c, "size");
    a->machine_path = ao_config_str(c, "machine");
    a->role = role;
    a->model = a->conf.builtin ? &ao_model_builtin : &ao_model_llm;
    *usage = 0;
    /* from the main thread only (libcurl's global set-up is not thread
     * safe): a planner makes its wave helpers' agents there too */
    if (!a->conf.builtin && curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        snprintf(err, errlen, "cannot initialise libcurl");
        goto fail;
    }
    if (!a->conf.builtin && !(a->llm = ao_llm_new(&a->conf, err, errlen)))
        goto fail;
    if (url && !(a->redis = ao_redis_new(url, ao_config_str(c, "redis-prefix"), err, errlen)))
        goto fail;
    /* the calls in flight to the server, counted with every stage that
     * shares the redis; a lease outlives the longest call (timeout, retries
     * aside), so a holder that died frees its slot */
    if (a->llm && a->redis) {
        if (!(a->gate = ao_gate_new(a->redis, a->conf.url, a->conf.concurrency, a->conf.timeout_s + 30,
                                    strcmp(role, "executor") != 0, err, errlen)))
            goto fail;
        ao_llm_set_gate(a->llm, a->gate);
    }
    a->book = ao_budget_book_new(a->redis);
    ao_info("%s model: %s%s%s%s%s", role, a->conf.model, a->conf.url ? " at " : "",
            a->conf.url ? a->conf.url : "", a->conf.models ? "; a run may name " : "",
            a->conf.models ? a->conf.models : "");
    if (a->redis)
        say_models(a);
    return 0;
fail:
    ao_agent_release(a);
    return -1;
}

const char *ao_agent_machine(struct ao_agent *a, const char *target)
{
    char e[AO_ERRLEN];

    if (a->machine && strcmp(a->machine_target, target) == 0)
        return a->machine;
    free(a->machine);
    snprintf(a->machine_target, sizeof a->machine_target, "%s", target);
    if (!(a->machine = ao_machine_text(target, a->machine_path, e, sizeof e))) {
        ao_warn("the prompts go without the machine's description: %s", e);
        a->machine = ao_strdup("");
    }
    for (size_t n = a->machine ? strlen(a->machine) : 0; n > 0 && strchr(" \n\r\t", a->machine[n - 1]); n--)
        a->machine[n - 1] = '\0'; /* the template says where lines break */
    return a->machine ? a->machine : "";
}

void ao_agent_release(struct ao_agent *a)
{
    free(a->machine);
    a->machine = NULL;
    if (a->total.calls)
        ao_info("%d model calls (%d attempts), %lld prompt and %lld completion tokens, $%.4f",
                a->total.calls, a->total.attempts, a->total.prompt, a->total.completion,
                a->total.cost_usd);
    if (a->gate && ao_gate_waited_s(a->gate) > 0)
        ao_info("%.1f s waited for a free model call (--model-concurrency %d)", ao_gate_waited_s(a->gate),
                a->conf.concurrency);
    ao_gate_free(a->gate);
    if (a->llm) {
        ao_llm_free(a->llm);
        curl_global_cleanup();
    }
    ao_redis_free(a->redis);
    ao_budget_book_free(a->book);
    ao_llm_conf_release(&a->conf);
    memset(a, 0, sizeof *a);
}

int ao_agent_run(struct ao_stage *s, struct ao_agent *a, const char *role, ao_process_fn process,
                 void *ctx, const char *what_in, const char *what_out)
{
    char err[AO_ERRLEN];
    int usage, code;

    if (ao_agent_init(a, &s->cfg, role, &usage, err, sizeof err) < 0) {
        ao_err("%s", err);
        return ao_stage_close(s, usage ? AO_EXIT_USAGE : AO_EXIT_FAIL);
    }
    if (ao_config_int(&s->cfg, "calls") < 1 || ao_config_int(&s->cfg, "calls") > AO_FLIGHT_CALLS_MAX) {
        ao_err("--calls must be 1 to %d", AO_FLIGHT_CALLS_MAX);
        ao_agent_release(a);
        return ao_stage_close(s, AO_EXIT_USAGE);
    }
    s->loop = ao_flight_run;
    s->calls = (int)ao_config_int(&s->cfg, "calls");
    code = ao_stage_run(s, process, ctx, what_in, what_out);
    ao_agent_release(a);
    return code;
}

int ao_agent_prompts(const struct ao_agent *a, const char *target, const struct ao_prompt_var *v,
                     int n, char **system, char **user, char *err, size_t errlen)
{
    return ao_agent_prompts_as(a, a->conf.role, target, v, n, system, user, err, errlen);
}

int ao_agent_prompts_as(const struct ao_agent *a, const char *name, const char *target,
                        const struct ao_prompt_var *v, int n, char **system, char **user,
                        char *err, size_t errlen)
{
    char *ts = NULL, *tu = NULL;
    unsigned long long used = 0;
    int rc = -1;

    *system = *user = NULL;
    if (!(ts = ao_prompt_load(a->prompts, target, name, "system", err, errlen)) ||
        !(tu = ao_prompt_load(a->prompts, target, name, "user", err, errlen)) ||
        !(*system = ao_prompt_render(ts, v, n, &used, err, errlen)) ||
        !(*user = ao_prompt_render(tu, v, n, &used, err, errlen)))
        goto out;
    for (int i = 0; i < n; i++)
        if (!(used >> i & 1)) {
            snprintf(err, errlen, "the %s prompts for '%s' never show {{%s}}", name, target,
                     v[i].name);
            goto out;
        }
    rc = 0;
out:
    if (rc < 0) {
        free(*system);
        free(*user);
        *system = *user = NULL;
    }
    free(ts);
    free(tu);
    return rc;
}

/* A failed model call, kept in the run's store (the reason is key-free),
 * so that accelopt run can say it on the terminal once, not per call. */
static void note_failure(struct ao_agent *a, const char *run, const char *reason)
{
    char key[AO_REDIS_KEY_MAX], n[32], e[AO_ERRLEN];
    const char *set[] = {"HSET", key, a->role, reason}, *inc[] = {"HINCRBY", key, n, "1"};
    struct redisReply *r;

    if (!a->redis || !ao_redis_key(a->redis, key, sizeof key, AO_KEY_MODEL_ERRORS, run))
        return;
    snprintf(n, sizeof n, "%s:n", a->role);
    if ((r = ao_redis_argv(a->redis, 4, set, NULL, e, sizeof e)))
        freeReplyObject(r);
    if ((r = ao_redis_argv(a->redis, 4, inc, NULL, e, sizeof e)))
        freeReplyObject(r);
}

/* An attempt that failed and is tried again: kept beside the failures
 * (field <role>:retry), so that accelopt run says the first one on the
 * terminal as it happens, not when every attempt has failed. */
struct retry_note {
    struct ao_agent *a;
    const char *run;
};

static void note_retry(void *ctx, const char *what)
{
    const struct retry_note *rn = ctx;
    char key[AO_REDIS_KEY_MAX], field[32], e[AO_ERRLEN];
    const char *set[] = {"HSET", key, field, what};
    struct redisReply *r;

    if (!rn->a->redis || !ao_redis_key(rn->a->redis, key, sizeof key, AO_KEY_MODEL_ERRORS, rn->run))
        return;
    snprintf(field, sizeof field, "%s:retry", rn->a->role);
    if ((r = ao_redis_argv(rn->a->redis, 4, set, NULL, e, sizeof e)))
        freeReplyObject(r);
}

int ao_agent_model_for(const struct ao_agent *a, const cJSON *config, char *model, size_t mlen,
                       char *reason, size_t len)
{
    struct ao_run_config c;
    const char *m;
    char e[AO_ERRLEN];

    model[0] = '\0';
    if (ao_run_config_decode(config, &c, e, sizeof e) < 0)
        return ao_errf(reason, len, "the run's %s", e);
    m = ao_run_config_model(&c, a->role);
    if (m && !ao_llm_conf_serves(&a->conf, m))
        ao_errf(reason, len, "the run names the %s model '%s', which this %s does not serve "
                "(it serves %s%s%s; an operator adds models with --llm-models)", a->role, m, a->role,
                a->conf.model, a->conf.models ? "," : "", a->conf.models ? a->conf.models : "");
    else if (m)
        snprintf(model, mlen, "%s", m);
    ao_run_config_release(&c);
    return m && !model[0] ? -1 : 0;
}

int ao_agent_call(struct ao_agent *a, const char *run, long long iter, const cJSON *config,
                  const char *system,
                  const char *user, char **reply, struct ao_llm_usage *u, char *reason,
                  size_t len)
{
    struct ao_llm_usage call = {0};
    struct ao_budget b;
    struct ao_budget_hold hold;
    char e[AO_ERRLEN], model[160];
    int rc, spent;

    *reply = NULL;
    if (ao_agent_model_for(a, config, model, sizeof model, reason, len) < 0) {
        note_failure(a, run, reason);
        return -1;
    }
    if (ao_budget_from_config(config, &b, reason, len) < 0)
        return -1;
    if ((spent = ao_budget_enter(a->book, run, a->role, &b, (a->conf.timeout_s + 60) * a->conf.attempts + 60, &hold, reason, len)) != 0)
        return spent < 0 ? AO_RC_LATER : AO_RC_FAIL;
    rc = ao_llm_chat_as(a->llm, model[0] ? model : NULL, system, user, reply, &call,
                        &(struct ao_llm_watch){note_retry, &(struct retry_note){a, run}}, reason, len);
    if (rc < 0 && ao_stop_requested())
        rc = AO_RC_LATER;
    if (rc == AO_RC_FAIL)
        note_failure(a, run, reason);
    if (ao_budget_charge(a->book, run, a->role, iter, &call, e, sizeof e) < 0)
        ao_warn("run '%s': cannot count the call's tokens: %s", run, e);
    ao_budget_leave(a->book, &hold); /* after the charge: the next call sees this one's cost */
    ao_llm_usage_add(u, &call);
    ao_llm_usage_add(&a->total, &call);
    return rc;
}

cJSON *ao_usage_json(const struct ao_llm_usage *u)
{
    cJSON *t = cJSON_CreateObject();

    cJSON_AddNumberToObject(t, "prompt", (double)u->prompt);
    cJSON_AddNumberToObject(t, "completion", (double)u->completion);
    return t;
}

int ao_problem_load(const char *target, const char *task, const char *task_sha256,
                    const char *size, struct ao_problem *p, char *err, size_t errlen)
{
    const struct ao_target *tg;
    struct ao_task t;
    struct ao_buf b = {0};
    long long dims[AO_MAX_DIMS];
    char ref[1100];

    memset(p, 0, sizeof *p);
    if (!(tg = ao_target_get(target, err, errlen)) ||
        ao_task_named(task, task_sha256, &t, err, errlen) < 0 ||
        ao_task_size(&t, size, dims, err, errlen) < 0)
        return -1;
    if (ao_path(ref, sizeof ref, t.dir, "reference.c", err, errlen) < 0 ||
        !(p->reference = ao_read_file(ref, NULL, err, errlen)))
        return -1;
    tg->convention(&t, size, dims, &b);
    p->convention = b.data ? b.data : ao_strdup(""); /* (a convention of nothing: an empty one) */
    return 0;
}

void ao_problem_release(struct ao_problem *p)
{
    free(p->reference);
    free(p->convention);
    memset(p, 0, sizeof *p);
}

int ao_profile_lines(const cJSON *profile, char **lines, int max)
{
    const cJSON *it;
    int n = 0;

    cJSON_ArrayForEach(it, profile) {
        double v = it->valuedouble;
        if (n >= max)
            break;
        if (cJSON_IsObject(it) && it->string && !strcmp(it->string, "counters")) {
            /* a device's counters, each a line of its own, by the profiler's names */
            n += ao_profile_lines(it, lines + n, max - n);
            continue;
        }
        if (cJSON_IsNumber(it) && isfinite(v) &&
            asprintf(&lines[n], v == floor(v) && fabs(v) < 1e15 ? "%s: %.0f" : "%s: %.6g",
                     it->string, v) >= 0)
            n++;
        else if (cJSON_IsString(it) && strlen(it->valuestring) < 200 &&
                 asprintf(&lines[n], "%s: %s", it->string, it->valuestring) >= 0)
            n++;
        else if (cJSON_IsBool(it) &&
                 asprintf(&lines[n], "%s: %s", it->string, cJSON_IsTrue(it) ? "true" : "false") >= 0)
            n++;
    }
    return n;
}

char *ao_profile_text(const cJSON *profile)
{
    char *lines[64];
    int n = ao_profile_lines(profile, lines, 64);
    struct ao_buf b = {0};

    for (int i = 0; i < n; i++) {
        ao_buf_printf(&b, "%s\n", lines[i]);
        free(lines[i]);
    }
    return b.data ? b.data : ao_strdup("(not measured)\n");
}

/* Memory items are data, never instructions: each is fenced in tags the
 * system prompt names as data, with its fields capped and anything that
 * looks like our fence taken out, so an item cannot close its fence and
 * speak as the prompt.  The whole text is capped too. */
#define MEM_FIELD_MAX AO_MEMORY_SUMMARY_MAX
#define MEM_SNIPPET_MAX AO_MEMORY_SNIPPET_MAX
#define MEM_TEXT_MAX 24000
/* The code point at s (UTF-8) and its length in *len; a byte that starts
 * no valid sequence is itself, length 1. */
static unsigned long code_point(const unsigned char *s, size_t *len)
{
    unsigned long c = s[0];
    size_t n = c >= 0xf0 && c < 0xf8 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1;

    if (n > 1) {
        c &= 0x3f >> (n - 1);
        for (size_t i = 1; i < n; i++) {
            if ((s[i] & 0xc0) != 0x80) {
                *len = 1;
                return s[0];
            }
            c = c << 6 | (s[i] & 0x3f);
        }
    }
    *len = n;
    return c;
}

/* Characters that hide between the letters of a tag: controls but newline
 * and tab, zero-width and format characters, the soft hyphen, bidi
 * controls. */
static int hidden(unsigned long c)
{
    return (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f || c == 0xad || (c >= 0x200b && c <= 0x200f) ||
           (c >= 0x202a && c <= 0x202e) || (c >= 0x2060 && c <= 0x2064) || c == 0xfeff || c == 0x180e;
}

/* An item's text inside its fence (issue 56): the hidden characters are
 * dropped; an angle bracket of another script (fullwidth, guillemets,
 * mathematical) always becomes &lt; or &gt;; and an ASCII '<' that a tag
 * of ours could start (what follows it, past up to 8 characters that are
 * no letters, spells "memory") becomes &lt;, while code's "k < K" stays. */
static void fenced(struct ao_buf *b, const char *s, size_t max)
{
    static const unsigned long lt[] = {0xff1c, 0xfe64, 0x2039, 0x3008, 0x27e8, 0x2329, 0x276e, 0x2770, 0x29fc};
    static const unsigned long gt[] = {0xff1e, 0xfe65, 0x203a, 0x3009, 0x27e9, 0x232a, 0x276f, 0x2771, 0x29fd};
    size_t n = 0, len;

    for (; *s && n < max; s += len, n += len) {
        unsigned long c = code_point((const unsigned char *)s, &len);
        int done = 0;
        for (size_t i = 0; i < sizeof lt / sizeof lt[0] && !done; i++)
            if (c == lt[i] || c == gt[i]) {
                ao_buf_printf(b, c == lt[i] ? "&lt;" : "&gt;");
                done = 1;
            }
        if (c == '<') { /* past what is no letter (hidden ones included), "memory"? */
            char word[7];
            size_t w = 0, l2;
            for (const char *t = s + 1, *e = s + 1; *t && w < 6 && t - e < 24; t += l2) {
                unsigned long d = code_point((const unsigned char *)t, &l2);
                if ((d >= 'a' && d <= 'z') || (d >= 'A' && d <= 'Z'))
                    word[w++] = (char)d;
                else if (w > 0 || (!hidden(d) && t - e >= 8))
                    break;
            }
            word[w] = '\0';
            if (strcasecmp(word, "memory") == 0) {
                ao_buf_printf(b, "&lt;");
                done = 1;
            }
        }
        if (done || hidden(c))
            continue;
        ao_buf_append(b, s, len);
    }
    if (*s)
        ao_buf_printf(b, " [cut at %zu characters]", max);
}

char *ao_memory_text(const cJSON *items)
{
    struct ao_buf b = {0};
    const cJSON *it;
    int i = 0;

    cJSON_ArrayForEach(it, items) {
        const cJSON *sp = cJSON_GetObjectItemCaseSensitive(it, "speedup");
        int regression = strcmp(ao_json_str(it, "direction", ""), "-") == 0;
        if (b.len > MEM_TEXT_MAX) {
            ao_buf_printf(&b, "(%d older items left out for length)\n", cJSON_GetArraySize(items) - i);
            break;
        }
        ao_buf_printf(&b, "%s<memory_item n=\"%d\">\n### Experience %d: ", i ? "\n" : "", i + 1, i + 1);
        fenced(&b, ao_json_str(it, "title", ""), AO_MEMORY_TITLE_MAX);
        /* what it was learned from, and how sure the figure is */
        if (regression)
            ao_buf_printf(&b, "\nREGRESSION: the step made the kernel %.2fx slower", cJSON_IsNumber(sp) ? sp->valuedouble : 0.0);
        else
            ao_buf_printf(&b, "\nWIN: the step made the kernel %.2fx faster", cJSON_IsNumber(sp) ? sp->valuedouble : 0.0);
        {
            char sure[96];
            ao_memory_item_sureness(it, 2, sure, sizeof sure);
            ao_buf_printf(&b, "%s", sure);
            if (ao_memory_evidence(it) > 1) /* a lesson learnt again is one item, counted */
                ao_buf_printf(&b, "; found by %d pairs of kernels", ao_memory_evidence(it));
        }
        ao_buf_printf(&b, "; learned on task ");
        fenced(&b, ao_json_str(it, "task", "?"), 64);
        ao_buf_printf(&b, " (");
        fenced(&b, ao_json_str(it, "target", "?"), 16);
        ao_buf_printf(&b, "), run ");
        fenced(&b, ao_json_str(it, "run", "?"), 80);
        if (cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(it, "iter")))
            ao_buf_printf(&b, ", iteration %.0f", ao_json_num(it, "iter", 0));
        if (*ao_json_str(it, "shape", "")) { /* a block size that won at one size may lose at another */
            ao_buf_printf(&b, ", at size ");
            fenced(&b, ao_json_str(it, "shape", ""), 200);
        }
        ao_buf_printf(&b, "\n");
        fenced(&b, ao_json_str(it, "summary", ""), MEM_FIELD_MAX);
        ao_buf_printf(&b, "\n");
        if (*ao_json_str(it, "before", "") || *ao_json_str(it, "after", "")) {
            /* the item keeps the slow snippet in "before" and the fast in
             * "after"; a regression's step went from fast to slow, so the
             * snippets are named by the step, each with its speed (issue
             * 47: "Optimized" named the slower code of a regression) */
            const char *first = ao_json_str(it, regression ? "after" : "before", "");
            const char *then = ao_json_str(it, regression ? "before" : "after", "");
            ao_buf_printf(&b, "Before the step (the %s code):\n```\n", regression ? "faster" : "slower");
            fenced(&b, first, MEM_SNIPPET_MAX);
            ao_buf_printf(&b, "\n```\nAfter the step (the %s code):\n```\n", regression ? "slower" : "faster");
            fenced(&b, then, MEM_SNIPPET_MAX);
            ao_buf_printf(&b, "\n```\n");
        }
        ao_buf_printf(&b, "</memory_item>\n");
        i++;
    }
    if (!i)
        ao_buf_printf(&b, "(none yet)\n");
    return b.data;
}
