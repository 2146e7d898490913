/* planner.c - accelopt-planner: a candidate in, N one-step plans out, each
 * from its own model call, with the optimization memory in the prompt.  In
 * the distinct mode each call is told the titles of the plans before it
 * and asked for another idea; a plan that repeats an earlier one (the same
 * normalized text) is marked a duplicate, so its slots are not sent to the
 * executor's model.
 *
 * The calls go in waves, each wave's calls at once on fibers of the
 * stage's loop (--plan-width at most): in the distinct mode a wave is never
 * larger than the plans before it plus one (1, 2, 4, ...), so every plan is
 * told the titles of all the plans of the earlier waves, and twelve plans
 * take four model latencies instead of twelve.  A call has an agent of its
 * own (model client, redis, gate); the calls in flight are still counted
 * by the server's gate, which every stage shares through redis. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <hiredis/hiredis.h>

#include "agents/agent.h"
#include "agents/flight.h"
#include "core/alloc.h"
#include "core/exitcode.h"
#include "core/log.h"
#include "core/util.h"
#include "state/memory.h"
#include "state/select.h"
#include "wire/msg.h"
#include "wire/names.h"
#include "wire/runconfig.h"
#include "wire/stage.h"

#define MAX_PLAN_TEXT 8000
#define MAX_WIDTH 16

static const struct ao_option options[] = {
    {"plans", 'n', AO_OPT_INT, "12", "N", "plans per candidate when the run names none"},
    {"memory-scope", 0, AO_OPT_STR, "target", "SCOPE", "memory to read: target, task, none or a name"},
    {"expn", 0, AO_OPT_INT, "16", "N", "memory items shown at most"},
    {"seed", 0, AO_OPT_INT, "0", "N", "seed of the builtin model and the profile shuffle"},
    {"plan-mode", 0, AO_OPT_STR, "distinct", "MODE",
     "distinct (each call told the earlier plans' titles) or independent (the paper's identical calls)"},
    {"plan-width", 0, AO_OPT_INT, "8", "N",
     "plan calls of one candidate at once, 1 to 16 (1: one after another; needs --redis and a model server)"},
    AO_AGENT_STAGE_OPTIONS("planner", "executor", "summarizer"),
    {"samples", 0, AO_OPT_INT, NULL, "X", NULL}, /* another stage's key */
    AO_STAGE_OPTIONS,
    AO_COMMON_OPTIONS,
};
#define NOPTS ((int)(sizeof options / sizeof options[0]))

static const char *const topics[] = {AO_TOPIC_CANDIDATES, NULL};

struct planner {
    struct ao_agent agent;
    struct ao_agent helpers[MAX_WIDTH - 1]; /* a wave's other calls: made on first use */
    int nhelpers, helpers_failed;
    const struct ao_config *cfg;
    long plans, expn, seed, width;
    const char *scope, *mode;
};

/* One plan call of a wave. */
struct call {
    struct ao_agent *agent;
    struct ao_plan_ask q;
    struct ao_plan_msg p;
    struct ao_llm_usage u;
    int rc;
    char *earlier; /* the titles before this wave, and the call's place in it */
    char *kept;    /* the plan written for this id before its candidate came again, or NULL */
    char why[AO_ERRLEN];
};

static void call_run(void *arg)
{
    struct call *k = arg;
    if (k->kept) { /* not asked of the model twice */
        k->p.text = ao_strdup(k->kept);
        k->rc = 0;
        return;
    }
    k->rc = k->agent->model->plan(k->agent, &k->q, &k->p, &k->u, k->why, sizeof k->why);
}

/* How many calls can go at once: the width, when the calls go to a model
 * server through a shared gate and helper agents could be made (else 1: a
 * process without redis keeps one call in flight, as --model-concurrency
 * says). */
static int calls_at_once(struct planner *pl)
{
    if (pl->width <= 1 || pl->agent.model != &ao_model_llm || !pl->agent.redis)
        return 1;
    while (!pl->helpers_failed && pl->nhelpers < pl->width - 1) {
        char err[AO_ERRLEN];
        int usage;
        if (ao_agent_init(&pl->helpers[pl->nhelpers], pl->cfg, "planner", &usage, err, sizeof err) < 0) {
            ao_warn("plan calls go %d at a time: %s", pl->nhelpers + 1, err);
            pl->helpers_failed = 1;
            break;
        }
        pl->nhelpers++;
    }
    return pl->nhelpers + 1;
}

/* The calls of a wave, side by side on fibers of the stage's loop
 * (agents/flight.h), each with an agent of its own. */
static void run_wave(struct planner *pl, struct call *calls, int n)
{
    void *args[MAX_WIDTH];

    for (int j = 0; j < n; j++) {
        calls[j].agent = j ? &pl->helpers[j - 1] : &pl->agent;
        args[j] = &calls[j];
    }
    ao_flight_each(call_run, args, n);
}

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
    char *out = ao_malloc(strlen(text) + 1), *o = out;

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

/* A plan goes out as the place-th of its iteration's plans (rank * plans
 * + index): the transport gives consecutive places consecutive partitions,
 * so every executor replica gets its share of an iteration's plans, not
 * what round robin from each planner's own start happens to give it (a
 * tail of replicas with plans left while the others idle:
 * docs/BENCHMARKS.md, issue 28). */
static int emit(struct ao_io *io, const struct ao_plan_msg *p, long place, char *reason, size_t len)
{
    cJSON *j = ao_msg_encode(&ao_msg_plan, p);
    int rc;

    (void)reason, (void)len;
    rc = ao_io_emit_json_at(io, AO_TOPIC_PLANS, p->env.run, place, j);
    cJSON_Delete(j);
    if (rc < 0)
        snprintf(reason, len, "%s", io->err);
    return rc;
}

/* What the run already tried, for a model's planner: every step of the
 * run's earlier iterations with how it ended (issue 47: measured, failed,
 * a duplicate or lost), the steps taken from this very kernel apart from
 * those taken from the run's other kernels, so that an idea tried once is
 * not proposed again unless its outcome leaves room.  A measured step says
 * what its head-to-head with the kernel it changed decided (faster, slower
 * or a tie), or that it was measured alone.  From the run's iteration,
 * comparison and plan hashes in redis; "" when there is nothing (or no
 * redis).  Malloc'd. */
#define HISTORY_LINES 16
#define TRIED_MAX 64
struct tried { /* a step taken from this kernel before: its title, normalized, its plan's id and text */
    char norm[MAX_TITLE + 1], id[AO_ID_BUF];
    char *plan;
};

/* HGETALL of key (ao_redis_key'd) as a JSON object of strings, or NULL
 * (no key, or redis failed). */
static cJSON *hash_of(struct planner *pl, const char *key)
{
    char e[AO_ERRLEN];
    const char *argv[] = {"HGETALL", key};
    struct redisReply *rep;
    cJSON *o;

    if (!key || !(rep = ao_redis_argv(pl->agent.redis, 2, argv, NULL, e, sizeof e)))
        return NULL;
    if ((o = cJSON_CreateObject()))
        for (size_t k = 1; rep->type == REDIS_REPLY_ARRAY && k < rep->elements; k += 2)
            if (rep->element[k - 1]->str && rep->element[k]->str)
                cJSON_AddStringToObject(o, rep->element[k - 1]->str, rep->element[k]->str);
    freeReplyObject(rep);
    return o;
}

/* How a measured step ended: its comparison with the kernel it changed
 * where one was made, else its own measurement. */
static void measured_outcome(const cJSON *r, const cJSON *cmp, char *out, size_t len)
{
    const char *status = ao_json_str(cmp, "status", NULL);
    const cJSON *h = cJSON_GetObjectItemCaseSensitive(cmp, "head_to_head");

    if (status && strcmp(status, "ok") == 0 && h && cJSON_GetObjectItemCaseSensitive(h, "voided")) {
        snprintf(out, len, "undecided: its parent ran well outside its own earlier figures on its side of the "
                 "head-to-head, so the pair counts for nothing");
        return;
    }
    if (status && strcmp(status, "ok") == 0 && h) {
        struct ao_sel_cmp c = {1, ao_json_num(h, "speedup", NAN), ao_json_num(h, "speedup_low", NAN),
                               ao_json_num(h, "speedup_high", NAN)};
        switch (ao_sel_cmp_verdict(&c)) {
        case AO_CMP_FASTER:
            snprintf(out, len, "FASTER: head to head with the kernel it changed, %.2fx (95%% interval %.2f-%.2f)",
                     c.speedup, c.low, c.high);
            return;
        case AO_CMP_SLOWER:
            snprintf(out, len, "SLOWER: head to head with the kernel it changed, %.2fx (95%% interval %.2f-%.2f)",
                     c.speedup, c.low, c.high);
            return;
        default:
            if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(h, "undecidable")))
                snprintf(out, len, "a TIE: head to head with the kernel it changed, its rounds fell on both sides "
                         "of 1 early (%.2fx over %d), so no difference could be shown", c.speedup,
                         (int)ao_json_num(h, "rounds", 0));
            else
                snprintf(out, len, "a TIE: head to head with the kernel it changed it measured %.2fx (95%% interval "
                         "%.2f-%.2f), no difference beyond the noise", c.speedup, c.low, c.high);
            return;
        }
    }
    if (status) {
        snprintf(out, len, "failed when measured again beside the kernel it changed (%s: %.160s)", status,
                 ao_json_str(cmp, "reason", "no reason given"));
        return;
    }
    if (isfinite(ao_json_num(r, "speedup", NAN)))
        snprintf(out, len, "correct; measured alone %.2fx against the kernel it changed (each alone, at "
                 "different moments: not a difference the run counts), not compared head to head",
                 ao_json_num(r, "speedup", NAN));
    else
        snprintf(out, len, "correct; not compared head to head");
}

/* How a step ended, on one line: measured (measured_outcome), a
 * duplicate, lost, or failed with its reason. */
static void step_outcome(const cJSON *r, const cJSON *cmp, char *out, size_t len)
{
    const char *status = ao_json_str(r, "status", "?");

    if (!strcmp(status, "ok"))
        measured_outcome(r, cmp, out, len);
    else if (!strcmp(status, "duplicate"))
        snprintf(out, len, "a duplicate of an earlier step: not tried again");
    else if (!strcmp(status, "lost"))
        snprintf(out, len, "lost: no result came back (never measured; it may be tried)");
    else
        snprintf(out, len, "%s: %.180s", status, ao_json_str(r, "reason", "no reason given"));
    out[strcspn(out, "\n")] = '\0';
}

static char *run_history(struct planner *pl, const struct ao_candidate_msg *c, struct tried *tr, int *ntr)
{
    struct ao_buf mine = {0}, others = {0}, out = {0};
    int nmine = 0, nothers = 0;
    char seen[HISTORY_LINES * 2][MAX_TITLE + 1];
    int nseen = 0;
    char key[AO_REDIS_KEY_MAX];
    cJSON *planned;

    if (!pl->agent.redis)
        return ao_strdup("");
    planned = hash_of(pl, ao_redis_key(pl->agent.redis, key, sizeof key, AO_KEY_PLANNED, c->env.run));
    for (long long i = c->env.iter - 1; i >= 1; i--) { /* newest first */
        cJSON *slots = hash_of(pl, ao_redis_key(pl->agent.redis, key, sizeof key, AO_KEY_ITER, c->env.run, i)), *cmps, *it;
        if (!slots)
            break;
        cmps = hash_of(pl, ao_redis_key(pl->agent.redis, key, sizeof key, AO_KEY_CMP, c->env.run, i));
        cJSON_ArrayForEach(it, slots) {
            cJSON *r = cJSON_Parse(it->valuestring);
            cJSON *cmp = cJSON_IsString(cJSON_GetObjectItemCaseSensitive(cmps, it->string))
                             ? cJSON_Parse(cJSON_GetObjectItemCaseSensitive(cmps, it->string)->valuestring)
                             : NULL;
            /* the child's head-to-head with its parent is in its own
             * result (issue 66); a run from before, in its comparisons */
            const cJSON *h2h = cmp ? cmp : cJSON_GetObjectItemCaseSensitive(r, "head_to_head") ? r : NULL;
            const char *plan = ao_json_str(r, "plan_text", NULL);
            const char *parent = ao_json_str(r, "parent", "");
            char title[MAX_TITLE + 1], outcome[400], pid[AO_ID_BUF];
            int dup = 0, here, rk = 0, ix = 0, noted = 0;
            int slot_ok = sscanf(it->string, "%d.%d", &rk, &ix) == 2;
            cJSON *was = NULL;
            if (!plan && slot_ok && /* a lost slot: its plan as the planner wrote it down */
                ao_name(pid, sizeof pid, AO_ID_PLAN, c->env.run, i, (long long)rk, (long)ix) == 0 &&
                cJSON_IsString(cJSON_GetObjectItemCaseSensitive(planned, pid)) &&
                (was = cJSON_Parse(cJSON_GetObjectItemCaseSensitive(planned, pid)->valuestring))) {
                plan = ao_json_str(was, "text", NULL);
                parent = ao_json_str(was, "parent", "");
                noted = 1;
            }
            here = c->sha256 && strcmp(parent, c->sha256) == 0;
            if (plan) {
                plan_title(plan, title, sizeof title);
                /* every step measured from this kernel, for the repeat check (a lost one may come again) */
                if (here && !noted && *ntr < TRIED_MAX && slot_ok) {
                    char *nt = normalized(title);
                    if (nt && ao_name(tr[*ntr].id, sizeof tr[*ntr].id, AO_ID_PLAN, c->env.run, i, (long long)rk,
                                      (long)ix) == 0 && (tr[*ntr].plan = ao_strdup(plan))) {
                        snprintf(tr[*ntr].norm, sizeof tr[*ntr].norm, "%s", nt);
                        (*ntr)++;
                    }
                    free(nt);
                }
                for (int q = 0; q < nseen && !dup; q++)
                    dup = strcmp(seen[q], title) == 0;
                if (!dup && (here ? nmine : nothers) < HISTORY_LINES / 2 && nseen < HISTORY_LINES * 2) {
                    snprintf(seen[nseen++], sizeof seen[0], "%s", title);
                    step_outcome(r, h2h, outcome, sizeof outcome);
                    ao_buf_printf(here ? &mine : &others, "- %s (iteration %lld) -> %s\n", title, i, outcome);
                    *(here ? &nmine : &nothers) += 1;
                }
            }
            cJSON_Delete(r);
            cJSON_Delete(cmp);
            cJSON_Delete(was);
        }
        cJSON_Delete(slots);
        cJSON_Delete(cmps);
    }
    cJSON_Delete(planned);
    if (nmine || nothers)
        ao_buf_printf(&out, "A step counts as faster or slower only head to head with the kernel it changed "
                      "(both timed in turns, in one sitting, with a 95%% interval); a TIE means no difference "
                      "beyond the noise: neither a gain nor a loss, and no lesson.\n");
    if (nmine)
        ao_buf_printf(&out, "Steps already tried on this kernel in this run, and how each ended (do not "
                      "propose them again; a lost one may be):\n%s\n", mine.data);
    if (nothers)
        ao_buf_printf(&out, "Steps tried on other kernels of this run, and how each ended (an idea that "
                      "failed or tied there for a reason that holds here too will do so again):\n%s\n",
                      others.data);
    ao_buf_release(&mine);
    ao_buf_release(&others);
    return out.data ? out.data : ao_strdup("");
}

/* The text of plan id as written before from the kernel parent, from the
 * run's plans (hash_of AO_KEY_PLANNED; NULL: none), or NULL; *oom set when
 * a copy could not be made. */
static char *kept_plan(const cJSON *planned, const char *id, const char *parent)
{
    const cJSON *was = cJSON_GetObjectItemCaseSensitive(planned, id);
    cJSON *rec;
    char *text = NULL;

    if (!cJSON_IsString(was) || !(rec = cJSON_Parse(was->valuestring)))
        return NULL;
    if (strcmp(ao_json_str(rec, "parent", ""), parent ? parent : "") == 0 && ao_json_str(rec, "text", NULL))
        text = ao_strdup(ao_json_str(rec, "text", NULL));
    cJSON_Delete(rec);
    return text;
}

/* Write the plan down where the run's later plans read it: a slot that
 * never comes back (lost) is still a step the run tried.  Best effort: the
 * plan goes out either way. */
static void note_planned(struct planner *pl, const struct ao_plan_msg *p)
{
    char key[AO_REDIS_KEY_MAX], e[AO_ERRLEN], *v;
    cJSON *rec = cJSON_CreateObject();
    const char *argv[] = {"HSET", key, p->env.id, NULL};
    struct redisReply *rep;

    /* the kernel it is a step from, and the step */
    if (!rec || !cJSON_AddStringToObject(rec, "parent", p->candidate_sha256 ? p->candidate_sha256 : "") ||
        !cJSON_AddStringToObject(rec, "text", p->text) || !(v = cJSON_PrintUnformatted(rec))) {
        cJSON_Delete(rec);
        return;
    }
    argv[3] = v;
    if (pl->agent.redis && ao_redis_key(pl->agent.redis, key, sizeof key, AO_KEY_PLANNED, p->env.run)) {
        if (!(rep = ao_redis_argv(pl->agent.redis, 4, argv, NULL, e, sizeof e)))
            ao_warn("%s: not written down for the run's later plans: %s", p->env.id, e);
        else
            freeReplyObject(rep);
    }
    cJSON_free(v);
    cJSON_Delete(rec);
}

/* One candidate being planned: what its calls are told, and what came of
 * the plans so far.  process() goes through it in steps, as curl's tool
 * goes through a transfer: start, then each wave prepared, run and
 * finished, then the end. */
struct job {
    struct ao_io *io;
    struct ao_candidate_msg c;
    struct ao_run_config cfg;
    struct ao_problem prob;
    cJSON *memory, *seen, *planned;
    char *memtext, *hist, *norms[AO_MAX_PLANS];
    struct tried tried[TRIED_MAX];
    const char *tried_plans[TRIED_MAX]; /* their texts, for the model */
    int ntried;
    struct ao_buf earlier; /* the titles of the plans so far (the distinct mode) */
    long plans;
    long long rank;
    const char *size, *mode;
    char *reason;
    size_t len;
};

/* The candidate decoded and checked, the memory read, what the calls are
 * told made.  0, or -1 with reason set (or the stage failed: io). */
static int job_start(struct planner *pl, struct job *J, const cJSON *msg)
{
    char key[AO_KEY_MAX];
    int has_key;

    if (ao_msg_decode(&ao_msg_candidate, msg, &J->c, J->reason, J->len) < 0)
        return -1;
    if (ao_run_config_decode(J->c.config, &J->cfg, J->reason, J->len) < 0) /* checked at decode: it holds */
        return -1;
    J->plans = J->cfg.plans != AO_ABSENT_INT ? (long)J->cfg.plans : pl->plans;
    if (J->plans < 1 || J->plans > AO_MAX_PLANS)
        return snprintf(J->reason, J->len, "plans must be 1 to %d, not %ld", AO_MAX_PLANS, J->plans), -1;
    J->size = J->c.size ? J->c.size : pl->agent.size;
    J->rank = J->c.rank == AO_ABSENT_INT ? 0 : J->c.rank;
    J->mode = J->cfg.plan_mode == AO_PLAN_INDEPENDENT ? "independent"
              : J->cfg.plan_mode == AO_PLAN_DISTINCT  ? "distinct"
                                                      : pl->mode;
    if (strcmp(J->mode, "distinct") != 0 && strcmp(J->mode, "independent") != 0)
        return snprintf(J->reason, J->len, "plan_mode must be distinct or independent, not '%.40s'", J->mode), -1;
    /* the memory, read at planning time */
    has_key = ao_memory_key(J->cfg.memory_scope ? J->cfg.memory_scope : pl->scope, J->c.env.target,
                            J->c.env.task, key, sizeof key, J->reason, J->len);
    if (has_key < 0)
        return -1;
    if (has_key && pl->agent.redis) {
        long expn = J->cfg.expn != AO_ABSENT_INT ? (long)J->cfg.expn : pl->expn;
        if (!(J->memory = ao_memory_read(pl->agent.redis, key, (int)expn, J->reason, J->len)))
            return ao_io_fail(J->io, "cannot read the memory: %s", J->reason); /* not the message's fault */
    } else {
        J->memory = cJSON_CreateArray();
    }
    J->seen = cJSON_CreateArray();
    {
        const cJSON *it;
        cJSON_ArrayForEach(it, J->memory) {
            const cJSON *iid = cJSON_GetObjectItemCaseSensitive(it, "id");
            if (cJSON_IsString(iid))
                cJSON_AddItemToArray(J->seen, cJSON_CreateString(iid->valuestring));
        }
    }
    if (pl->agent.model->needs_problem &&
        ao_problem_load(J->c.env.target, J->c.env.task, J->c.task_sha256, J->size, &J->prob, J->reason, J->len) < 0)
        return -1;
    /* a model is told what the run tried already: a model that writes
     * its plans, as the run's history; the builtin, as the plans taken from
     * this kernel before (it moves another knob: issue 66, a run that kept
     * its parent proposed the same two moves each iteration) */
    if (!(J->memtext = ao_memory_text(J->memory)))
        J->memtext = ao_strdup(""); /* no items: nothing to show */
    J->hist = run_history(pl, &J->c, J->tried, &J->ntried);
    if (pl->agent.conf.builtin) {
        free(J->hist);
        J->hist = ao_strdup("");
    }
    for (int q = 0; q < J->ntried; q++)
        J->tried_plans[q] = J->tried[q].plan;
    /* the plans written for this candidate before (it came again: its
     * offset was not committed when a broker or this stage went down) are
     * sent as they were, not asked of the model twice */
    if (pl->agent.redis)
        J->planned = hash_of(pl, ao_redis_key(pl->agent.redis, key, sizeof key, AO_KEY_PLANNED, J->c.env.run));
    return 0;
}

static void job_end(struct job *J)
{
    for (int i = 0; i < AO_MAX_PLANS; i++)
        free(J->norms[i]);
    for (int q = 0; q < J->ntried; q++)
        free(J->tried[q].plan);
    free(J->earlier.data);
    free(J->hist);
    free(J->memtext);
    cJSON_Delete(J->memory);
    cJSON_Delete(J->seen);
    cJSON_Delete(J->planned);
    ao_problem_release(&J->prob);
    ao_run_config_release(&J->cfg);
    ao_msg_release(&ao_msg_candidate, &J->c);
}

/* Plan ix's message, all but its text: 0, or -1 (an id too long). */
static int plan_fill(struct planner *pl, struct job *J, struct ao_plan_msg *p, long ix)
{
    const struct ao_candidate_msg *c = &J->c;
    char id[AO_ID_BUF];

    ao_msg_init(&ao_msg_plan, p);
    if (ao_name(id, sizeof id, AO_ID_PLAN, c->env.run, c->env.iter, J->rank, ix) < 0)
        return snprintf(J->reason, J->len, "the plan's id is too long"), -1;
    p->index = ix;
    p->rank = J->rank;
    p->parent_latency_ns = c->latency_ns;
    p->baseline_latency_ns = c->baseline_latency_ns;
    p->candidate_id = ao_strdup(c->env.id);
    p->candidate_sha256 = ao_strdup(c->sha256);
    p->source = ao_strdup(c->source);
    p->size = ao_strdup(J->size);
    if (c->task_path)
        p->task_path = ao_strdup(c->task_path);
    if (c->task_sha256)
        p->task_sha256 = ao_strdup(c->task_sha256);
    p->model = ao_strdup(pl->agent.conf.model);
    ao_env_set(&p->env, "plan", id, c->env.run, c->env.task, c->env.target, c->env.iter);
    if (c->config)
        p->config = cJSON_Duplicate(c->config, 1);
    p->memory_seen = cJSON_Duplicate(J->seen, 1);
    return 0;
}

/* The wave of w calls from plan i on: each call's message, whether it
 * was written before, what it is told.  *made: the calls to release
 * (some may be half made on an error).  0, or -1 with reason set. */
static int wave_prepare(struct planner *pl, struct job *J, long i, long w, struct call *calls, int *made)
{
    for (*made = 0; *made < w; ++*made) {
        struct call *k = &calls[*made];

        if (plan_fill(pl, J, &k->p, i + *made) < 0) {
            ++*made; /* released by the caller */
            return -1;
        }
        if ((k->kept = kept_plan(J->planned, k->p.env.id, J->c.sha256)))
            ao_info("%s: written before; sent again as it was, the model not asked twice", k->p.env.id);
        /* what the call is told: the run's history, the plans before it;
         * and calls told the same titles would give the same idea, so each
         * is asked for another place on its list (the independent mode's
         * calls stay identical, as the paper's are) */
        {
            struct ao_buf told = {0};
            ao_buf_printf(&told, "%s%s", J->hist, J->earlier.data ? J->earlier.data : "");
            if (w > 1 && strcmp(J->mode, "distinct") == 0)
                ao_buf_printf(&told, "%ld other plans for this kernel are being written at the same time "
                              "as this one, told the same list; to stay apart from them, propose the "
                              "idea you would rank number %d among those left.\n", w - 1, *made + 1);
            k->earlier = told.data ? told.data : ao_strdup("");
        }
        k->q = (struct ao_plan_ask){&J->c, J->memory, J->memtext, k->earlier, &J->prob,
                                    (unsigned long long)(J->cfg.seed != AO_ABSENT_INT ? J->cfg.seed : pl->seed),
                                    (unsigned long long)pl->seed, i + *made, J->plans, J->tried_plans,
                                    J->ntried};
    }
    return 0;
}

/* Is plan ix's text a repeat, of a plan before it here or of a step this
 * kernel was given before?  Sets p->duplicate_of; in the distinct mode a
 * new plan's title joins the list the later calls are told.  -1: out of
 * memory. */
static int plan_judge(struct job *J, struct ao_plan_msg *p, long ix)
{
    char title[MAX_TITLE + 1];

    J->norms[ix] = normalized(p->text);
    for (long k = 0; k < ix; k++)
        if (J->norms[k] && strcmp(J->norms[k], J->norms[ix]) == 0) {
            char did[AO_ID_BUF];
            if (ao_name(did, sizeof did, AO_ID_PLAN, J->c.env.run, J->c.env.iter, J->rank, k) < 0)
                return -1;
            p->duplicate_of = ao_strdup(did);
            break;
        }
    plan_title(p->text, title, sizeof title);
    if (!p->duplicate_of && J->ntried) { /* a step this kernel was given before */
        char *nt = normalized(title);
        for (int q = 0; nt && *nt && q < J->ntried && !p->duplicate_of; q++)
            if (strcmp(nt, J->tried[q].norm) == 0)
                p->duplicate_of = ao_strdup(J->tried[q].id);
        free(nt);
    }
    if (!p->duplicate_of && strcmp(J->mode, "distinct") == 0) {
        if (!J->earlier.len)
            ao_buf_printf(&J->earlier, "Plans already proposed for this kernel, each to be measured on its "
                          "own from this same kernel (yours must not repeat one of these or only change its "
                          "numbers; it may take the same idea another way, another blocking or another loop "
                          "to vectorize, where that is more promising than a different idea: then say how "
                          "it differs):\n");
        ao_buf_printf(&J->earlier, "- %s\n", title[0] ? title : "(untitled)");
    }
    return 0;
}

/* The wave's calls done: each plan judged and sent on, in order, and
 * released.  erc: the wave's state so far (-1: prepared badly, nothing
 * is sent).  0, or -1 with reason set (or the stage failed). */
static int wave_finish(struct planner *pl, struct job *J, long i, struct call *calls, int made, int erc)
{
    for (int j = 0; j < made; j++) {
        struct ao_plan_msg *p = &calls[j].p;
        if (j && calls[j].agent) { /* a helper's calls go in the stage's total, logged once */
            ao_llm_usage_add(&pl->agent.total, &calls[j].agent->total);
            memset(&calls[j].agent->total, 0, sizeof calls[j].agent->total);
        }
        if (!erc && calls[j].rc < 0)
            erc = ao_io_fail(J->io, "%s", calls[j].why); /* the stage stops; the candidate comes again */
        if (!erc && !p->text && !p->error)
            erc = -1, snprintf(J->reason, J->len, "the model gave neither a plan nor why not");
        else if (!erc && p->text && plan_judge(J, p, i + j) < 0)
            erc = -1, snprintf(J->reason, J->len, "plan %ld: an earlier plan's id is too long", i + j);
        if (!erc) {
            p->tokens = ao_usage_json(&calls[j].u);
            p->cost_usd = calls[j].u.cost_usd;
            ao_info("%s: %s%s", p->env.id, p->error ? p->error : p->duplicate_of ? "a duplicate of " : "planned",
                    p->duplicate_of && !p->error ? p->duplicate_of : "");
            erc = emit(J->io, p, J->rank * J->plans + i + j, J->reason, J->len);
            /* a duplicate too: the candidate handed out again gets every
             * answer from the store, not a model call for each duplicate
             * (issue 68: 7 plan calls where 3 were made) */
            if (!erc && p->text)
                note_planned(pl, p);
        }
        ao_msg_release(&ao_msg_plan, p);
        free(calls[j].earlier);
        free(calls[j].kept);
    }
    return erc;
}

static int process(void *ctx, struct ao_io *io, const cJSON *msg, char *reason, size_t len)
{
    struct planner *pl = ctx;
    struct job J = {.io = io, .reason = reason, .len = len};
    int rc = job_start(pl, &J, msg);

    for (long i = 0, w; rc == 0 && i < J.plans; i += w) {
        struct call calls[MAX_WIDTH];
        int made = 0;

        /* the wave: in the distinct mode never more than the plans before it plus one */
        w = calls_at_once(pl);
        if (strcmp(J.mode, "distinct") == 0 && w > i + 1)
            w = i + 1;
        if (w > J.plans - i)
            w = J.plans - i;
        memset(calls, 0, sizeof calls);
        rc = wave_prepare(pl, &J, i, w, calls, &made);
        if (rc == 0)
            run_wave(pl, calls, (int)w);
        rc = wave_finish(pl, &J, i, calls, made, rc);
    }
    job_end(&J);
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
    pl.width = ao_config_int(&s.cfg, "plan-width");
    pl.cfg = &s.cfg;
    if (strcmp(pl.mode, "distinct") != 0 && strcmp(pl.mode, "independent") != 0) {
        ao_err("--plan-mode must be distinct or independent");
        return ao_stage_close(&s, AO_EXIT_USAGE);
    }
    if (pl.width < 1 || pl.width > MAX_WIDTH) {
        ao_err("--plan-width must be 1 to %d", MAX_WIDTH);
        return ao_stage_close(&s, AO_EXIT_USAGE);
    }
    if (pl.plans < 1 || pl.plans > AO_MAX_PLANS || pl.expn < 1) {
        ao_err("--plans must be 1 to %d and --expn at least 1", AO_MAX_PLANS);
        return ao_stage_close(&s, AO_EXIT_USAGE);
    }
    code = ao_agent_run(&s, &pl.agent, "planner", process, &pl, "candidates", "plans");
    for (int i = 0; i < pl.nhelpers; i++)
        ao_agent_release(&pl.helpers[i]);
    return code;
}
