/* outbox.c - the messages a run sends: candidates, pairs' parents, the
 * final head-to-head, done; and what comes after an iteration */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/log.h"
#include "core/util.h"
#include "state/runstore.h"
#include "targets/target.h"
#include "wire/msg.h"
#include "wire/names.h"
#include "wire/runconfig.h"
#include "wire/verdict.h"

#include "selector.h"

/* How uncertain a measurement's median is, relative: 1.58 IQR/median over
 * the square root of the calls (the notched box plot's 95% interval of a
 * median); what separates two processes of one kernel comes on top as
 * AO_NOISE_FLOOR (select.h). */
double sel_median_u(double spread, long long repeats)
{
    double s = spread > 0 ? spread : 0, n = repeats == AO_ABSENT_INT ? 0 : (double)repeats;
    return s > 0 && n >= 1 ? 1.58 * s / sqrt(n) : s;
}

int sel_differs(const char *a, const char *b)
{
    return !a || !b || strcmp(a, b) != 0;
}

char *sel_dup_or_null(const char *s)
{
    return s ? ao_strdup(s) : NULL;
}

void sel_env_from(struct ao_env *env, const char *type, const char *id, const char *run,
                 const struct ao_run_state *st, long long iter)
{
    ao_env_set(env, type, id, run, st->task, st->target, iter);
}

/* The beam's member of rank r as the candidate of iteration iter. */
static int add_candidate(cJSON *outbox, const char *run, const struct ao_run_state *st,
                         const struct ao_beam_member *b, int r, long long iter)
{
    struct ao_candidate_msg c;
    char id[AO_ID_BUF];

    ao_msg_init(&ao_msg_candidate, &c);
    if (ao_name(id, sizeof id, AO_ID_CANDIDATE, run, iter, r) < 0)
        return -1;
    c.rank = r;
    c.latency_ns = b->latency_ns;
    c.pct_of_peak = b->pct_of_peak;
    c.baseline_latency_ns = st->baseline_ns;
    sel_env_from(&c.env, "candidate", id, run, st, iter);
    c.source = sel_dup_or_null(b->source);
    c.sha256 = sel_dup_or_null(b->sha256);
    c.kernel_id = sel_dup_or_null(b->kernel_id);
    c.size = ao_strdup(st->size);
    c.task_path = ao_strdup(st->task_path);
    c.task_sha256 = ao_strdup(st->task_sha256);
    c.profile = ao_kernel_profile_json(&b->profile);
    c.config = ao_run_config_json(&st->config);
    sel_out_add(outbox, AO_TOPIC_CANDIDATES, &ao_msg_candidate, &c);
    ao_msg_release(&ao_msg_candidate, &c);
    return 0;
}

/* The run's baseline read again from its task: the source (the caller
 * frees it), or NULL with *why: gone, or changed since the run started
 * from it (its hash is not the one kept). */
static char *baseline_again(const struct ao_run_state *st, const char **why)
{
    const struct ao_target *tg = ao_target_get(st->target, NULL, 0);
    char path[800], hex[65], err[AO_ERRLEN], *src;

    *why = "the baseline is gone";
    if (!tg || !st->task_path || !st->baseline_sha256 ||
        ao_name(path, sizeof path, "%s/baseline.%s", st->task_path, tg->ext) < 0 ||
        !(src = ao_read_file(path, NULL, err, sizeof err)))
        return NULL;
    ao_sha256_hex(src, strlen(src), hex);
    if (strcmp(hex, st->baseline_sha256) != 0) {
        *why = "the task's baseline changed during the run";
        free(src);
        return NULL;
    }
    return src;
}

/* The baseline as the run's result, measured at latency_ns (pct its % of
 * peak): its source read again from the task and checked against the hash
 * the run started from.  0, or -1 (m empty). */
static int baseline_member(const char *run, const struct ao_run_state *st, struct ao_beam_member *m, double latency_ns,
                           double pct, double t_min_ns)
{
    char id[AO_ID_BUF], *src;
    const char *why;

    memset(m, 0, sizeof *m);
    if (ao_name(id, sizeof id, AO_ID_KERNEL, run, 0LL, "0.0.0") < 0 || !(src = baseline_again(st, &why)))
        return -1;
    m->source = src;
    m->latency_ns = latency_ns;
    m->pct_of_peak = pct;
    m->iter = 0;
    m->profile.latency_min_ns = m->profile.spread = m->profile.t_memory_ns = NAN;
    m->profile.t_matmul_ns = m->profile.t_elementwise_ns = m->profile.max_rel_l2 = NAN;
    m->profile.machine_load = m->profile.machine_slowdown = NAN;
    m->profile.machine_spread = m->profile.machine_spread_calibrated = NAN;
    m->profile.speedup_vs_baseline = 1;
    m->profile.t_min_ns = t_min_ns;
    m->profile.repeats = AO_ABSENT_INT;
    m->sha256 = ao_strdup(st->baseline_sha256);
    m->kernel_id = ao_strdup(id);
    m->slot = ao_strdup("0.0.0");
    return 0;
}

/* The result as the done carries it: its latency and % of peak the quoted
 * ones, the search's latency beside them as search_latency_ns. */
static cJSON *quoted_member(const struct ao_beam_member *m, double search_ns, double latency_ns, double pct)
{
    cJSON *j = ao_beam_member_json(m);

    cJSON_DeleteItemFromObjectCaseSensitive(j, "latency_ns");
    cJSON_DeleteItemFromObjectCaseSensitive(j, "pct_of_peak");
    if (isfinite(latency_ns))
        cJSON_AddNumberToObject(j, "latency_ns", latency_ns);
    if (isfinite(pct))
        cJSON_AddNumberToObject(j, "pct_of_peak", pct);
    if (isfinite(search_ns))
        cJSON_AddNumberToObject(j, "search_latency_ns", search_ns);
    return j;
}

/* End the run: the `done` message goes to the outbox.  Every figure it
 * quotes (both latencies, the speedup with its interval, both % of peak)
 * comes from one measurement: the final head-to-head where there was one,
 * else the search's.  A best that the head-to-head finds slower than the
 * baseline is not the result: the baseline is (no_gain). */
static int add_done_final(struct selector *sel, cJSON *outbox, const char *run, struct ao_run_state *st,
                          const struct ao_beam *beam, const char *stopped, const char *reason,
                          const struct ao_result_msg *final)
{
    struct ao_done_msg d;
    const struct ao_beam_member *best = beam->n ? &beam->m[0] : NULL;
    struct ao_beam_member base_m;
    struct ao_run_usage u = ao_runstore_usage(sel->store, run);
    double base = st->baseline_ns, t_min = NAN;
    const cJSON *h0 = cJSON_GetArrayItem(st->history, 0);
    const struct ao_target *tg = ao_target_get(st->target, NULL, 0);
    const char *method;
    char id[AO_ID_BUF], why[700];
    double quoted;
    int as_baseline = 0;

    ao_msg_init(&ao_msg_done, &d);
    memset(&base_m, 0, sizeof base_m);
    if (ao_name(id, sizeof id, AO_ID_DONE, run) < 0)
        return -1;
    d.iterations = st->completed;
    d.kernels_evaluated = st->kernels;
    d.memory_deadline_missed = st->memory_deadline_missed == 1;
    d.cost_usd = u.usd;
    d.baseline_latency_ns = d.search_baseline_latency_ns = base;
    d.baseline_pct_of_peak = ao_json_num(h0, "pct_of_peak", NAN);
    d.slots_lost = st->lost;
    d.slot_deadline_s = st->config.slot_deadline_s;
    if (best) {
        d.speedup = d.search_speedup = base / best->latency_ns;
        d.best_latency_ns = best->latency_ns;
        d.pct_of_peak = best->pct_of_peak;
        t_min = best->profile.t_min_ns;
    }
    /* the figure quoted: the final head-to-head where there was one */
    method = best && !sel_differs(best->sha256, st->baseline_sha256) ? "baseline" : "search";
    if (strcmp(method, "baseline") == 0) {
        d.speedup = 1; /* nothing beat the baseline: its own measurement against itself */
    } else if (final && ao_verdict_of(final->status) == AO_V_OK && final->head_to_head) {
        const cJSON *h = final->head_to_head;
        double sp = ao_json_num(h, "speedup", NAN), hb = ao_json_num(h, "baseline_median_ns", NAN);
        if (!(d.head_to_head = cJSON_Duplicate(h, 1)))
            return -1;
        /* the work is the task's, so % of peak goes as 1/latency */
        d.baseline_latency_ns = hb;
        d.baseline_pct_of_peak = isfinite(t_min) ? t_min / hb : NAN;
        struct ao_sel_cmp c = {1, sp, ao_json_num(h, "speedup_low", NAN), ao_json_num(h, "speedup_high", NAN)};
        if (ao_sel_cmp_verdict(&c) != AO_CMP_FASTER) {
            /* a gain is the comparisons' "faster": its interval leaves 1
             * out and it is at least AO_CMP_MIN_GAIN; anything else is no
             * significant gain, and the result stays the baseline */
            char small[48];
            snprintf(small, sizeof small, "under the %.2fx a gain must reach", AO_CMP_MIN_GAIN);
            method = "no_gain";
            snprintf(why, sizeof why, "%s%sno significant gain: the search's best measured %.3fx (%.3f-%.3f) "
                     "against the baseline head to head, %s, so the result is the baseline (the search's best "
                     "is kept as candidate.%s)", reason ? reason : "", reason ? "; " : "", sp, c.low, c.high,
                     sp < 1 ? "slower" : c.low <= 1 ? "an interval that holds 1" : small,
                     tg ? tg->ext : "c");
            reason = why;
            as_baseline = 1;
        } else {
            method = "head_to_head";
            d.speedup = sp;
            d.speedup_low = ao_json_num(h, "speedup_low", NAN);
            d.speedup_high = ao_json_num(h, "speedup_high", NAN);
            /* the best's latency as the paired rounds measured it: each
             * round's ratio cancels the machine's drift, which the best's
             * own median (kernel_median_ns, kept) does not, so that the
             * two latencies quoted say exactly the speedup quoted */
            d.best_latency_ns = hb / sp;
            d.pct_of_peak = isfinite(t_min) ? t_min / d.best_latency_ns : NAN;
        }
    } else if (final) {
        method = "none"; /* the best kernel failed when measured again: no claim */
        snprintf(why, sizeof why, "%s%sthe best kernel failed its final head-to-head (%.40s: %.300s): "
                 "no speedup is claimed, and the result is the baseline", reason ? reason : "",
                 reason ? "; " : "", final->status, final->reason ? final->reason : "no reason given");
        reason = why;
        as_baseline = 1;
    }
    if (as_baseline) { /* the result is the baseline, at the figures measured for it */
        d.speedup = 1;
        d.best_latency_ns = d.baseline_latency_ns;
        d.pct_of_peak = d.baseline_pct_of_peak;
        /* a baseline that cannot be read as it was: no result to give,
         * rather than a kernel the figures do not describe */
        best = baseline_member(run, st, &base_m, d.baseline_latency_ns, d.baseline_pct_of_peak, t_min) == 0
                   ? &base_m : NULL;
    }
    quoted = best ? d.speedup : 1.0;
    sel_env_from(&d.env, "done", id, run, st, st->iter);
    d.speedup_method = ao_strdup(method);
    d.stopped = ao_strdup(stopped);
    if (reason)
        d.reason = ao_strdup(reason);
    d.history = cJSON_Duplicate(st->history, 1);
    d.tokens = cJSON_CreateObject();
    cJSON_AddNumberToObject(d.tokens, "prompt", u.prompt);
    cJSON_AddNumberToObject(d.tokens, "completion", u.completion);
    if (best)
        d.best = quoted_member(best, as_baseline ? base : best->latency_ns, d.best_latency_ns, d.pct_of_peak);
    sel_out_add(outbox, AO_TOPIC_RUNS, &ao_msg_done, &d);
    ao_msg_release(&ao_msg_done, &d);
    ao_beam_member_release(&base_m);
    st->phase = AO_PHASE_DONE;
    free(st->stopped);
    st->stopped = ao_strdup(stopped);
    ao_info("run %s: done (%s) after %lld iterations, %lld kernels, best %.3gx (%s)", run, stopped,
            st->completed, st->kernels, quoted, method);
    return 0;
}

int sel_add_done(struct selector *sel, cJSON *outbox, const char *run, struct ao_run_state *st,
                 const struct ao_beam *beam, const char *stopped, const char *reason)
{
    return add_done_final(sel, outbox, run, st, beam, stopped, reason, NULL);
}

/* The run ends: unless the baseline is still the best, its best kernel is
 * measured head to head against the baseline in one sitting of a profiler,
 * and the done waits for that (phase "final"); the baseline's source is
 * read again from the task, and must be the one the run started from. */
static int finish(struct selector *sel, cJSON *outbox, const char *run, struct ao_run_state *st,
                  const struct ao_beam *beam, const char *stopped)
{
    const struct ao_beam_member *best = beam->n ? &beam->m[0] : NULL;
    const char *bsha = best ? best->sha256 : NULL, *src = best ? best->source : NULL;
    const char *base_sha = st->baseline_sha256, *tp = st->task_path, *why;
    const struct ao_target *tg = ao_target_get(st->target, NULL, 0);
    struct ao_kernel_msg k;
    char id[AO_ID_BUF], topic[AO_TOPIC_MAX], reason[120], *base = NULL;
    int rc;

    if (!bsha || !src || !base_sha || !tp || !tg || strcmp(bsha, base_sha) == 0)
        return sel_add_done(sel, outbox, run, st, beam, stopped, sel_stop_reason(stopped));
    if (!(base = baseline_again(st, &why))) {
        snprintf(reason, sizeof reason, "no head-to-head: %s", why);
        return sel_add_done(sel, outbox, run, st, beam, stopped, reason);
    }
    ao_msg_init(&ao_msg_kernel, &k);
    k.baseline_source = base; /* freed with k */
    k.source = ao_strdup(src);
    k.sha256 = ao_strdup(bsha);
    k.slot = ao_strdup("0.0.0");
    k.size = ao_strdup(st->size);
    k.task_path = ao_strdup(tp);
    k.task_sha256 = ao_strdup(st->task_sha256);
    k.plan_text = ao_strdup("the final head-to-head against the baseline");
    rc = ao_name(id, sizeof id, AO_ID_KERNEL_FINAL, run) < 0 ||
                 ao_name(topic, sizeof topic, AO_TOPIC_KERNELS, tg->name) < 0
             ? -1
             : 0;
    if (rc == 0) {
        sel_env_from(&k.env, "kernel", id, run, st, st->iter);
        sel_out_add(outbox, topic, &ao_msg_kernel, &k);
    }
    ao_msg_release(&ao_msg_kernel, &k);
    if (rc == 0) {
        st->phase = AO_PHASE_FINAL;
        free(st->final_stop);
        free(st->final_kernel);
        st->final_stop = ao_strdup(stopped);
        st->final_kernel = ao_strdup(bsha);
        st->progress = sel_now_s();
        ao_info("run %s: %s; its best kernel goes head to head with the baseline", run, stopped);
    }
    return rc;
}

/* The final head-to-head's result: the done message.  A result that is not
 * it is ignored as late (or refused as not asked for). */
int sel_on_final(struct selector *sel, struct ao_io *io, const char *run, struct ao_run_state *st,
                 const struct ao_result_msg *r, char *reason, size_t len)
{
    struct ao_beam beam;
    cJSON *outbox;
    char id[AO_ID_BUF];
    int rc;

    if (ao_name(id, sizeof id, AO_ID_KERNEL_FINAL, run) < 0 || sel_differs(r->kernel_id, id)) {
        ao_debug("run %s: result %s came after the run's last iteration; ignored", run, r->env.id);
        return 0;
    }
    if (sel_differs(r->env.task, st->task) || sel_differs(r->env.target, st->target) ||
        sel_differs(r->size, st->size) || sel_differs(r->task_sha256, st->task_sha256) ||
        sel_differs(r->sha256, st->final_kernel)) {
        snprintf(reason, len, "a head-to-head result for another task, size, target or kernel than "
                 "the run's best");
        return -1;
    }
    if (sel_load_beam(sel, run, &beam, io, reason, len) < 0)
        return -1;
    outbox = cJSON_CreateArray();
    rc = add_done_final(sel, outbox, run, st, &beam, st->final_stop ? st->final_stop : "iterations",
                        sel_stop_reason(st->final_stop), r) < 0
             ? ao_io_fail(io, "run %.40s: its done's id is too long", run)
             : sel_step(sel, io, run, st, &beam, outbox);
    ao_beam_release(&beam);
    cJSON_Delete(outbox);
    return rc;
}

/* Why the run must stop now, or NULL. */
const char *sel_budget_stop(struct selector *sel, const char *run, const struct ao_run_state *st)
{
    const struct ao_run_config *c = &st->config;
    struct ao_run_usage u = ao_runstore_usage(sel->store, run);

    if (sel_int_or(c->budget_tokens, 0) > 0 && u.prompt + u.completion >= (double)c->budget_tokens)
        return "tokens";
    if (c->budget_usd > 0 && u.usd >= c->budget_usd)
        return "dollars";
    return sel_wall_time_out(st) ? "wall_time" : NULL;
}

int sel_wall_time_out(const struct ao_run_state *st)
{
    return st->config.wall_s > 0 && sel_now_s() - st->started >= st->config.wall_s;
}

/* Has the search nothing new to try?  Its last SEL_IDLE_ITERS iterations
 * (past the baseline's) each brought no kernel the run had not measured
 * before: every slot came back from the cache, as a duplicate, or empty (a
 * model out of moves repeats itself while its parent stays).  A history
 * from before the count was kept never says so. */
#define SEL_IDLE_ITERS 2
static int nothing_new(const struct ao_run_state *st)
{
    int n = cJSON_GetArraySize(st->history), idle = 0;

    for (int i = n - 1; i >= 0 && idle < SEL_IDLE_ITERS; i--) {
        const cJSON *h = cJSON_GetArrayItem(st->history, i);
        const cJSON *fresh = cJSON_GetObjectItemCaseSensitive(h, "new_kernels");
        if (ao_json_num(h, "iter", 0) < 1 || !cJSON_IsNumber(fresh) || fresh->valuedouble > 0)
            break;
        idle++;
    }
    return idle >= SEL_IDLE_ITERS;
}

const char *sel_stop_reason(const char *stopped)
{
    return stopped && strcmp(stopped, "exhausted") == 0
               ? "nothing new to try: the last 2 iterations brought no kernel the run had not measured before "
                 "(each slot came back from the cache, as a duplicate, or empty)"
               : NULL;
}

/* After iteration `iter` (and its memory): the next iteration, or the end. */
int sel_advance(struct selector *sel, struct ao_io *io, const char *run, struct ao_run_state *st,
                const struct ao_beam *beam)
{
    cJSON *outbox = cJSON_CreateArray();
    long long iter = st->iter;
    const char *stop = NULL;
    int rc = -1, nbeam = beam->n;

    st->completed = iter;
    if (iter >= sel_int_or(st->config.iters, LLONG_MAX))
        stop = "iterations";
    else if (!(stop = sel_budget_stop(sel, run, st)) && nothing_new(st))
        stop = "exhausted";
    if (stop) {
        if (finish(sel, outbox, run, st, beam, stop) < 0)
            goto too_long;
    } else {
        st->iter = ++iter;
        st->phase = AO_PHASE_COLLECT;
        st->candidates = nbeam;
        st->opened = st->progress = sel_now_s();
        for (int r = 0; r < nbeam; r++)
            if (add_candidate(outbox, run, st, &beam->m[r], r, iter) < 0)
                goto too_long;
        ao_info("run %s: iteration %lld, %d candidates", run, iter, nbeam);
    }
    rc = sel_step(sel, io, run, st, beam, outbox);
    goto out;
too_long: /* (a run id is at most AO_RUN_ID_MAX: its ids fit) */
    rc = ao_io_fail(io, "run %.40s: an id of iteration %lld is too long", run, iter);
out:
    cJSON_Delete(outbox);
    return rc;
}
