/* fixes.c - a result comes in: checked against what was asked, recorded in
 * its slot (in phase compare, as its slot's comparison); a failed model
 * kernel goes back to the model */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents/diag.h"
#include "core/alloc.h"
#include "core/log.h"
#include "core/util.h"
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
static int add_fix(cJSON *outbox, const char *run, const struct ao_run_state *st,
                   const struct ao_beam_member *parent,
                   const struct ao_result_msg *r, int rank, int plan, int sample, long long attempt)
{
    struct ao_plan_msg p;
    char id[AO_ID_BUF];

    ao_msg_init(&ao_msg_plan, &p);
    if (ao_name(id, sizeof id, AO_ID_FIX, run, r->env.iter, r->slot, attempt + 1) < 0)
        return -1;
    p.index = plan;
    p.rank = rank;
    p.sample = sample;
    p.attempt = attempt + 1;
    p.parent_latency_ns = parent ? parent->latency_ns : NAN;
    p.baseline_latency_ns = st->baseline_ns;
    sel_env_from(&p.env, "plan", id, run, st, r->env.iter);
    p.candidate_id = ao_strdup(parent && parent->kernel_id ? parent->kernel_id : "?");
    p.candidate_sha256 = sel_dup_or_null(parent ? parent->sha256 : NULL);
    p.source = sel_dup_or_null(parent ? parent->source : NULL);
    p.text = ao_strdup(r->plan_text);
    p.failed_source = ao_strdup(r->source);
    p.diagnostics = ao_diag_for_model(r->status, r->reason, r->diagnostics, FIX_DIAG_MAX);
    p.size = ao_strdup(st->size);
    p.task_path = ao_strdup(st->task_path);
    p.task_sha256 = ao_strdup(st->task_sha256);
    p.config = ao_run_config_json(&st->config);
    sel_out_add(outbox, AO_TOPIC_PLANS, &ao_msg_plan, &p);
    ao_msg_release(&ao_msg_plan, &p);
    return 0;
}

/* An earlier attempt of a slot, kept under its fixes key: what it ended
 * in, and what it cost (the slot's result adds the tokens up). */
struct attempt_rec {
    long long attempt;
    char *status, *reason;
    cJSON *tokens;
};
#define A(name, kind) {#name, kind, offsetof(struct attempt_rec, name), 0, NULL}
static const struct ao_field attempt_fields[] = {
    A(attempt, AO_F_INT), A(status, AO_F_STR), A(reason, AO_F_STR), A(tokens, AO_F_JSON),
};
static const struct ao_msg_type attempt_rec = {"attempt", sizeof(struct attempt_rec), attempt_fields,
                                               (int)(sizeof attempt_fields / sizeof attempt_fields[0])};

/* o's member k replaced by v (taken). */
static void put(cJSON *o, const char *k, cJSON *v)
{
    cJSON_DeleteItemFromObjectCaseSensitive(o, k);
    cJSON_AddItemToObject(o, k, v);
}

/* A fixable failure with attempts left: record the attempt, send the fix
 * request (a step: resent after a crash; a repeat is harmless, the slot
 * takes one result).  Nothing happens for a slot already filled. */
static int request_fix(struct selector *sel, struct ao_io *io, const struct ao_result_msg *r,
                       struct ao_run_state *st, const struct ao_beam_member *parent, const char *slots_key,
                       int rank, int plan, int sample, long long attempt)
{
    char key[AO_KEY_MAX], field[96], err[AO_ERRLEN], *filled = NULL, *text = NULL;
    struct attempt_rec a = {attempt, r->status, r->reason, r->tokens}; /* borrowed: not released */
    cJSON *rec = ao_msg_encode(&attempt_rec, &a), *outbox = cJSON_CreateArray();
    int rc = -1;

    if (ao_rs_hget(sel->store, slots_key, r->slot, &filled, err, sizeof err) < 0) {
        rc = ao_io_fail(io, "run store: %s", err);
        goto out;
    }
    if (filled) { /* a late copy of an earlier attempt */
        rc = 0;
        goto out;
    }
    if (ao_name(key, sizeof key, AO_KEY_FIXES, slots_key) < 0 ||
        ao_name(field, sizeof field, "%s/a%lld", r->slot, attempt) < 0) {
        rc = ao_io_fail(io, "slot %.40s: its key is too long", r->slot);
        goto out;
    }
    text = cJSON_PrintUnformatted(rec);
    if (ao_rs_hsetnx(sel->store, key, field, text, err, sizeof err) < 0) {
        rc = ao_io_fail(io, "run store: %s", err);
        goto out;
    }
    if (add_fix(outbox, r->env.run, st, parent, r, rank, plan, sample, attempt) < 0) {
        rc = ao_io_fail(io, "slot %s: its fix request's id is too long", r->slot);
        goto out;
    }
    ao_info("run %s: slot %s failed (%s) at attempt %lld; sent back to the model", r->env.run,
            r->slot, r->status, attempt);
    st->progress = sel_now_s(); /* a fix is progress: the slot deadline starts again */
    rc = sel_step_fix(sel, io, r->env.run, st, outbox);
out:
    free(filled);
    cJSON_free(text);
    cJSON_Delete(rec);
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

    if (ao_name(key, sizeof key, AO_KEY_FIXES, slots_key) < 0) {
        snprintf(err, errlen, "slot %.40s: its key is too long", r->slot);
        goto fail;
    }
    for (long long a = 1; a < attempt && a <= AO_MAX_FIX_ATTEMPTS; a++) { /* whatever a message claims */
        struct attempt_rec rec;
        char why[AO_ERRLEN];
        cJSON *j;
        if (ao_name(field, sizeof field, "%s/a%lld", r->slot, a) < 0) {
            snprintf(err, errlen, "slot %.40s: its key is too long", r->slot);
            goto fail;
        }
        if (ao_rs_hget(sel->store, key, field, &v, err, errlen) < 0)
            goto fail;
        if (v && (j = cJSON_Parse(v))) { /* we wrote it: one that does not read is left out */
            if (ao_record_decode(&attempt_rec, j, &rec, why, sizeof why) == 0) {
                prompt += ao_json_num(rec.tokens, "prompt", 0);
                completion += ao_json_num(rec.tokens, "completion", 0);
                cJSON_Delete(rec.tokens);
                rec.tokens = NULL; /* the slot's result sums them */
                cJSON_AddItemToArray(fixes, ao_msg_encode(&attempt_rec, &rec));
                ao_msg_release(&attempt_rec, &rec);
            }
            cJSON_Delete(j);
        }
        free(v);
        v = NULL;
    }
    cJSON_AddNumberToObject(tok, "prompt", prompt);
    cJSON_AddNumberToObject(tok, "completion", completion);
    put(m, "tokens", tok);
    put(m, "fixes", fixes);
    put(m, "attempts", cJSON_CreateNumber((double)attempt));
    text = cJSON_PrintUnformatted(m);
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
static int result_not_asked(const struct ao_run_state *st, const struct ao_beam_member *slot_parent,
                            const struct ao_result_msg *r, char *reason, size_t len)
{
    const char *want_task = st->task, *want_target = st->target, *want_size = st->size;
    const char *want_hash = st->task_sha256, *want_base = st->baseline_sha256;
    const char *parent = slot_parent ? slot_parent->sha256 : NULL;
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

/* Has the iteration's progress moved enough to be stored again?  A burst
 * of results stores it once: the slot deadline, counted from the stored
 * time, then holds to 1% of itself (1 s at most), a round trip a result
 * saved. */
static int moved(const struct ao_run_state *st)
{
    double grain = fmin(1.0, sel_slot_deadline(st) / 100);

    return isnan(st->progress) || sel_now_s() - st->progress >= grain;
}

/* The result in hand carries a profiler's signature: on a broker the stage
 * loop checked it already; a pipe's bytes are checked here.  0 or -1. */
static int signed_by_profiler(struct selector *sel, struct ao_io *io, char *reason, size_t len)
{
    if (io->verify && io->key)
        return 0;
    if (!io->held)
        return snprintf(reason, len, "no message in hand to check the signature of"), -1;
    return ao_sign_check(io->held->raw, io->held->len, &sel->key, reason, len);
}


int sel_on_result(struct selector *sel, struct ao_io *io, const cJSON *msg, char *reason,
                  size_t len)
{
    struct ao_result_msg r;
    struct ao_run_state st;
    struct ao_beam beam;
    const struct ao_beam_member *parent;
    char key[AO_KEY_MAX], err[AO_ERRLEN], run[AO_ID_BUF], *text = NULL;
    struct shape sh;
    int rank, plan, sample, rc = -1, isnew, found;
    long have;
    long long iter, attempt;

    if (signed_by_profiler(sel, io, reason, len) < 0 || ao_msg_decode(&ao_msg_result, msg, &r, reason, len) < 0)
        return -1;
    ao_beam_init(&beam);
    if ((found = sel_load_state(sel, r.env.run, &st, io, reason, len)) < 0)
        goto out;
    if (!found) {
        snprintf(reason, len, "no run '%.80s' (no task started it, or its state is gone)", r.env.run);
        goto out;
    }
    if (st.phase == AO_PHASE_FINAL) {
        rc = sel_on_final(sel, io, r.env.run, &st, &r, reason, len);
        goto out;
    }
    iter = st.iter;
    sh = sel_shape_of(&st);
    /* (phase compare: a run started before issue 66, waiting on
     * comparisons no selector asks for now; its clock closes it) */
    if (r.env.iter != iter || st.phase == AO_PHASE_DONE || st.phase == AO_PHASE_MEMORY ||
        st.phase == AO_PHASE_COMPARE) {
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
    if (sel_load_beam(sel, r.env.run, &beam, io, reason, len) < 0)
        goto out;
    parent = rank < beam.n ? &beam.m[rank] : NULL; /* none in iteration 0 */
    if (result_not_asked(&st, parent, &r, reason, len))
        goto out;
    if (ao_name(key, sizeof key, AO_KEY_ITER, r.env.run, iter) < 0) {
        rc = ao_io_fail(io, "run id '%.40s...' is too long for a key", r.env.run);
        goto out;
    }
    attempt = r.attempt == AO_ABSENT_INT || r.attempt < 1 ? 1 : r.attempt;
    if (iter > 0 && fixable(&r) &&
        attempt <= sel_int_or(st.config.fix_attempts, 0)) {
        rc = request_fix(sel, io, &r, &st, parent, key, rank, plan, sample, attempt);
        goto out;
    }
    /* the slot keeps the result as it came (its signature too), unless it
     * gathers the attempts of a fix loop and their tokens */
    if (!(text = attempt > 1 ? slot_text(sel, msg, &r, key, attempt, err, sizeof err)
                 : io->held  ? ao_strndup(io->held->raw, io->held->len)
                             : cJSON_PrintUnformatted(msg))) {
        rc = ao_io_fail(io, "%s", err); /* (slot_text's: the others answer) */
        goto out;
    }
    if ((isnew = ao_rs_hsetnx_len(sel->store, key, r.slot, text, &have, err, sizeof err)) < 0) {
        rc = ao_io_fail(io, "run store: %s", err);
        goto out;
    }
    if (!isnew)
        ao_debug("run %s: slot %s already has its result", r.env.run, r.slot);
    if (isnew && moved(&st)) { /* the iteration moves: its slot deadline starts again */
        st.progress = sel_now_s();
        if (sel_store_state(sel, r.env.run, &st, io) < 0)
            goto out;
    }
    if (sel_save(sel, io) < 0)
        goto out;
    rc = 0;
    snprintf(run, sizeof run, "%s", r.env.run);
    if (isnew && attempt <= 1 && io->held) /* the slot holds what r was decoded from */
        sel_keep_result(sel, key, r.slot, &r);
    /* the last slot (or a redelivered one after a crash mid-close) closes it */
    if (have >= (long)sh.ranks * sh.plans * sh.samples)
        rc = sel_close_iteration(sel, io, run, &st, &beam, key);
out:
    free(text);
    ao_run_state_release(&st);
    ao_beam_release(&beam);
    ao_msg_release(&ao_msg_result, &r);
    return rc;
}
