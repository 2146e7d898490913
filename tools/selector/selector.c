/* selector.c - accelopt-selector: owns each run (DESIGN.md section 5).
 *
 * A task starts a run: the baseline kernel goes out to be profiled.  Each
 * result fills its slot of the iteration; when every slot has one, the beam
 * keeps the best B of parents and correct children, the instructive pairs go
 * to the summarizer, and once every pair is acked (or the memory deadline
 * passed) the beam goes out as the next iteration's candidates, or the run
 * ends with a `done`.  A slot whose result never comes (its kernel went to
 * the dead letters, a stage never answered) is filled with a `lost` result
 * once no result of its iteration has come for the slot deadline, so every
 * run ends with one `done`.
 *
 * All state lives in the run store (Redis, or a JSON file in pipe mode), so a
 * restarted selector carries on.  A step that sends messages first writes
 * them to the run's outbox with the new state, then sends and flushes them,
 * then clears the outbox's pending mark; a selector that starts finds the
 * outboxes still pending and sends them again (ids are stable, so the
 * receivers see a duplicate at worst).  Results and acks are recorded with
 * HSETNX by slot and pair id, so redelivered messages count once. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agents/diag.h"
#include "core/exitcode.h"
#include "core/log.h"
#include "core/redis.h"
#include "core/signals.h"
#include "core/task.h"
#include "core/util.h"
#include "state/memory.h"
#include "state/phase.h"
#include "state/runstore.h"
#include "state/select.h"
#include "targets/target.h"
#include "wire/msg.h"
#include "wire/names.h"
#include "wire/runconfig.h"
#include "wire/sign.h"
#include "wire/stage.h"
#include "wire/verdict.h"

#define ACTIVE AO_KEY_ACTIVE
#define FIX_DIAG_MAX 4000 /* bytes of diagnostics a fix request carries */

static const struct ao_option options[] = {
    {"beam", 'b', AO_OPT_INT, "6", "B", "kernels kept per iteration when the run names none"},
    {"plans", 'n', AO_OPT_INT, "12", "N", "plans per candidate when the run names none"},
    {"samples", 'k', AO_OPT_INT, "2", "K", "kernels per plan when the run names none"},
    {"iters", 't', AO_OPT_INT, "16", "T", "iterations when the run names none"},
    {"topk", 0, AO_OPT_INT, "8", "N", "pairs summarized per iteration at most"},
    {"expn", 0, AO_OPT_INT, "16", "N", "memory items kept per scope"},
    {"memory-scope", 0, AO_OPT_STR, "target", "SCOPE", "memory: target, task, none or a name"},
    {"seed", 0, AO_OPT_INT, "0", "N", "seed passed to the agents"},
    {"memory-deadline", 0, AO_OPT_NUM, "600", "SECONDS",
     "release the next iteration this long after its pairs were sent, acked or not"},
    {"slot-deadline", 0, AO_OPT_NUM, "1800", "SECONDS",
     "an iteration's missing results are lost once none has come for this long"},
    {"fix-attempts", 0, AO_OPT_INT, "2", "F",
     "send a failed model kernel back to the model this many times (0: never)"},
    {"plan-mode", 0, AO_OPT_STR, "distinct", "MODE",
     "distinct (each plan call is told the earlier titles) or independent (the paper's)"},
    {"size", 0, AO_OPT_STR, "tiny", "CLASS", "size class when a task names none"},
    {"redis", 0, AO_OPT_STR, NULL, "URL", "keep run state in redis (redis://host:port)"},
    {"redis-prefix", 0, AO_OPT_STR, "accelopt:", "PREFIX", "prefix of every redis key"},
    {"state", 0, AO_OPT_STR, NULL, "FILE", "pipe mode without redis: keep run state in FILE"},
    AO_STAGE_OPTIONS,
    AO_COMMON_OPTIONS,
};
#define NOPTS ((int)(sizeof options / sizeof options[0]))

static const char *const topics[] = {AO_TOPIC_TASKS, AO_TOPIC_RESULTS, AO_TOPIC_EXPERIENCES,
                                     NULL};

/* The selector's options that give a run's config its defaults. */
static const struct {
    const char *key, *option;
} defaults[] = {
    {"beam", "beam"}, {"plans", "plans"}, {"samples", "samples"}, {"iters", "iters"},
    {"topk", "topk"}, {"expn", "expn"}, {"seed", "seed"}, {"memory_deadline_s", "memory-deadline"},
    {"slot_deadline_s", "slot-deadline"}, {"fix_attempts", "fix-attempts"},
};

struct selector {
    struct ao_config *cfg;
    struct ao_redis *redis;
    struct ao_runstore *store;
    double last_tick;
    unsigned resumed; /* the transport's generation whose runs were resumed */
    struct warned { char run[200]; long mark; struct warned *next; } *warned;
    struct ao_sign_key key; /* a result counts only with a profiler's signature */
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void setn(cJSON *o, const char *k, double v)
{
    cJSON *j = cJSON_GetObjectItemCaseSensitive(o, k);
    if (j)
        cJSON_SetNumberValue(j, v);
    else
        cJSON_AddNumberToObject(o, k, v);
}

static void sets(cJSON *o, const char *k, const char *v)
{
    cJSON_DeleteItemFromObjectCaseSensitive(o, k);
    cJSON_AddStringToObject(o, k, v);
}

static void setj(cJSON *o, const char *k, cJSON *v)
{
    cJSON_DeleteItemFromObjectCaseSensitive(o, k);
    cJSON_AddItemToObject(o, k, v);
}

/* The run's effective config: its task's, completed with the selector's
 * defaults, then checked whole (wire/runconfig.h): a default out of bounds
 * is refused as a task's value would be. */
static cJSON *run_config(struct selector *sel, const cJSON *given, char *reason, size_t len)
{
    cJSON *c = given ? cJSON_Duplicate(given, 1) : cJSON_CreateObject();
    struct ao_run_config rc;
    char key[AO_KEY_MAX];
    int ok;

    if (!cJSON_IsObject(c)) {
        cJSON_Delete(c);
        snprintf(reason, len, given ? "config must be an object" : "out of memory");
        return NULL;
    }
    for (size_t i = 0; i < sizeof defaults / sizeof defaults[0]; i++)
        if (!cJSON_GetObjectItemCaseSensitive(c, defaults[i].key))
            cJSON_AddNumberToObject(c, defaults[i].key, ao_config_num(sel->cfg, defaults[i].option));
    if (!cJSON_GetObjectItemCaseSensitive(c, "memory_scope"))
        cJSON_AddStringToObject(c, "memory_scope", ao_config_str(sel->cfg, "memory-scope"));
    if (!cJSON_GetObjectItemCaseSensitive(c, "plan_mode"))
        cJSON_AddStringToObject(c, "plan_mode", ao_config_str(sel->cfg, "plan-mode"));
    if (ao_run_config_decode(c, &rc, reason, len) < 0) {
        cJSON_Delete(c);
        return NULL;
    }
    ok = ao_memory_key(rc.memory_scope, ao_target_default()->name, "t", key, sizeof key, reason, len) >= 0;
    ao_run_config_release(&rc);
    if (!ok) {
        cJSON_Delete(c);
        return NULL;
    }
    return c;
}

/* The run's config as run_config completed it (the state's "config"),
 * its numbers: memory_scope is left out (memory_on says what matters of
 * it here), so there is nothing to release. */
static struct ao_run_config config_of(const cJSON *state)
{
    struct ao_run_config c;
    char err[AO_ERRLEN];

    if (ao_run_config_decode(cJSON_GetObjectItemCaseSensitive(state, "config"), &c, err, sizeof err) < 0)
        ao_msg_init(&ao_rec_run_config, &c); /* checked when the run began: not seen */
    free(c.memory_scope);
    c.memory_scope = NULL;
    return c;
}

/* Does the run keep a memory (its scope is not "none")? */
static int memory_on(const cJSON *state)
{
    const char *scope = ao_json_str(cJSON_GetObjectItemCaseSensitive(state, "config"), "memory_scope", "");
    return strcmp(scope, "none") != 0;
}

/* How long an iteration waits for a missing result (the run's slot deadline). */
static double slot_deadline(const cJSON *state)
{
    double d = config_of(state).slot_deadline_s;
    return isnan(d) ? 1800 : d;
}

/* A config's integer, or def where it is absent. */
static long long int_or(long long v, long long def)
{
    return v == AO_ABSENT_INT ? def : v;
}

/* ---- the store ---- */

static cJSON *load_json(struct selector *sel, const char *run, const char *field, struct ao_io *io)
{
    char key[AO_KEY_MAX], err[AO_ERRLEN], *text = NULL;
    cJSON *j;
    int rc;

    if (ao_name(key, sizeof key, AO_KEY_RUN, run) < 0) {
        ao_io_fail(io, "run id '%.40s...' is too long for a key", run);
        return NULL;
    }
    if ((rc = ao_rs_hget(sel->store, key, field, &text, err, sizeof err)) < 0) {
        ao_io_fail(io, "run store: %s", err);
        return NULL;
    }
    if (rc == 0)
        return cJSON_CreateNull(); /* no such run */
    j = cJSON_Parse(text);
    free(text);
    if (!j)
        ao_io_fail(io, "run '%s': field '%s' is not JSON", run, field);
    return j;
}

static int store_json(struct selector *sel, const char *run, const char *field, const cJSON *v,
                      struct ao_io *io)
{
    char key[AO_KEY_MAX], err[AO_ERRLEN], *text = cJSON_PrintUnformatted(v);
    int rc;

    if (!text)
        return ao_io_fail(io, "out of memory");
    if (ao_name(key, sizeof key, AO_KEY_RUN, run) < 0) {
        cJSON_free(text);
        return ao_io_fail(io, "run id '%.40s...' is too long for a key", run);
    }
    rc = ao_rs_hset(sel->store, key, field, text, err, sizeof err);
    cJSON_free(text);
    return rc < 0 ? ao_io_fail(io, "run store: %s", err) : 0;
}

static int save(struct selector *sel, struct ao_io *io)
{
    char err[AO_ERRLEN];
    return ao_runstore_save(sel->store, err, sizeof err) < 0 ? ao_io_fail(io, "%s", err) : 0;
}

/* Send the run's pending outbox, flush, and mark it sent. */
static int send_outbox(struct selector *sel, struct ao_io *io, const char *run, const cJSON *outbox)
{
    char key[AO_KEY_MAX], err[AO_ERRLEN];
    const cJSON *it;
    struct ao_inmsg none = {0};

    cJSON_ArrayForEach(it, outbox) {
        const char *topic = ao_json_str(it, "topic", NULL);
        const cJSON *m = cJSON_GetObjectItemCaseSensitive(it, "msg");
        if (topic && m && ao_io_emit_json(io, topic, run, m) < 0)
            return -1;
    }
    if (ao_io_commit(io, &none) < 0) /* delivered, or we stop here and resend later */
        return -1;
    if (ao_name(key, sizeof key, AO_KEY_RUN, run) < 0)
        return ao_io_fail(io, "run id '%.40s...' is too long for a key", run);
    if (ao_rs_hset(sel->store, key, "outbox_pending", "0", err, sizeof err) < 0)
        return ao_io_fail(io, "run store: %s", err);
    return save(sel, io);
}

/* Commit a step: the new state, the beam, the messages it sends. */
static int step(struct selector *sel, struct ao_io *io, const char *run, const cJSON *state,
                const cJSON *beam, const cJSON *outbox)
{
    char key[AO_KEY_MAX], err[AO_ERRLEN];

    if (ao_name(key, sizeof key, AO_KEY_RUN, run) < 0)
        return ao_io_fail(io, "run id '%.40s...' is too long for a key", run);
    if ((beam && store_json(sel, run, "beam", beam, io) < 0) ||
        store_json(sel, run, "outbox", outbox, io) < 0 ||
        ao_rs_hset(sel->store, key, "outbox_pending", "1", err, sizeof err) < 0 ||
        store_json(sel, run, "state", state, io) < 0) /* last: the step is taken */
        return io->err[0] ? -1 : ao_io_fail(io, "run store: %s", err);
    if (save(sel, io) < 0 || send_outbox(sel, io, run, outbox) < 0)
        return -1;
    /* a finished run is no longer in flight (accelopt status, ticks) */
    if (ao_phase_of(state) == AO_PHASE_DONE && ao_rs_srem(sel->store, ACTIVE, run, err, sizeof err) < 0)
        return ao_io_fail(io, "run store: %s", err);
    return 0;
}

static int out_add(cJSON *outbox, const char *topic, const struct ao_msg_type *t, const void *msg)
{
    cJSON *e = cJSON_CreateObject(), *m = ao_msg_encode(t, msg);

    if (!e || !m || !cJSON_AddStringToObject(e, "topic", topic)) {
        cJSON_Delete(e);
        cJSON_Delete(m);
        return -1;
    }
    cJSON_AddItemToObject(e, "msg", m);
    cJSON_AddItemToArray(outbox, e);
    return 0;
}

/* ---- messages out ---- */

/* How uncertain a measurement's median is, relative: 1.58 IQR/median over
 * the square root of the calls (the notched box plot's 95% interval of a
 * median); what separates two processes of one kernel comes on top as
 * AO_NOISE_FLOOR (select.h). */
static double median_u(const cJSON *m)
{
    double s = ao_json_num(m, "spread", 0), n = ao_json_num(m, "repeats", 0);
    return s > 0 && n >= 1 ? 1.58 * s / sqrt(n) : s > 0 ? s : 0;
}

static int differs(const char *a, const char *b)
{
    return !a || !b || strcmp(a, b) != 0;
}

static char *dup_or_null(const char *s)
{
    return s ? strdup(s) : NULL;
}

static int env_from(struct ao_env *env, const char *type, const char *id, const char *run,
                    const cJSON *state, long long iter)
{
    return ao_env_set(env, type, id, run, ao_json_str(state, "task", NULL),
                      ao_json_str(state, "target", NULL), iter);
}

/* The beam's member of rank r as the candidate of iteration iter. */
static int add_candidate(cJSON *outbox, const char *run, const cJSON *state, const cJSON *b,
                         int r, long long iter)
{
    struct ao_candidate_msg c;
    const char *tp = ao_json_str(state, "task_path", NULL);
    const char *th = ao_json_str(state, "task_sha256", NULL);
    char id[AO_ID_BUF];
    int rc;

    ao_msg_init(&ao_msg_candidate, &c);
    if (ao_name(id, sizeof id, AO_ID_CANDIDATE, run, iter, r) < 0)
        return -1;
    c.rank = r;
    c.latency_ns = ao_json_num(b, "latency_ns", NAN);
    c.pct_of_peak = ao_json_num(b, "pct_of_peak", NAN);
    c.baseline_latency_ns = ao_json_num(state, "baseline_ns", NAN);
    rc = env_from(&c.env, "candidate", id, run, state, iter) < 0 ||
         !(c.source = dup_or_null(ao_json_str(b, "source", NULL))) ||
         !(c.sha256 = dup_or_null(ao_json_str(b, "sha256", NULL))) ||
         !(c.kernel_id = dup_or_null(ao_json_str(b, "kernel_id", NULL))) ||
         !(c.size = dup_or_null(ao_json_str(state, "size", NULL))) ||
         (tp && !(c.task_path = strdup(tp))) || (th && !(c.task_sha256 = strdup(th))) ||
         !(c.config = cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(state, "config"), 1)) ||
         (cJSON_GetObjectItemCaseSensitive(b, "profile") &&
          !(c.profile = cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(b, "profile"), 1))) ||
         out_add(outbox, AO_TOPIC_CANDIDATES, &ao_msg_candidate, &c) < 0 ? -1 : 0;
    ao_msg_release(&ao_msg_candidate, &c);
    return rc;
}

/* End the run: the `done` message goes to the outbox. */
static int add_done_final(struct selector *sel, cJSON *outbox, const char *run, cJSON *state,
                          const cJSON *beam, const char *stopped, const char *reason,
                          const struct ao_result_msg *final)
{
    struct ao_done_msg d;
    const cJSON *best = cJSON_GetArrayItem(beam, 0);
    struct ao_run_usage u = ao_runstore_usage(sel->store, run);
    double base = ao_json_num(state, "baseline_ns", NAN);
    const char *method;
    char id[AO_ID_BUF], why[700];
    double quoted;
    int rc;

    ao_msg_init(&ao_msg_done, &d);
    if (ao_name(id, sizeof id, AO_ID_DONE, run) < 0)
        return -1;
    d.iterations = (long long)ao_json_num(state, "completed", NAN);
    d.kernels_evaluated = (long long)ao_json_num(state, "kernels", NAN);
    d.memory_deadline_missed = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(state, "memory_deadline_missed"));
    d.cost_usd = u.usd;
    d.baseline_latency_ns = base;
    d.slots_lost = (long long)ao_json_num(state, "lost", 0);
    d.slot_deadline_s = config_of(state).slot_deadline_s;
    if (best) {
        d.speedup = d.search_speedup = base / ao_json_num(best, "latency_ns", NAN);
        d.pct_of_peak = ao_json_num(best, "pct_of_peak", NAN);
    }
    /* the figure quoted: the final head-to-head where there was one */
    method = best && !differs(ao_json_str(best, "sha256", NULL),
                              ao_json_str(state, "baseline_sha256", NULL)) ? "baseline" : "search";
    if (strcmp(method, "baseline") == 0) {
        d.speedup = 1; /* nothing beat the baseline: its own measurement against itself */
    } else if (final && ao_verdict_of(final->status) == AO_V_OK && final->head_to_head) {
        method = "head_to_head";
        d.speedup = ao_json_num(final->head_to_head, "speedup", NAN);
        d.speedup_low = ao_json_num(final->head_to_head, "speedup_low", NAN);
        d.speedup_high = ao_json_num(final->head_to_head, "speedup_high", NAN);
    } else if (final) {
        method = "none"; /* the best kernel failed when measured again: no claim */
        d.speedup = 1;
        snprintf(why, sizeof why, "%s%sthe best kernel failed its final head-to-head (%.40s: %.300s): "
                 "no speedup is claimed", reason ? reason : "", reason ? "; " : "", final->status,
                 final->reason ? final->reason : "no reason given");
        reason = why;
    }
    quoted = best ? d.speedup : 1.0;
    rc = env_from(&d.env, "done", id, run, state, (long long)ao_json_num(state, "iter", NAN)) < 0 ||
         !(d.speedup_method = strdup(method)) ||
         !(d.stopped = strdup(stopped)) || (reason && !(d.reason = strdup(reason))) ||
         (best && !(d.best = cJSON_Duplicate(best, 1))) ||
         !(d.history = cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(state, "history"), 1)) ||
         !(d.tokens = cJSON_CreateObject()) ||
         !cJSON_AddNumberToObject(d.tokens, "prompt", u.prompt) ||
         !cJSON_AddNumberToObject(d.tokens, "completion", u.completion) ||
         out_add(outbox, AO_TOPIC_RUNS, &ao_msg_done, &d) < 0 ? -1 : 0;
    ao_msg_release(&ao_msg_done, &d);
    ao_phase_set(state, AO_PHASE_DONE);
    sets(state, "stopped", stopped);
    ao_info("run %s: done (%s) after %lld iterations, %lld kernels, best %.3gx (%s)", run, stopped,
            (long long)ao_json_num(state, "completed", NAN), (long long)ao_json_num(state, "kernels", NAN),
            quoted, method);
    return rc;
}

static int add_done(struct selector *sel, cJSON *outbox, const char *run, cJSON *state,
                    const cJSON *beam, const char *stopped, const char *reason)
{
    return add_done_final(sel, outbox, run, state, beam, stopped, reason, NULL);
}

/* The run ends: unless the baseline is still the best, its best kernel is
 * measured head to head against the baseline in one sitting of a profiler,
 * and the done waits for that (phase "final"); the baseline's source is
 * read again from the task, and must be the one the run started from. */
static int finish(struct selector *sel, cJSON *outbox, const char *run, cJSON *state,
                  const cJSON *beam, const char *stopped)
{
    const cJSON *best = cJSON_GetArrayItem(beam, 0);
    const char *bsha = ao_json_str(best, "sha256", NULL), *src = ao_json_str(best, "source", NULL);
    const char *base_sha = ao_json_str(state, "baseline_sha256", NULL);
    const char *tp = ao_json_str(state, "task_path", NULL), *th = ao_json_str(state, "task_sha256", NULL);
    const struct ao_target *tg = ao_target_get(ao_json_str(state, "target", ""), NULL, 0);
    struct ao_kernel_msg k;
    char path[800], hex[65], id[AO_ID_BUF], topic[AO_TOPIC_MAX], err[AO_ERRLEN], *base = NULL;
    int rc;

    if (!bsha || !src || !base_sha || !tp || !tg || strcmp(bsha, base_sha) == 0)
        return add_done(sel, outbox, run, state, beam, stopped, NULL);
    if (ao_name(path, sizeof path, "%s/baseline.%s", tp, tg->ext) < 0 ||
        !(base = ao_read_file(path, NULL, err, sizeof err)))
        return add_done(sel, outbox, run, state, beam, stopped, "no head-to-head: the baseline is gone");
    ao_sha256_hex(base, strlen(base), hex);
    if (strcmp(hex, base_sha) != 0) {
        free(base);
        return add_done(sel, outbox, run, state, beam, stopped,
                        "no head-to-head: the task's baseline changed during the run");
    }
    ao_msg_init(&ao_msg_kernel, &k);
    k.baseline_source = base; /* freed with k */
    rc = ao_name(id, sizeof id, AO_ID_KERNEL_FINAL, run) < 0 ||
         ao_name(topic, sizeof topic, AO_TOPIC_KERNELS, tg->name) < 0 ||
         env_from(&k.env, "kernel", id, run, state, (long long)ao_json_num(state, "iter", NAN)) < 0 ||
         !(k.source = strdup(src)) || !(k.sha256 = strdup(bsha)) || !(k.slot = strdup("0.0.0")) ||
         !(k.size = dup_or_null(ao_json_str(state, "size", NULL))) ||
         !(k.task_path = strdup(tp)) || (th && !(k.task_sha256 = strdup(th))) ||
         !(k.plan_text = strdup("the final head-to-head against the baseline")) ||
         out_add(outbox, topic, &ao_msg_kernel, &k) < 0 ? -1 : 0;
    ao_msg_release(&ao_msg_kernel, &k);
    if (rc == 0) {
        ao_phase_set(state, AO_PHASE_FINAL);
        sets(state, "final_stop", stopped);
        sets(state, "final_kernel", bsha);
        setn(state, "progress", now_s());
        ao_info("run %s: %s; its best kernel goes head to head with the baseline", run, stopped);
    }
    return rc;
}

/* The final head-to-head's result: the done message.  A result that is not
 * it is ignored as late (or refused as not asked for). */
static int on_final(struct selector *sel, struct ao_io *io, const char *run, cJSON *state,
                    const struct ao_result_msg *r, char *reason, size_t len)
{
    cJSON *beam, *outbox;
    char id[AO_ID_BUF];
    int rc;

    if (ao_name(id, sizeof id, AO_ID_KERNEL_FINAL, run) < 0 || differs(r->kernel_id, id)) {
        ao_debug("run %s: result %s came after the run's last iteration; ignored", run, r->env.id);
        return 0;
    }
    if (differs(r->env.task, ao_json_str(state, "task", NULL)) ||
        differs(r->env.target, ao_json_str(state, "target", NULL)) ||
        differs(r->size, ao_json_str(state, "size", NULL)) ||
        differs(r->task_sha256, ao_json_str(state, "task_sha256", NULL)) ||
        differs(r->sha256, ao_json_str(state, "final_kernel", NULL))) {
        snprintf(reason, len, "a head-to-head result for another task, size, target or kernel than "
                 "the run's best");
        return -1;
    }
    if (!(beam = load_json(sel, run, "beam", io)))
        return -1;
    if (!(outbox = cJSON_CreateArray())) {
        cJSON_Delete(beam);
        return ao_io_fail(io, "out of memory");
    }
    rc = add_done_final(sel, outbox, run, state, beam, ao_json_str(state, "final_stop", "iterations"),
                        NULL, r) < 0
             ? ao_io_fail(io, "out of memory")
             : step(sel, io, run, state, beam, outbox);
    cJSON_Delete(beam);
    cJSON_Delete(outbox);
    return rc;
}

/* Why the run must stop now, or NULL. */
static const char *budget_stop(struct selector *sel, const char *run, const cJSON *state)
{
    struct ao_run_config c = config_of(state);
    struct ao_run_usage u = ao_runstore_usage(sel->store, run);

    if (int_or(c.budget_tokens, 0) > 0 && u.prompt + u.completion >= (double)c.budget_tokens)
        return "tokens";
    if (c.budget_usd > 0 && u.usd >= c.budget_usd)
        return "dollars";
    if (c.wall_s > 0 && now_s() - ao_json_num(state, "started", NAN) >= c.wall_s)
        return "wall_time";
    return NULL;
}

/* After iteration `iter` (and its memory): the next iteration, or the end. */
static int advance(struct selector *sel, struct ao_io *io, const char *run, cJSON *state,
                   const cJSON *beam)
{
    struct ao_run_config c = config_of(state);
    cJSON *outbox = cJSON_CreateArray();
    long long iter = (long long)ao_json_num(state, "iter", NAN);
    const char *stop = NULL;
    int rc = -1, nbeam = cJSON_GetArraySize(beam);

    if (!outbox)
        return ao_io_fail(io, "out of memory");
    setn(state, "completed", (double)iter);
    if (iter >= int_or(c.iters, LLONG_MAX))
        stop = "iterations";
    else
        stop = budget_stop(sel, run, state);
    if (stop) {
        if (finish(sel, outbox, run, state, beam, stop) < 0)
            goto oom;
    } else {
        iter++;
        setn(state, "iter", (double)iter);
        ao_phase_set(state, AO_PHASE_COLLECT);
        setn(state, "candidates", nbeam);
        setn(state, "opened", now_s());
        setn(state, "progress", now_s());
        for (int r = 0; r < nbeam; r++)
            if (add_candidate(outbox, run, state, cJSON_GetArrayItem(beam, r), r, iter) < 0)
                goto oom;
        ao_info("run %s: iteration %lld, %d candidates", run, iter, nbeam);
    }
    rc = step(sel, io, run, state, beam, outbox);
    goto out;
oom:
    rc = ao_io_fail(io, "out of memory");
out:
    cJSON_Delete(outbox);
    return rc;
}

/* ---- a task starts a run ---- */

static int on_task(struct selector *sel, struct ao_io *io, const cJSON *msg, char *reason,
                   size_t len)
{
    const struct ao_target *target;
    struct ao_task_msg t;
    struct ao_task task;
    struct ao_kernel_msg k;
    cJSON *state = NULL, *config = NULL, *outbox = NULL, *have = NULL;
    char path[600], hex[65], id[AO_ID_BUF], err[AO_ERRLEN], *src = NULL;
    const char *size;
    int rc = -1;

    ao_msg_init(&ao_msg_kernel, &k);
    if (ao_msg_decode(&ao_msg_task, msg, &t, reason, len) < 0)
        return -1;
    if (!(have = load_json(sel, t.env.run, "state", io)))
        goto out;
    if (!cJSON_IsNull(have)) {
        ao_info("run %s: already started; task message %s ignored", t.env.run, t.env.id);
        rc = 0;
        goto out;
    }
    if (!(target = ao_target_get(t.env.target, reason, len)))
        goto out;
    if (ao_name(path, sizeof path, "%s", t.spec ? t.spec : t.env.task) < 0) {
        snprintf(reason, len, "the task's path is over %zu bytes", sizeof path - 1);
        goto out;
    }
    if (ao_task_find(path, &task, err, sizeof err) < 0) {
        snprintf(reason, len, "task '%.60s': %s", t.env.task, err);
        goto out;
    }
    size = t.size ? t.size : ao_config_str(sel->cfg, "size");
    {
        long long dims[AO_MAX_DIMS];
        char p2[700];
        if (ao_task_size(&task, size, dims, err, sizeof err) < 0) {
            snprintf(reason, len, "%s", err);
            goto out;
        }
        if (ao_name(p2, sizeof p2, "%s/baseline.%s", task.dir, target->ext) < 0 ||
            !(src = ao_read_file(p2, NULL, err, sizeof err))) {
            snprintf(reason, len, "task '%.60s' has no baseline: %s", t.env.task, err);
            goto out;
        }
    }
    if (!(config = run_config(sel, t.config, reason, len)))
        goto out;
    if (!(state = cJSON_CreateObject()) || !(outbox = cJSON_CreateArray()))
        goto oom;
    ao_phase_set(state, AO_PHASE_BASELINE);
    sets(state, "task", t.env.task);
    sets(state, "target", t.env.target);
    sets(state, "size", size);
    sets(state, "task_path", task.dir);
    sets(state, "task_sha256", task.sha256);
    ao_sha256_hex(src, strlen(src), hex);
    sets(state, "baseline_sha256", hex); /* the one kernel iteration 0 takes */
    setn(state, "iter", 0);
    setn(state, "candidates", 1);
    setn(state, "completed", 0);
    setn(state, "kernels", 0);
    setn(state, "failures", 0);
    setn(state, "lost", 0);
    setn(state, "started", now_s());
    setn(state, "opened", now_s());
    setj(state, "history", cJSON_CreateArray());
    setj(state, "config", config);
    config = NULL;
    /* iteration 0: the baseline, profiled like any kernel */
    ao_sha256_hex(src, strlen(src), hex);
    if (ao_name(id, sizeof id, AO_ID_KERNEL, t.env.run, 0LL, "0.0.0") < 0)
        goto oom; /* a run id is at most AO_RUN_ID_MAX: it fits */
    if (env_from(&k.env, "kernel", id, t.env.run, state, 0) < 0 || !(k.size = strdup(size)) ||
        !(k.sha256 = strdup(hex)) || !(k.slot = strdup("0.0.0")) ||
        !(k.task_path = strdup(task.dir)) || !(k.task_sha256 = strdup(task.sha256)) ||
        !(k.plan_text = strdup("the baseline")))
        goto oom;
    k.source = src;
    src = NULL;
    {
        char topic[AO_TOPIC_MAX];
        if (ao_name(topic, sizeof topic, AO_TOPIC_KERNELS, target->name) < 0 ||
            out_add(outbox, topic, &ao_msg_kernel, &k) < 0)
            goto oom;
    }
    if (ao_rs_sadd(sel->store, ACTIVE, t.env.run, err, sizeof err) < 0) {
        rc = ao_io_fail(io, "run store: %s", err);
        goto out;
    }
    ao_info("run %s: %s at %s, baseline sent", t.env.run, t.env.task, size);
    {
        cJSON *beam = cJSON_CreateArray();
        rc = beam ? step(sel, io, t.env.run, state, beam, outbox) : ao_io_fail(io, "out of memory");
        cJSON_Delete(beam);
    }
    goto out;
oom:
    rc = ao_io_fail(io, "out of memory");
out:
    free(src);
    cJSON_Delete(have);
    cJSON_Delete(state);
    cJSON_Delete(config);
    cJSON_Delete(outbox);
    ao_msg_release(&ao_msg_kernel, &k);
    ao_msg_release(&ao_msg_task, &t);
    return rc;
}

/* ---- results fill the iteration ---- */

/* "r.p.s" into its numbers; 0 or -1. */
static int parse_slot(const char *slot, int *r, int *p, int *s)
{
    return ao_slot_parse(slot, r, p, s);
}

/* The slots of the open iteration: candidates x plans x samples (1x1x1 for
 * the baseline). */
struct shape {
    int ranks, plans, samples;
};

static struct shape shape_of(const cJSON *state)
{
    struct ao_run_config c = config_of(state);
    if (ao_json_num(state, "iter", 0) == 0)
        return (struct shape){1, 1, 1};
    return (struct shape){(int)ao_json_num(state, "candidates", 1), (int)int_or(c.plans, 1),
                          (int)int_or(c.samples, 1)};
}

/* A beam member made from a result. */
static cJSON *member(const cJSON *res, long long iter)
{
    static const char *const prof[] = {"latency_min_ns", "spread", "t_min_ns", "bound",
                                       "t_memory_ns", "t_matmul_ns", "t_elementwise_ns",
                                       "speedup_vs_baseline", "max_rel_l2", "repeats"};
    cJSON *m = cJSON_CreateObject(), *p = cJSON_CreateObject();

    if (!m || !p) {
        cJSON_Delete(m);
        cJSON_Delete(p);
        return NULL;
    }
    for (const char *const *f = (const char *const[]){"kernel_id", "sha256", "source", "parent",
                                                       "plan", "plan_text", "slot", NULL};
         *f; f++)
        if (ao_json_str(res, *f, NULL))
            cJSON_AddStringToObject(m, *f, ao_json_str(res, *f, NULL));
    cJSON_AddNumberToObject(m, "latency_ns", ao_json_num(res, "latency_ns", NAN));
    if (isfinite(ao_json_num(res, "pct_of_peak", NAN)))
        cJSON_AddNumberToObject(m, "pct_of_peak", ao_json_num(res, "pct_of_peak", NAN));
    cJSON_AddNumberToObject(m, "iter", (double)iter);
    for (size_t i = 0; i < sizeof prof / sizeof prof[0]; i++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(res, prof[i]);
        if (cJSON_IsNumber(v) || cJSON_IsString(v))
            cJSON_AddItemToObject(p, prof[i], cJSON_Duplicate(v, 0));
    }
    cJSON_AddItemToObject(m, "profile", p);
    return m;
}

/* A member's profile as the summarizer sees it: latency_ns, pct_of_peak
 * and the profile fields, in one object. */
static cJSON *pair_profile(const cJSON *m)
{
    cJSON *p = cJSON_CreateObject();
    const cJSON *it;

    if (!p)
        return NULL;
    cJSON_AddNumberToObject(p, "latency_ns", ao_json_num(m, "latency_ns", NAN));
    if (isfinite(ao_json_num(m, "pct_of_peak", NAN)))
        cJSON_AddNumberToObject(p, "pct_of_peak", ao_json_num(m, "pct_of_peak", NAN));
    cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(m, "profile"))
        cJSON_AddItemToObject(p, it->string, cJSON_Duplicate(it, 1));
    return p;
}

static int add_pair(cJSON *outbox, const char *run, const cJSON *state, long long iter,
                    const cJSON *parent, const cJSON *child, double speedup, int rank, int plan,
                    cJSON *ids)
{
    struct ao_pair_msg p;
    const cJSON *slow = speedup > 1 ? parent : child, *fast = speedup > 1 ? child : parent;
    const char *plan_text = ao_json_str(child, "plan_text", NULL);
    char id[AO_ID_BUF];
    int rc;

    ao_msg_init(&ao_msg_pair, &p);
    if (ao_name(id, sizeof id, AO_ID_PAIR, run, iter, rank, plan) < 0)
        return -1;
    p.speedup = speedup > 1 ? speedup : 1 / speedup; /* how much faster the fast one is */
    /* a ratio's relative uncertainty is at most the sum of its terms' */
    p.speedup_spread = ao_json_num(cJSON_GetObjectItemCaseSensitive(slow, "profile"), "spread", NAN) +
                       ao_json_num(cJSON_GetObjectItemCaseSensitive(fast, "profile"), "spread", NAN);
    rc = env_from(&p.env, "pair", id, run, state, iter) < 0 ||
         !(p.slow_source = dup_or_null(ao_json_str(slow, "source", NULL))) ||
         !(p.fast_source = dup_or_null(ao_json_str(fast, "source", NULL))) ||
         !(p.slow_sha256 = dup_or_null(ao_json_str(slow, "sha256", NULL))) ||
         !(p.fast_sha256 = dup_or_null(ao_json_str(fast, "sha256", NULL))) ||
         !(p.direction = strdup(speedup > 1 ? "+" : "-")) ||
         !(p.slow_profile = pair_profile(slow)) || !(p.fast_profile = pair_profile(fast)) ||
         (plan_text && !(p.plan = strdup(plan_text))) ||
         !(p.config = cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(state, "config"), 1)) ||
         out_add(outbox, AO_TOPIC_PAIRS, &ao_msg_pair, &p) < 0 ? -1 : 0;
    if (rc == 0)
        cJSON_AddItemToArray(ids, cJSON_CreateString(id));
    ao_msg_release(&ao_msg_pair, &p);
    return rc;
}

/* Every slot of the iteration has its result: choose, then pairs or on. */
static int close_iteration(struct selector *sel, struct ao_io *io, const char *run, cJSON *state,
                           cJSON *beam, const char *slots_key)
{
    struct ao_run_config c = config_of(state);
    const cJSON *it;
    long long iter = (long long)ao_json_num(state, "iter", NAN);
    int nbeam = cJSON_GetArraySize(beam), n = 0, nok = 0, nfail = 0, order[AO_MAX_BEAM], npairs = 0,
        nsel;
    double parent_ns[AO_MAX_BEAM];
    char err[AO_ERRLEN];
    cJSON *all, **res = NULL, *newbeam = NULL, *outbox = NULL, *hist = NULL, *statuses = NULL,
                *pair_ids = NULL;
    struct ao_sel_kernel *k = NULL;
    struct ao_sel_pair pairs[64];
    int *from = NULL, rc = -1;

    if (!(all = ao_rs_hgetall(sel->store, slots_key, err, sizeof err)))
        return ao_io_fail(io, "run store: %s", err);
    n = cJSON_GetArraySize(all);
    if (!(res = calloc((size_t)n + 1, sizeof *res)) ||
        !(k = calloc((size_t)(n + nbeam) + 1, sizeof *k)) ||
        !(from = calloc((size_t)(n + nbeam) + 1, sizeof *from)) || !(newbeam = cJSON_CreateArray()) ||
        !(outbox = cJSON_CreateArray()) || !(hist = cJSON_CreateObject()) ||
        !(statuses = cJSON_CreateObject()) || !(pair_ids = cJSON_CreateArray()))
        goto oom;
    for (int r = 0; r < nbeam; r++) {
        const cJSON *b = cJSON_GetArrayItem(beam, r);
        parent_ns[r] = ao_json_num(b, "latency_ns", NAN);
        k[r] = (struct ao_sel_kernel){ao_json_str(b, "sha256", NULL), parent_ns[r], 1, r, -1,
                                      median_u(cJSON_GetObjectItemCaseSensitive(b, "profile"))};
    }
    {
        int i = 0, m = nbeam;
        cJSON_ArrayForEach(it, all) {
            const char *st;
            double ns;
            int r, p, s;
            res[i] = cJSON_Parse(it->valuestring);
            st = ao_json_str(res[i], "status", "unknown");
            ns = ao_json_num(res[i], "latency_ns", NAN);
            setn(statuses, st, ao_json_num(statuses, st, 0) + 1);
            if (ao_verdict_of(st) == AO_V_OK && ns > 0 && parse_slot(it->string, &r, &p, &s) == 0) {
                from[m] = i; /* the child's result */
                k[m++] = (struct ao_sel_kernel){ao_json_str(res[i], "sha256", NULL), ns, 0, r, p,
                                                median_u(res[i])};
                nok++;
            } else if (ao_verdict_of(st) != AO_V_DUPLICATE) { /* a duplicate failed nothing */
                nfail++;
            }
            i++;
        }
        /* k[0..nbeam) are the parents, k[nbeam..m) the correct children */
        nsel = ao_select_beam(k, m, (int)int_or(c.beam, 1), order);
        for (int j = 0; j < nsel; j++) {
            const struct ao_sel_kernel *x = &k[order[j]];
            cJSON *mb = x->parent ? cJSON_Duplicate(cJSON_GetArrayItem(beam, x->rank), 1)
                                  : member(res[from[order[j]]], iter);
            if (!mb)
                goto oom;
            cJSON_AddItemToArray(newbeam, mb);
        }
        if (iter > 0 && memory_on(state))
            npairs = ao_select_pairs(k, m, parent_ns, nbeam, (int)int_or(c.topk, 0), pairs);
        for (int j = 0; j < npairs; j++) {
            const struct ao_sel_kernel *x = &k[pairs[j].child];
            if (add_pair(outbox, run, state, iter, cJSON_GetArrayItem(beam, x->rank),
                         res[from[pairs[j].child]], pairs[j].speedup, x->rank, x->plan, pair_ids) < 0)
                goto oom;
        }
    }
    setn(state, "kernels", ao_json_num(state, "kernels", NAN) + n);
    setn(state, "failures", ao_json_num(state, "failures", NAN) + nfail);
    setn(state, "lost", ao_json_num(state, "lost", 0) + ao_json_num(statuses, ao_verdict_name(AO_V_LOST), 0));
    if (iter == 0) {
        if (nok == 0) {
            const char *why = n ? ao_json_str(res[0], "reason", NULL) : NULL;
            char r2[600];
            snprintf(r2, sizeof r2, "the baseline did not pass: %s (%s)",
                     n ? ao_json_str(res[0], "status", "no status") : "no result",
                     why ? why : "no reason given");
            cJSON_AddNumberToObject(hist, "iter", 0);
            cJSON_AddItemToArray(cJSON_GetObjectItemCaseSensitive(state, "history"), hist);
            hist = NULL;
            if (add_done(sel, outbox, run, state, newbeam, "baseline_failed", r2) < 0)
                goto oom;
            rc = step(sel, io, run, state, newbeam, outbox);
            goto out;
        }
        setn(state, "baseline_ns", ao_json_num(cJSON_GetArrayItem(newbeam, 0), "latency_ns", NAN));
    }
    {
        const cJSON *best = cJSON_GetArrayItem(newbeam, 0);
        double best_ns = ao_json_num(best, "latency_ns", NAN), base = ao_json_num(state, "baseline_ns", NAN);
        cJSON_AddNumberToObject(hist, "iter", (double)iter);
        cJSON_AddNumberToObject(hist, "kernels", n);
        cJSON_AddNumberToObject(hist, "ok", nok);
        cJSON_AddItemToObject(hist, "statuses", statuses);
        statuses = NULL;
        cJSON_AddNumberToObject(hist, "best_ns", best_ns);
        cJSON_AddNumberToObject(hist, "speedup", base / best_ns);
        if (isfinite(ao_json_num(best, "pct_of_peak", NAN)))
            cJSON_AddNumberToObject(hist, "pct_of_peak", ao_json_num(best, "pct_of_peak", NAN));
        cJSON_AddNumberToObject(hist, "pairs", npairs);
        cJSON_AddNumberToObject(hist, "seconds", now_s() - ao_json_num(state, "opened", NAN));
        cJSON_AddItemToArray(cJSON_GetObjectItemCaseSensitive(state, "history"), hist);
        hist = NULL;
        ao_info("run %s: iteration %lld closed: %d kernels, %d correct, best %.4g ns (%.3gx), %d pairs",
                run, iter, n, nok, best_ns, base / best_ns, npairs);
    }
    if (npairs > 0) {
        ao_phase_set(state, AO_PHASE_MEMORY);
        setj(state, "pairs", pair_ids);
        pair_ids = NULL;
        setn(state, "deadline", now_s() + c.memory_deadline_s);
        rc = step(sel, io, run, state, newbeam, outbox);
    } else {
        rc = advance(sel, io, run, state, newbeam); /* nothing to learn: on at once */
    }
    goto out;
oom:
    rc = ao_io_fail(io, "out of memory");
out:
    for (int i = 0; res && i < n; i++)
        cJSON_Delete(res[i]);
    free(res);
    free(k);
    free(from);
    cJSON_Delete(all);
    cJSON_Delete(newbeam);
    cJSON_Delete(outbox);
    cJSON_Delete(hist);
    cJSON_Delete(statuses);
    cJSON_Delete(pair_ids);
    return rc;
}

/* ---- fixes: a failed model kernel goes back to the model ---- */

static int fixable(const struct ao_result_msg *r)
{
    if (!r->source || !r->plan_text || !r->model || strcmp(r->model, "builtin") == 0)
        return 0; /* only a model's kernel can go back to the model */
    return ao_verdict_fixable(ao_verdict_of(r->status));
}

/* The slot's next attempt, asked of the executor: a plan message with the
 * failed kernel and why it failed, trimmed for a model (diag.h). */
static int add_fix(cJSON *outbox, const char *run, const cJSON *state, const cJSON *parent,
                   const struct ao_result_msg *r, int rank, int plan, int sample, long long attempt)
{
    struct ao_plan_msg p;
    const char *tp = ao_json_str(state, "task_path", NULL);
    const char *th = ao_json_str(state, "task_sha256", NULL);
    char id[AO_ID_BUF];
    int rc;

    ao_msg_init(&ao_msg_plan, &p);
    if (ao_name(id, sizeof id, AO_ID_FIX, run, r->env.iter, r->slot, attempt + 1) < 0)
        return -1;
    p.index = plan;
    p.rank = rank;
    p.sample = sample;
    p.attempt = attempt + 1;
    p.parent_latency_ns = ao_json_num(parent, "latency_ns", NAN);
    p.baseline_latency_ns = ao_json_num(state, "baseline_ns", NAN);
    rc = env_from(&p.env, "plan", id, run, state, r->env.iter) < 0 ||
         !(p.candidate_id = strdup(ao_json_str(parent, "kernel_id", "?"))) ||
         !(p.candidate_sha256 = dup_or_null(ao_json_str(parent, "sha256", NULL))) ||
         !(p.source = dup_or_null(ao_json_str(parent, "source", NULL))) ||
         !(p.text = strdup(r->plan_text)) || !(p.failed_source = strdup(r->source)) ||
         !(p.diagnostics = ao_diag_for_model(r->status, r->reason, r->diagnostics, FIX_DIAG_MAX)) ||
         !(p.size = dup_or_null(ao_json_str(state, "size", NULL))) ||
         (tp && !(p.task_path = strdup(tp))) || (th && !(p.task_sha256 = strdup(th))) ||
         !(p.config = cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(state, "config"), 1)) ||
         out_add(outbox, AO_TOPIC_PLANS, &ao_msg_plan, &p) < 0 ? -1 : 0;
    ao_msg_release(&ao_msg_plan, &p);
    return rc;
}

/* A fixable failure with attempts left: record the attempt, send the fix
 * request (a step: resent after a crash; a repeat is harmless, the slot
 * takes one result).  Nothing happens for a slot already filled. */
static int request_fix(struct selector *sel, struct ao_io *io, const struct ao_result_msg *r,
                       cJSON *state, const char *slots_key, int rank, int plan, int sample,
                       long long attempt)
{
    char key[AO_KEY_MAX], field[96], err[AO_ERRLEN], *filled = NULL, *text = NULL;
    cJSON *rec = cJSON_CreateObject(), *beam = NULL, *outbox = cJSON_CreateArray();
    int rc = -1;

    if (!rec || !outbox) {
        rc = ao_io_fail(io, "out of memory");
        goto out;
    }
    if (ao_rs_hget(sel->store, slots_key, r->slot, &filled, err, sizeof err) < 0) {
        rc = ao_io_fail(io, "run store: %s", err);
        goto out;
    }
    if (filled) { /* a late copy of an earlier attempt */
        rc = 0;
        goto out;
    }
    setn(rec, "attempt", (double)attempt);
    sets(rec, "status", r->status);
    if (r->reason)
        sets(rec, "reason", r->reason);
    if (r->tokens)
        setj(rec, "tokens", cJSON_Duplicate(r->tokens, 1));
    if (ao_name(key, sizeof key, AO_KEY_FIXES, slots_key) < 0 ||
        ao_name(field, sizeof field, "%s/a%lld", r->slot, attempt) < 0) {
        rc = ao_io_fail(io, "slot %.40s: its key is too long", r->slot);
        goto out;
    }
    if (!(text = cJSON_PrintUnformatted(rec)) ||
        ao_rs_hsetnx(sel->store, key, field, text, err, sizeof err) < 0) {
        rc = text ? ao_io_fail(io, "run store: %s", err) : ao_io_fail(io, "out of memory");
        goto out;
    }
    if (!(beam = load_json(sel, r->env.run, "beam", io)))
        goto out;
    if (add_fix(outbox, r->env.run, state, cJSON_GetArrayItem(beam, rank), r, rank, plan, sample,
                attempt) < 0) {
        rc = ao_io_fail(io, "out of memory");
        goto out;
    }
    ao_info("run %s: slot %s failed (%s) at attempt %lld; sent back to the model", r->env.run,
            r->slot, r->status, attempt);
    setn(state, "progress", now_s()); /* a fix is progress: the slot deadline starts again */
    rc = step(sel, io, r->env.run, state, NULL, outbox);
out:
    free(filled);
    cJSON_free(text);
    cJSON_Delete(rec);
    cJSON_Delete(beam);
    cJSON_Delete(outbox);
    return rc;
}

/* The slot's result as stored: after fixes, it says how many attempts the
 * slot took, what the earlier ones ended in, and the tokens of them all. */
static char *slot_text(struct selector *sel, const cJSON *msg, const struct ao_result_msg *r,
                       const char *slots_key, long long attempt, char *err, size_t errlen)
{
    char key[AO_KEY_MAX], field[96], *v = NULL, *text;
    cJSON *m = cJSON_Duplicate(msg, 1), *fixes = cJSON_CreateArray(), *tok = cJSON_CreateObject();
    double prompt = ao_json_num(r->tokens, "prompt", 0), completion = ao_json_num(r->tokens, "completion", 0);

    if (!m || !fixes || !tok) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    if (ao_name(key, sizeof key, AO_KEY_FIXES, slots_key) < 0) {
        snprintf(err, errlen, "slot %.40s: its key is too long", r->slot);
        goto fail;
    }
    for (long long a = 1; a < attempt && a <= AO_MAX_FIX_ATTEMPTS; a++) { /* whatever a message claims */
        cJSON *rec;
        if (ao_name(field, sizeof field, "%s/a%lld", r->slot, a) < 0) {
            snprintf(err, errlen, "slot %.40s: its key is too long", r->slot);
            goto fail;
        }
        if (ao_rs_hget(sel->store, key, field, &v, err, errlen) < 0)
            goto fail;
        if (v && (rec = cJSON_Parse(v))) {
            prompt += ao_json_num(cJSON_GetObjectItemCaseSensitive(rec, "tokens"), "prompt", 0);
            completion += ao_json_num(cJSON_GetObjectItemCaseSensitive(rec, "tokens"), "completion", 0);
            cJSON_DeleteItemFromObjectCaseSensitive(rec, "tokens");
            cJSON_AddItemToArray(fixes, rec);
        }
        free(v);
        v = NULL;
    }
    setn(tok, "prompt", prompt);
    setn(tok, "completion", completion);
    cJSON_DeleteItemFromObjectCaseSensitive(m, "tokens");
    setj(m, "tokens", tok);
    tok = NULL;
    setn(m, "attempts", (double)attempt);
    setj(m, "fixes", fixes);
    fixes = NULL;
    if (!(text = cJSON_PrintUnformatted(m)))
        snprintf(err, errlen, "out of memory");
    cJSON_Delete(m);
    return text;
fail:
    cJSON_Delete(m);
    cJSON_Delete(fixes);
    cJSON_Delete(tok);
    return NULL;
}

/* Is r not the result this run asked for in that slot?  A result counts
 * only for its run's task, target, size and task hash, and for the kernel
 * of its slot: the baseline in iteration 0, else a child of the slot's
 * candidate.  1 with the reason, or 0. */
static int result_not_asked(const cJSON *state, const cJSON *beam, const struct ao_result_msg *r,
                            int rank, char *reason, size_t len)
{
    const char *want_task = ao_json_str(state, "task", NULL);
    const char *want_target = ao_json_str(state, "target", NULL);
    const char *want_size = ao_json_str(state, "size", NULL);
    const char *want_hash = ao_json_str(state, "task_sha256", NULL);
    const char *want_base = ao_json_str(state, "baseline_sha256", NULL);
    const char *parent = ao_json_str(cJSON_GetArrayItem(beam, rank), "sha256", NULL);
    int measured = r->source != NULL; /* no_code and duplicate results carry no kernel */

    if (differs(r->env.task, want_task))
        snprintf(reason, len, "a result for task '%.40s' in a run of '%.40s'", r->env.task,
                 want_task ? want_task : "?");
    else if (differs(r->env.target, want_target))
        snprintf(reason, len, "a result for target '%.20s' in a run for '%.20s'", r->env.target,
                 want_target ? want_target : "?");
    else if (differs(r->size, want_size))
        snprintf(reason, len, "a result at size '%.20s' in a run at '%.20s'", r->size ? r->size : "(none)",
                 want_size ? want_size : "?");
    else if (measured && differs(r->task_sha256, want_hash))
        snprintf(reason, len, "a result measured against another version of the task (task_sha256 "
                 "%.12s, the run's %.12s)", r->task_sha256 ? r->task_sha256 : "(none)",
                 want_hash ? want_hash : "?");
    else if (r->env.iter == 0 && measured && want_base && differs(r->sha256, want_base))
        snprintf(reason, len, "iteration 0's slot takes the run's baseline, not kernel %.12s",
                 r->sha256 ? r->sha256 : "(none)");
    else if (r->env.iter > 0 && differs(r->parent, parent))
        snprintf(reason, len, "slot %.40s is for children of candidate %.12s, not of %.12s", r->slot,
                 parent ? parent : "?", r->parent ? r->parent : "(none)");
    else
        return 0;
    return 1;
}

static int on_result(struct selector *sel, struct ao_io *io, const cJSON *msg, char *reason,
                     size_t len)
{
    struct ao_result_msg r;
    cJSON *state = NULL, *beam = NULL;
    char key[AO_KEY_MAX], err[AO_ERRLEN], *text = NULL;
    struct shape sh;
    int rank, plan, sample, rc = -1, isnew;
    long have;
    long long iter, attempt;

    if (ao_sign_check(msg, &sel->key, reason, len) < 0 ||
        ao_msg_decode(&ao_msg_result, msg, &r, reason, len) < 0)
        return -1;
    if (!(state = load_json(sel, r.env.run, "state", io)))
        goto out;
    if (cJSON_IsNull(state)) {
        snprintf(reason, len, "no run '%.80s' (no task started it, or its state is gone)", r.env.run);
        goto out;
    }
    if (ao_phase_of(state) == AO_PHASE_FINAL) {
        rc = on_final(sel, io, r.env.run, state, &r, reason, len);
        goto out;
    }
    iter = (long long)ao_json_num(state, "iter", NAN);
    sh = shape_of(state);
    if (r.env.iter != iter || ao_phase_of(state) == AO_PHASE_DONE || ao_phase_of(state) == AO_PHASE_MEMORY) {
        ao_debug("run %s: result %s of iteration %lld is late or repeated; ignored", r.env.run,
                 r.env.id, r.env.iter);
        rc = 0;
        goto out;
    }
    if (parse_slot(r.slot, &rank, &plan, &sample) < 0 || rank >= sh.ranks || plan >= sh.plans ||
        sample >= sh.samples) {
        snprintf(reason, len, "slot '%.40s' is not one of iteration %lld's", r.slot ? r.slot : "(none)",
                 iter);
        goto out;
    }
    if (!(beam = load_json(sel, r.env.run, "beam", io)))
        goto out;
    if (result_not_asked(state, beam, &r, rank, reason, len))
        goto out;
    cJSON_Delete(beam);
    beam = NULL;
    if (ao_name(key, sizeof key, AO_KEY_ITER, r.env.run, iter) < 0) {
        rc = ao_io_fail(io, "run id '%.40s...' is too long for a key", r.env.run);
        goto out;
    }
    attempt = r.attempt == AO_ABSENT_INT || r.attempt < 1 ? 1 : r.attempt;
    if (iter > 0 && fixable(&r) &&
        attempt <= int_or(config_of(state).fix_attempts, 0)) {
        rc = request_fix(sel, io, &r, state, key, rank, plan, sample, attempt);
        goto out;
    }
    if (!(text = attempt > 1 || r.tokens ? slot_text(sel, msg, &r, key, attempt, err, sizeof err)
                                         : cJSON_PrintUnformatted(msg))) {
        rc = ao_io_fail(io, "%s", attempt > 1 || r.tokens ? err : "out of memory");
        goto out;
    }
    if ((isnew = ao_rs_hsetnx(sel->store, key, r.slot, text, err, sizeof err)) < 0 ||
        (have = ao_rs_hlen(sel->store, key, err, sizeof err)) < 0) {
        rc = ao_io_fail(io, "run store: %s", err);
        goto out;
    }
    if (!isnew)
        ao_debug("run %s: slot %s already has its result", r.env.run, r.slot);
    if (isnew) { /* the iteration moves: its slot deadline starts again */
        setn(state, "progress", now_s());
        if (store_json(sel, r.env.run, "state", state, io) < 0)
            goto out;
    }
    if (save(sel, io) < 0)
        goto out;
    rc = 0;
    /* the last slot (or a redelivered one after a crash mid-close) closes it */
    if (have >= (long)sh.ranks * sh.plans * sh.samples) {
        if (!(beam = load_json(sel, r.env.run, "beam", io)))
            rc = -1;
        else
            rc = close_iteration(sel, io, r.env.run, state, beam, key);
    }
out:
    free(text);
    cJSON_Delete(state);
    cJSON_Delete(beam);
    ao_msg_release(&ao_msg_result, &r);
    return rc;
}

/* ---- acks from the summarizer ---- */

static int on_experience(struct selector *sel, struct ao_io *io, const cJSON *msg, char *reason,
                         size_t len)
{
    struct ao_experience_msg e;
    cJSON *state = NULL, *beam = NULL;
    const cJSON *pairs, *it;
    char key[AO_KEY_MAX], err[AO_ERRLEN], *ack = NULL;
    int rc = -1, ours = 0;
    long have;

    if (ao_msg_decode(&ao_msg_experience, msg, &e, reason, len) < 0)
        return -1;
    if (!(state = load_json(sel, e.env.run, "state", io)))
        goto out;
    if (cJSON_IsNull(state)) {
        snprintf(reason, len, "no run '%.80s' (no task started it, or its state is gone)", e.env.run);
        goto out;
    }
    pairs = cJSON_GetObjectItemCaseSensitive(state, "pairs");
    cJSON_ArrayForEach(it, pairs)
        ours |= cJSON_IsString(it) && strcmp(it->valuestring, e.pair_id) == 0;
    rc = 0;
    if (ao_phase_of(state) != AO_PHASE_MEMORY || !ours) {
        ao_debug("run %s: ack of %s is late or repeated; ignored", e.env.run, e.pair_id);
        goto out;
    }
    if (ao_name(key, sizeof key, AO_KEY_ACKS, e.env.run, (long long)ao_json_num(state, "iter", NAN)) < 0) {
        rc = ao_io_fail(io, "run id '%.40s...' is too long for a key", e.env.run);
        goto out;
    }
    /* the ack itself is kept: the run's report lists what the run learned */
    if (!(ack = cJSON_PrintUnformatted(msg))) {
        snprintf(reason, len, "out of memory");
        rc = -1;
        goto out;
    }
    if (ao_rs_hsetnx(sel->store, key, e.pair_id, ack, err, sizeof err) < 0 ||
        (have = ao_rs_hlen(sel->store, key, err, sizeof err)) < 0) {
        rc = ao_io_fail(io, "run store: %s", err);
        goto out;
    }
    if (save(sel, io) < 0) {
        rc = -1;
        goto out;
    }
    if (have >= cJSON_GetArraySize(pairs)) {
        cJSON *hs = cJSON_GetObjectItemCaseSensitive(state, "history");
        cJSON *h = cJSON_GetArrayItem(hs, cJSON_GetArraySize(hs) - 1);
        if (h)
            setn(h, "acked", (double)have);
        rc = (beam = load_json(sel, e.env.run, "beam", io)) ? advance(sel, io, e.env.run, state, beam)
                                                           : -1;
    }
out:
    cJSON_free(ack);
    cJSON_Delete(state);
    cJSON_Delete(beam);
    ao_msg_release(&ao_msg_experience, &e);
    return rc;
}

static int process(void *ctx, struct ao_io *io, const cJSON *msg, char *reason, size_t len)
{
    const char *type = ao_json_str(msg, "type", NULL);

    if (!type)
        return snprintf(reason, len, "no message type"), -1;
    if (strcmp(type, "task") == 0)
        return on_task(ctx, io, msg, reason, len);
    if (strcmp(type, "result") == 0)
        return on_result(ctx, io, msg, reason, len);
    if (strcmp(type, "experience") == 0)
        return on_experience(ctx, io, msg, reason, len);
    snprintf(reason, len, "the selector takes task, result and experience messages, not '%.40s'", type);
    return -1;
}

/* ---- time: memory deadlines, wall-time budgets, stalled iterations ---- */

static void warn_missing(struct selector *sel, const char *run, const cJSON *state)
{
    double waited = now_s() - ao_json_num(state, "opened", NAN);
    long mark = (long)(waited / 120);
    struct warned *w;
    char key[AO_KEY_MAX], err[AO_ERRLEN];
    cJSON *have;
    struct ao_buf b = {0};
    long long iter = (long long)ao_json_num(state, "iter", NAN);
    struct shape sh = shape_of(state);
    int shown = 0;

    if (mark < 1)
        return;
    for (w = sel->warned; w && strcmp(w->run, run) != 0; w = w->next)
        ;
    if (w && w->mark == mark)
        return;
    if (!w && (w = calloc(1, sizeof *w))) {
        snprintf(w->run, sizeof w->run, "%s", run);
        w->next = sel->warned;
        sel->warned = w;
    }
    if (w)
        w->mark = mark;
    if (ao_name(key, sizeof key, AO_KEY_ITER, run, iter) < 0 ||
        !(have = ao_rs_hgetall(sel->store, key, err, sizeof err)))
        return;
    for (int r = 0; r < sh.ranks; r++)
        for (int p = 0; p < sh.plans; p++)
            for (int q = 0; q < sh.samples; q++) {
                char slot[64];
                snprintf(slot, sizeof slot, "%d.%d.%d", r, p, q);
                if (!cJSON_GetObjectItemCaseSensitive(have, slot) && shown++ < 12)
                    ao_buf_printf(&b, " %s", slot);
            }
    ao_warn("run %s: iteration %lld, open for %.0f s, still misses %d of its %d results:%s%s", run,
            iter, waited, shown, sh.ranks * sh.plans * sh.samples, b.data ? b.data : "",
            shown > 12 ? " ..." : "");
    ao_buf_release(&b);
    cJSON_Delete(have);
}

/* No result of the open iteration has come for the slot deadline: every
 * slot still without one gets a `lost` result saying so (recorded like a
 * result, so one that comes later counts no more), and the iteration closes. */
static int lose_missing(struct selector *sel, struct ao_io *io, const char *run, cJSON *state)
{
    long long iter = (long long)ao_json_num(state, "iter", NAN);
    struct shape sh = shape_of(state);
    char key[AO_KEY_MAX], err[AO_ERRLEN], why[400];
    cJSON *beam = NULL;
    int lost = 0, rc = 0;

    if (ao_name(key, sizeof key, AO_KEY_ITER, run, iter) < 0)
        return ao_io_fail(io, "run id '%.40s...' is too long for a key", run);
    snprintf(why, sizeof why, "no result came for %g s (the slot deadline): the kernel went to the "
             "dead letters, or a planner, executor or profiler never answered",
             slot_deadline(state));
    for (int r = 0; r < sh.ranks && rc == 0; r++)
        for (int p = 0; p < sh.plans && rc == 0; p++)
            for (int q = 0; q < sh.samples && rc == 0; q++) {
                char slot[64], id[AO_ID_BUF], *text;
                cJSON *res = cJSON_CreateObject();
                int isnew;
                snprintf(slot, sizeof slot, "%d.%d.%d", r, p, q); /* three ints: fits */
                if (ao_name(id, sizeof id, AO_ID_KERNEL, run, iter, slot) < 0) {
                    cJSON_Delete(res);
                    continue; /* a run id is at most AO_RUN_ID_MAX: it fits */
                }
                sets(res, "type", "result");
                setn(res, "v", 1);
                sets(res, "kernel_id", id);
                {
                    char kid[AO_ID_BUF];
                    snprintf(kid, sizeof kid, "%s", id);
                    if (ao_name(id, sizeof id, AO_ID_RESULT, kid) < 0) {
                        cJSON_Delete(res);
                        continue;
                    }
                }
                sets(res, "id", id);
                sets(res, "run", run);
                sets(res, "task", ao_json_str(state, "task", ""));
                sets(res, "target", ao_json_str(state, "target", ""));
                setn(res, "iter", (double)iter);
                sets(res, "slot", slot);
                sets(res, "size", ao_json_str(state, "size", ""));
                sets(res, "status", ao_verdict_name(AO_V_LOST));
                sets(res, "reason", why);
                if (!(text = cJSON_PrintUnformatted(res))) {
                    cJSON_Delete(res);
                    return ao_io_fail(io, "out of memory");
                }
                if ((isnew = ao_rs_hsetnx(sel->store, key, slot, text, err, sizeof err)) < 0)
                    rc = ao_io_fail(io, "run store: %s", err);
                lost += isnew > 0;
                cJSON_free(text);
                cJSON_Delete(res);
            }
    if (rc < 0 || save(sel, io) < 0)
        return -1;
    ao_warn("run %s: iteration %lld: %d of its %d results lost (%s)", run, iter, lost,
            sh.ranks * sh.plans * sh.samples, why);
    if (!(beam = load_json(sel, run, "beam", io)))
        return -1;
    rc = close_iteration(sel, io, run, state, beam, key);
    cJSON_Delete(beam);
    return rc;
}

static int tick_run(struct selector *sel, struct ao_io *io, const char *run)
{
    cJSON *state = load_json(sel, run, "state", io), *beam = NULL, *outbox = NULL;
    enum ao_phase phase;
    const char *stop;
    int rc = 0;

    if (!state)
        return -1;
    if (cJSON_IsNull(state) || (phase = ao_phase_of(state)) == AO_PHASE_NONE || phase == AO_PHASE_DONE)
        goto out;
    if ((stop = budget_stop(sel, run, state)) && strcmp(stop, "wall_time") == 0) {
        if (!(beam = load_json(sel, run, "beam", io)) || !(outbox = cJSON_CreateArray())) {
            rc = ao_io_fail(io, "out of memory");
            goto out;
        }
        if (add_done(sel, outbox, run, state, beam, stop, "the run's wall time ran out") < 0) {
            rc = ao_io_fail(io, "out of memory");
            goto out;
        }
        rc = step(sel, io, run, state, NULL, outbox);
    } else if (phase == AO_PHASE_MEMORY && now_s() > ao_json_num(state, "deadline", NAN)) {
        ao_warn("run %s: memory deadline passed with pairs unacked; going on without them", run);
        cJSON_AddBoolToObject(state, "memory_deadline_missed", 1);
        rc = (beam = load_json(sel, run, "beam", io)) ? advance(sel, io, run, state, beam) : -1;
    } else if (phase == AO_PHASE_FINAL) {
        if (now_s() - ao_json_num(state, "progress", NAN) > slot_deadline(state)) {
            ao_warn("run %s: the final head-to-head never came; the search's figures stand", run);
            if (!(beam = load_json(sel, run, "beam", io)) || !(outbox = cJSON_CreateArray())) {
                rc = ao_io_fail(io, "out of memory");
                goto out;
            }
            rc = add_done(sel, outbox, run, state, beam, ao_json_str(state, "final_stop", "iterations"),
                          "the final head-to-head never came (the slot deadline passed)") < 0
                     ? ao_io_fail(io, "out of memory")
                     : step(sel, io, run, state, NULL, outbox);
        }
    } else if (phase == AO_PHASE_COLLECT || phase == AO_PHASE_BASELINE) {
        double since = ao_json_num(state, "progress", ao_json_num(state, "opened", NAN));
        if (now_s() - since > slot_deadline(state))
            rc = lose_missing(sel, io, run, state);
        else
            warn_missing(sel, run, state);
    }
out:
    cJSON_Delete(state);
    cJSON_Delete(beam);
    cJSON_Delete(outbox);
    return rc;
}

/* The runs in flight that this replica owns (their partition is assigned
 * to it; replicas share the work by runs), each with `fn`. */
static int each_run(struct selector *sel, struct ao_io *io,
                    int (*fn)(struct selector *, struct ao_io *, const char *))
{
    char err[AO_ERRLEN];
    cJSON *runs = ao_rs_smembers(sel->store, ACTIVE, err, sizeof err);
    const cJSON *it;
    int rc = 0;

    if (!runs)
        return ao_io_fail(io, "run store: %s", err);
    cJSON_ArrayForEach(it, runs)
        if (rc == 0 && ao_io_owns(io, it->valuestring))
            rc = fn(sel, io, it->valuestring);
    cJSON_Delete(runs);
    return rc;
}

/* When a run comes to this replica (at start, or from another replica):
 * resend the outbox a crash left unsent; forget it if finished. */
static int resume_run(struct selector *sel, struct ao_io *io, const char *run)
{
    char key[AO_KEY_MAX], err[AO_ERRLEN], *pending = NULL;
    cJSON *state = load_json(sel, run, "state", io), *outbox = NULL;
    int rc = 0;

    if (!state)
        return -1;
    if (ao_name(key, sizeof key, AO_KEY_RUN, run) < 0) {
        rc = ao_io_fail(io, "run id '%.40s...' is too long for a key", run);
    } else if (ao_rs_hget(sel->store, key, "outbox_pending", &pending, err, sizeof err) < 0) {
        rc = ao_io_fail(io, "run store: %s", err);
    } else if (pending && strcmp(pending, "1") == 0) {
        ao_info("run %s: resending the last step's messages", run);
        rc = (outbox = load_json(sel, run, "outbox", io)) ? send_outbox(sel, io, run, outbox) : -1;
    }
    if (rc == 0 && !cJSON_IsNull(state) && ao_phase_of(state) == AO_PHASE_DONE &&
        ao_rs_srem(sel->store, ACTIVE, run, err, sizeof err) < 0)
        rc = ao_io_fail(io, "run store: %s", err);
    free(pending);
    cJSON_Delete(state);
    cJSON_Delete(outbox);
    return rc;
}

static int tick(void *ctx, struct ao_io *io)
{
    struct selector *sel = ctx;
    double t = now_s();
    unsigned g = ao_io_generation(io);

    if (g != sel->resumed) { /* runs came to this replica: finish their last steps */
        sel->resumed = g;
        if (each_run(sel, io, resume_run) < 0)
            return -1;
    }
    if (t - sel->last_tick < 1)
        return 0;
    sel->last_tick = t;
    return each_run(sel, io, tick_run);
}

int main(int argc, char **argv)
{
    struct ao_stage s;
    struct selector sel = {0};
    char err[AO_ERRLEN];
    const char *url, *state_file;
    int code;

    if (!ao_stage_open(&s, "accelopt-selector",
                       "accelopt-selector [options] < tasks-results-experiences.jsonl > out.jsonl",
                       options, NOPTS, topics, argc, argv, &code))
        return ao_stage_close(&s, code);
    sel.cfg = &s.cfg;
    url = ao_config_str(&s.cfg, "redis");
    state_file = ao_config_str(&s.cfg, "state");
    if (url && state_file) {
        ao_err("--redis and --state are two places for the same state: give one");
        return ao_stage_close(&s, AO_EXIT_USAGE);
    }
    {
        char reason[AO_ERRLEN];
        cJSON *c = run_config(&sel, NULL, reason, sizeof reason);
        if (!c) {
            ao_err("%s", reason);
            return ao_stage_close(&s, AO_EXIT_USAGE);
        }
        cJSON_Delete(c);
    }
    if (ao_sign_key_load(&sel.key, err, sizeof err) < 0) {
        ao_err("%s", err);
        return ao_stage_close(&s, AO_EXIT_USAGE);
    }
    if (url && !(sel.redis = ao_redis_new(url, ao_config_str(&s.cfg, "redis-prefix"), err,
                                          sizeof err))) {
        ao_err("%s", err);
        return ao_stage_close(&s, AO_EXIT_FAIL);
    }
    sel.store = sel.redis ? ao_runstore_redis(sel.redis)
                          : ao_runstore_file(state_file, err, sizeof err);
    if (!sel.store) {
        ao_err("%s", sel.redis ? "out of memory" : err);
        ao_redis_free(sel.redis);
        return ao_stage_close(&s, AO_EXIT_FAIL);
    }
    s.tick = tick;
    code = ao_stage_run(&s, process, &sel, "messages", "messages");
    {
        char e2[AO_ERRLEN];
        if (ao_runstore_save(sel.store, e2, sizeof e2) < 0)
            ao_err("%s", e2);
    }
    ao_runstore_free(sel.store);
    ao_redis_free(sel.redis);
    while (sel.warned) {
        struct warned *w = sel.warned;
        sel.warned = w->next;
        free(w);
    }
    return code;
}
