/* planner.c - accelopt-planner: a candidate in, N one-step plans out, each
 * from its own model call, with the optimization memory in the prompt.  The
 * calls go in sequence: in the distinct mode each is told the titles of the
 * plans before it and asked for another idea; a plan that repeats an
 * earlier one (the same normalized text) is marked a duplicate, so its
 * slots are not sent to the executor's model. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "agents/agent.h"
#include "core/exitcode.h"
#include "core/log.h"
#include "core/util.h"
#include "state/memory.h"
#include "wire/msg.h"
#include "wire/names.h"
#include "wire/runconfig.h"
#include "wire/stage.h"

#define MAX_PLAN_TEXT 8000

static const struct ao_option options[] = {
    {"plans", 'n', AO_OPT_INT, "12", "N", "plans per candidate when the run names none"},
    {"memory-scope", 0, AO_OPT_STR, "target", "SCOPE", "memory to read: target, task, none or a name"},
    {"expn", 0, AO_OPT_INT, "16", "N", "memory items shown at most"},
    {"seed", 0, AO_OPT_INT, "0", "N", "seed of the builtin model and the profile shuffle"},
    {"plan-mode", 0, AO_OPT_STR, "distinct", "MODE",
     "distinct (each call told the earlier plans' titles) or independent (the paper's identical calls)"},
    AO_AGENT_STAGE_OPTIONS("planner", "executor", "summarizer"),
    {"samples", 0, AO_OPT_INT, NULL, "X", NULL}, /* another stage's key */
    AO_STAGE_OPTIONS,
    AO_COMMON_OPTIONS,
};
#define NOPTS ((int)(sizeof options / sizeof options[0]))

static const char *const topics[] = {AO_TOPIC_CANDIDATES, NULL};

struct planner {
    struct ao_agent agent;
    long plans, expn, seed;
    const char *scope, *mode;
};

#define MAX_TITLE 160

/* A plan's title: its first line with words, markdown marks and a
 * "Title:" label taken off, cut at MAX_TITLE bytes. */
static void plan_title(const char *text, char *out, size_t len)
{
    const char *p = text;
    size_t n;

    while (*p == '\n' || *p == ' ' || *p == '\r')
        p++;
    p += strspn(p, "#*_ \t");
    if (strncasecmp(p, "title:", 6) == 0)
        p += 6 + strspn(p + 6, " \t");
    n = strcspn(p, "\r\n");
    while (n && strchr("*_ \t", p[n - 1]))
        n--;
    if (n >= len)
        n = len - 1;
    if (n > MAX_TITLE)
        n = MAX_TITLE;
    memcpy(out, p, n);
    out[n] = '\0';
}

/* The text a duplicate is recognized by: letters and digits, lower case,
 * one space between words. */
static char *normalized(const char *text)
{
    char *out = malloc(strlen(text) + 1), *o = out;

    if (!out)
        return NULL;
    for (const char *p = text; *p; p++) {
        unsigned char ch = (unsigned char)*p;
        if (isalnum(ch))
            *o++ = (char)tolower(ch);
        else if (o > out && o[-1] != ' ')
            *o++ = ' ';
    }
    while (o > out && o[-1] == ' ')
        o--;
    *o = '\0';
    return out;
}

static int emit(struct ao_io *io, const struct ao_plan_msg *p, char *reason, size_t len)
{
    cJSON *j = ao_msg_encode(&ao_msg_plan, p);
    int rc;

    if (!j) {
        snprintf(reason, len, "out of memory encoding a plan");
        return -1;
    }
    rc = ao_io_emit_json(io, AO_TOPIC_PLANS, p->env.run, j);
    cJSON_Delete(j);
    if (rc < 0)
        snprintf(reason, len, "%s", io->err);
    return rc;
}

static int process(void *ctx, struct ao_io *io, const cJSON *msg, char *reason, size_t len)
{
    struct planner *pl = ctx;
    struct ao_candidate_msg c;
    struct ao_problem prob = {0};
    cJSON *memory = NULL, *seen = NULL;
    char *memtext = NULL, key[AO_KEY_MAX], id[AO_ID_BUF], *norms[AO_MAX_PLANS] = {0};
    struct ao_buf earlier = {0};
    long plans;
    long long rank;
    int has_key, rc = -1;
    const char *size, *mode;
    struct ao_run_config cfg;

    if (ao_msg_decode(&ao_msg_candidate, msg, &c, reason, len) < 0)
        return -1;
    if (ao_run_config_decode(c.config, &cfg, reason, len) < 0) { /* checked at decode: it holds */
        ao_msg_release(&ao_msg_candidate, &c);
        return -1;
    }
    plans = cfg.plans != AO_ABSENT_INT ? (long)cfg.plans : pl->plans;
    if (plans < 1 || plans > AO_MAX_PLANS) {
        snprintf(reason, len, "plans must be 1 to %d, not %ld", AO_MAX_PLANS, plans);
        goto out;
    }
    size = c.size ? c.size : pl->agent.size;
    rank = c.rank == AO_ABSENT_INT ? 0 : c.rank;
    mode = cfg.plan_mode == AO_PLAN_INDEPENDENT ? "independent"
           : cfg.plan_mode == AO_PLAN_DISTINCT  ? "distinct"
                                                : pl->mode;
    if (strcmp(mode, "distinct") != 0 && strcmp(mode, "independent") != 0) {
        snprintf(reason, len, "plan_mode must be distinct or independent, not '%.40s'", mode);
        goto out;
    }
    /* the memory, read at planning time */
    has_key = ao_memory_key(cfg.memory_scope ? cfg.memory_scope : pl->scope, c.env.target,
                            c.env.task, key, sizeof key, reason, len);
    if (has_key < 0)
        goto out;
    if (has_key && pl->agent.redis) {
        long expn = cfg.expn != AO_ABSENT_INT ? (long)cfg.expn : pl->expn;
        if (!(memory = ao_memory_read(pl->agent.redis, key, (int)expn, reason, len))) {
            rc = ao_io_fail(io, "cannot read the memory: %s", reason); /* not the message's fault */
            goto out;
        }
    } else if (!(memory = cJSON_CreateArray())) {
        goto oom;
    }
    if (!(seen = cJSON_CreateArray()))
        goto oom;
    {
        const cJSON *it;
        cJSON_ArrayForEach(it, memory) {
            const cJSON *iid = cJSON_GetObjectItemCaseSensitive(it, "id");
            if (cJSON_IsString(iid))
                cJSON_AddItemToArray(seen, cJSON_CreateString(iid->valuestring));
        }
    }
    if (pl->agent.model->needs_problem &&
        ao_problem_load(c.env.target, c.env.task, c.task_sha256, size, &prob, reason, len) < 0)
        goto out;
    if (!(memtext = ao_memory_text(memory)))
        goto oom;
    for (long i = 0; i < plans; i++) {
        struct ao_plan_msg p;
        struct ao_llm_usage u = {0};
        int erc = 0;

        ao_msg_init(&ao_msg_plan, &p);
        if (ao_name(id, sizeof id, AO_ID_PLAN, c.env.run, c.env.iter, rank, i) < 0) {
            snprintf(reason, len, "the plan's id is too long");
            goto out;
        }
        p.index = i;
        p.rank = rank;
        p.parent_latency_ns = c.latency_ns;
        p.baseline_latency_ns = c.baseline_latency_ns;
        if (ao_env_set(&p.env, "plan", id, c.env.run, c.env.task, c.env.target, c.env.iter) < 0 ||
            !(p.candidate_id = strdup(c.env.id)) || !(p.candidate_sha256 = strdup(c.sha256)) ||
            !(p.source = strdup(c.source)) || !(p.size = strdup(size)) ||
            (c.task_path && !(p.task_path = strdup(c.task_path))) ||
            (c.task_sha256 && !(p.task_sha256 = strdup(c.task_sha256))) ||
            (c.config && !(p.config = cJSON_Duplicate(c.config, 1))) ||
            !(p.memory_seen = cJSON_Duplicate(seen, 1)) ||
            !(p.model = strdup(pl->agent.conf.model))) {
            ao_msg_release(&ao_msg_plan, &p);
            goto oom;
        }
        {
            struct ao_plan_ask q = {&c, memory, memtext, earlier.data ? earlier.data : "", &prob,
                                    (unsigned long long)(cfg.seed != AO_ABSENT_INT ? cfg.seed : pl->seed),
                                    (unsigned long long)pl->seed, i, plans};
            char why[AO_ERRLEN];
            if (pl->agent.model->plan(&pl->agent, &q, &p, &u, why, sizeof why) < 0)
                erc = ao_io_fail(io, "%s", why); /* the stage stops; the candidate comes again */
        }
        if (!erc && !p.text && !p.error)
            erc = -1, snprintf(reason, len, "out of memory");
        if (!erc && p.text) { /* a repeat of an earlier plan goes no further */
            char title[MAX_TITLE + 1];
            if (!(norms[i] = normalized(p.text)))
                erc = -1, snprintf(reason, len, "out of memory");
            for (long j = 0; !erc && j < i; j++)
                if (norms[j] && strcmp(norms[j], norms[i]) == 0) {
                    char did[AO_ID_BUF];
                    if (ao_name(did, sizeof did, AO_ID_PLAN, c.env.run, c.env.iter, rank, j) < 0 ||
                        !(p.duplicate_of = strdup(did)))
                        erc = -1, snprintf(reason, len, "out of memory");
                    break;
                }
            plan_title(p.text, title, sizeof title);
            if (!erc && !p.duplicate_of && strcmp(mode, "distinct") == 0) {
                if (!earlier.len)
                    ao_buf_printf(&earlier, "Plans already proposed for this kernel (yours must be "
                                  "a different idea, not a variant of one of these):\n");
                ao_buf_printf(&earlier, "- %s\n", title[0] ? title : "(untitled)");
            }
        }
        if (!erc) {
            p.tokens = ao_usage_json(&u);
            p.cost_usd = u.cost_usd;
            ao_info("%s: %s%s", id, p.error ? p.error : p.duplicate_of ? "a duplicate of " : "planned",
                    p.duplicate_of && !p.error ? p.duplicate_of : "");
            erc = emit(io, &p, reason, len);
        }
        ao_msg_release(&ao_msg_plan, &p);
        if (erc < 0)
            goto out;
    }
    rc = 0;
    goto out;
oom:
    snprintf(reason, len, "out of memory");
out:
    for (int i = 0; i < AO_MAX_PLANS; i++)
        free(norms[i]);
    free(earlier.data);
    free(memtext);
    cJSON_Delete(memory);
    cJSON_Delete(seen);
    ao_problem_release(&prob);
    ao_run_config_release(&cfg);
    ao_msg_release(&ao_msg_candidate, &c);
    return rc;
}

int main(int argc, char **argv)
{
    struct ao_stage s;
    struct planner pl = {0};
    int code;

    if (!ao_stage_open(&s, "accelopt-planner",
                       "accelopt-planner [options] < candidates.jsonl > plans.jsonl", options,
                       NOPTS, topics, argc, argv, &code))
        return ao_stage_close(&s, code);
    pl.plans = ao_config_int(&s.cfg, "plans");
    pl.expn = ao_config_int(&s.cfg, "expn");
    pl.seed = ao_config_int(&s.cfg, "seed");
    pl.scope = ao_config_str(&s.cfg, "memory-scope");
    pl.mode = ao_config_str(&s.cfg, "plan-mode");
    if (strcmp(pl.mode, "distinct") != 0 && strcmp(pl.mode, "independent") != 0) {
        ao_err("--plan-mode must be distinct or independent");
        return ao_stage_close(&s, AO_EXIT_USAGE);
    }
    if (pl.plans < 1 || pl.plans > AO_MAX_PLANS || pl.expn < 1) {
        ao_err("--plans must be 1 to %d and --expn at least 1", AO_MAX_PLANS);
        return ao_stage_close(&s, AO_EXIT_USAGE);
    }
    return ao_agent_run(&s, &pl.agent, "planner", process, &pl, "candidates", "plans");
}
