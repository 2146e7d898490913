/* fixes.c - a result comes in: checked against what was asked, recorded in
 * its slot; a failed model kernel goes back to the model */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents/diag.h"
#include "core/log.h"
#include "core/util.h"
#include "state/phase.h"
#include "state/runstore.h"
#include "wire/msg.h"
#include "wire/names.h"
#include "wire/runconfig.h"
#include "wire/sign.h"
#include "wire/verdict.h"

#include "selector.h"

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
    rc = sel_env_from(&p.env, "plan", id, run, state, r->env.iter) < 0 ||
         !(p.candidate_id = strdup(ao_json_str(parent, "kernel_id", "?"))) ||
         !(p.candidate_sha256 = sel_dup_or_null(ao_json_str(parent, "sha256", NULL))) ||
         !(p.source = sel_dup_or_null(ao_json_str(parent, "source", NULL))) ||
         !(p.text = strdup(r->plan_text)) || !(p.failed_source = strdup(r->source)) ||
         !(p.diagnostics = ao_diag_for_model(r->status, r->reason, r->diagnostics, FIX_DIAG_MAX)) ||
         !(p.size = sel_dup_or_null(ao_json_str(state, "size", NULL))) ||
         (tp && !(p.task_path = strdup(tp))) || (th && !(p.task_sha256 = strdup(th))) ||
         !(p.config = cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(state, "config"), 1)) ||
         sel_out_add(outbox, AO_TOPIC_PLANS, &ao_msg_plan, &p) < 0 ? -1 : 0;
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
    sel_setn(rec, "attempt", (double)attempt);
    sel_sets(rec, "status", r->status);
    if (r->reason)
        sel_sets(rec, "reason", r->reason);
    if (r->tokens)
        sel_setj(rec, "tokens", cJSON_Duplicate(r->tokens, 1));
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
    if (!(beam = sel_load_json(sel, r->env.run, "beam", io)))
        goto out;
    if (add_fix(outbox, r->env.run, state, cJSON_GetArrayItem(beam, rank), r, rank, plan, sample,
                attempt) < 0) {
        rc = ao_io_fail(io, "out of memory");
        goto out;
    }
    ao_info("run %s: slot %s failed (%s) at attempt %lld; sent back to the model", r->env.run,
            r->slot, r->status, attempt);
    sel_setn(state, "progress", sel_now_s()); /* a fix is progress: the slot deadline starts again */
    rc = sel_step(sel, io, r->env.run, state, NULL, outbox);
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
    sel_setn(tok, "prompt", prompt);
    sel_setn(tok, "completion", completion);
    cJSON_DeleteItemFromObjectCaseSensitive(m, "tokens");
    sel_setj(m, "tokens", tok);
    tok = NULL;
    sel_setn(m, "attempts", (double)attempt);
    sel_setj(m, "fixes", fixes);
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

    if (sel_differs(r->env.task, want_task))
        snprintf(reason, len, "a result for task '%.40s' in a run of '%.40s'", r->env.task,
                 want_task ? want_task : "?");
    else if (sel_differs(r->env.target, want_target))
        snprintf(reason, len, "a result for target '%.20s' in a run for '%.20s'", r->env.target,
                 want_target ? want_target : "?");
    else if (sel_differs(r->size, want_size))
        snprintf(reason, len, "a result at size '%.20s' in a run at '%.20s'", r->size ? r->size : "(none)",
                 want_size ? want_size : "?");
    else if (measured && sel_differs(r->task_sha256, want_hash))
        snprintf(reason, len, "a result measured against another version of the task (task_sha256 "
                 "%.12s, the run's %.12s)", r->task_sha256 ? r->task_sha256 : "(none)",
                 want_hash ? want_hash : "?");
    else if (r->env.iter == 0 && measured && want_base && sel_differs(r->sha256, want_base))
        snprintf(reason, len, "iteration 0's slot takes the run's baseline, not kernel %.12s",
                 r->sha256 ? r->sha256 : "(none)");
    else if (r->env.iter > 0 && sel_differs(r->parent, parent))
        snprintf(reason, len, "slot %.40s is for children of candidate %.12s, not of %.12s", r->slot,
                 parent ? parent : "?", r->parent ? r->parent : "(none)");
    else
        return 0;
    return 1;
}

int sel_on_result(struct selector *sel, struct ao_io *io, const cJSON *msg, char *reason,
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
    if (!(state = sel_load_json(sel, r.env.run, "state", io)))
        goto out;
    if (cJSON_IsNull(state)) {
        snprintf(reason, len, "no run '%.80s' (no task started it, or its state is gone)", r.env.run);
        goto out;
    }
    if (ao_phase_of(state) == AO_PHASE_FINAL) {
        rc = sel_on_final(sel, io, r.env.run, state, &r, reason, len);
        goto out;
    }
    iter = (long long)ao_json_num(state, "iter", NAN);
    sh = sel_shape_of(state);
    if (r.env.iter != iter || ao_phase_of(state) == AO_PHASE_DONE || ao_phase_of(state) == AO_PHASE_MEMORY) {
        ao_debug("run %s: result %s of iteration %lld is late or repeated; ignored", r.env.run,
                 r.env.id, r.env.iter);
        rc = 0;
        goto out;
    }
    if (sel_parse_slot(r.slot, &rank, &plan, &sample) < 0 || rank >= sh.ranks || plan >= sh.plans ||
        sample >= sh.samples) {
        snprintf(reason, len, "slot '%.40s' is not one of iteration %lld's", r.slot ? r.slot : "(none)",
                 iter);
        goto out;
    }
    if (!(beam = sel_load_json(sel, r.env.run, "beam", io)))
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
        attempt <= sel_int_or(sel_config_of(state).fix_attempts, 0)) {
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
        sel_setn(state, "progress", sel_now_s());
        if (sel_store_json(sel, r.env.run, "state", state, io) < 0)
            goto out;
    }
    if (sel_save(sel, io) < 0)
        goto out;
    rc = 0;
    /* the last slot (or a redelivered one after a crash mid-close) closes it */
    if (have >= (long)sh.ranks * sh.plans * sh.samples) {
        if (!(beam = sel_load_json(sel, r.env.run, "beam", io)))
            rc = -1;
        else
            rc = sel_close_iteration(sel, io, r.env.run, state, beam, key);
    }
out:
    free(text);
    cJSON_Delete(state);
    cJSON_Delete(beam);
    ao_msg_release(&ao_msg_result, &r);
    return rc;
}
