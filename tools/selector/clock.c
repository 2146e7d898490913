/* clock.c - time: memory deadlines, wall-time budgets, stalled iterations,
 * and runs resumed when this replica is handed them */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "core/util.h"
#include "state/phase.h"
#include "state/runstore.h"
#include "wire/msg.h"
#include "wire/names.h"
#include "wire/verdict.h"

#include "selector.h"

static void warn_missing(struct selector *sel, const char *run, const cJSON *state)
{
    double waited = sel_now_s() - ao_json_num(state, "opened", NAN);
    long mark = (long)(waited / 120);
    struct warned *w;
    char key[AO_KEY_MAX], err[AO_ERRLEN];
    cJSON *have;
    struct ao_buf b = {0};
    long long iter = (long long)ao_json_num(state, "iter", NAN);
    struct shape sh = sel_shape_of(state);
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
    struct shape sh = sel_shape_of(state);
    char key[AO_KEY_MAX], err[AO_ERRLEN], why[400];
    cJSON *beam = NULL;
    int lost = 0, rc = 0;

    if (ao_name(key, sizeof key, AO_KEY_ITER, run, iter) < 0)
        return ao_io_fail(io, "run id '%.40s...' is too long for a key", run);
    snprintf(why, sizeof why, "no result came for %g s (the slot deadline): the kernel went to the "
             "dead letters, or a planner, executor or profiler never answered",
             sel_slot_deadline(state));
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
                sel_sets(res, "type", "result");
                sel_setn(res, "v", 1);
                sel_sets(res, "kernel_id", id);
                {
                    char kid[AO_ID_BUF];
                    snprintf(kid, sizeof kid, "%s", id);
                    if (ao_name(id, sizeof id, AO_ID_RESULT, kid) < 0) {
                        cJSON_Delete(res);
                        continue;
                    }
                }
                sel_sets(res, "id", id);
                sel_sets(res, "run", run);
                sel_sets(res, "task", ao_json_str(state, "task", ""));
                sel_sets(res, "target", ao_json_str(state, "target", ""));
                sel_setn(res, "iter", (double)iter);
                sel_sets(res, "slot", slot);
                sel_sets(res, "size", ao_json_str(state, "size", ""));
                sel_sets(res, "status", ao_verdict_name(AO_V_LOST));
                sel_sets(res, "reason", why);
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
    if (rc < 0 || sel_save(sel, io) < 0)
        return -1;
    ao_warn("run %s: iteration %lld: %d of its %d results lost (%s)", run, iter, lost,
            sh.ranks * sh.plans * sh.samples, why);
    if (!(beam = sel_load_json(sel, run, "beam", io)))
        return -1;
    rc = sel_close_iteration(sel, io, run, state, beam, key);
    cJSON_Delete(beam);
    return rc;
}

static int tick_run(struct selector *sel, struct ao_io *io, const char *run)
{
    cJSON *state = sel_load_json(sel, run, "state", io), *beam = NULL, *outbox = NULL;
    enum ao_phase phase;
    const char *stop;
    int rc = 0;

    if (!state)
        return -1;
    if (cJSON_IsNull(state) || (phase = ao_phase_of(state)) == AO_PHASE_NONE || phase == AO_PHASE_DONE)
        goto out;
    if ((stop = sel_budget_stop(sel, run, state)) && strcmp(stop, "wall_time") == 0) {
        if (!(beam = sel_load_json(sel, run, "beam", io)) || !(outbox = cJSON_CreateArray())) {
            rc = ao_io_fail(io, "out of memory");
            goto out;
        }
        if (sel_add_done(sel, outbox, run, state, beam, stop, "the run's wall time ran out") < 0) {
            rc = ao_io_fail(io, "out of memory");
            goto out;
        }
        rc = sel_step(sel, io, run, state, NULL, outbox);
    } else if (phase == AO_PHASE_MEMORY && sel_now_s() > ao_json_num(state, "deadline", NAN)) {
        ao_warn("run %s: memory deadline passed with pairs unacked; going on without them", run);
        cJSON_AddBoolToObject(state, "memory_deadline_missed", 1);
        rc = (beam = sel_load_json(sel, run, "beam", io)) ? sel_advance(sel, io, run, state, beam) : -1;
    } else if (phase == AO_PHASE_FINAL) {
        if (sel_now_s() - ao_json_num(state, "progress", NAN) > sel_slot_deadline(state)) {
            ao_warn("run %s: the final head-to-head never came; the search's figures stand", run);
            if (!(beam = sel_load_json(sel, run, "beam", io)) || !(outbox = cJSON_CreateArray())) {
                rc = ao_io_fail(io, "out of memory");
                goto out;
            }
            rc = sel_add_done(sel, outbox, run, state, beam, ao_json_str(state, "final_stop", "iterations"),
                              "the final head-to-head never came (the slot deadline passed)") < 0
                     ? ao_io_fail(io, "out of memory")
                     : sel_step(sel, io, run, state, NULL, outbox);
        }
    } else if (phase == AO_PHASE_COLLECT || phase == AO_PHASE_BASELINE) {
        double since = ao_json_num(state, "progress", ao_json_num(state, "opened", NAN));
        if (sel_now_s() - since > sel_slot_deadline(state))
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
    cJSON *runs = ao_rs_smembers(sel->store, AO_KEY_ACTIVE, err, sizeof err);
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
    cJSON *state = sel_load_json(sel, run, "state", io), *outbox = NULL;
    int rc = 0;

    if (!state)
        return -1;
    if (ao_name(key, sizeof key, AO_KEY_RUN, run) < 0) {
        rc = ao_io_fail(io, "run id '%.40s...' is too long for a key", run);
    } else if (ao_rs_hget(sel->store, key, "outbox_pending", &pending, err, sizeof err) < 0) {
        rc = ao_io_fail(io, "run store: %s", err);
    } else if (pending && strcmp(pending, "1") == 0) {
        ao_info("run %s: resending the last step's messages", run);
        rc = (outbox = sel_load_json(sel, run, "outbox", io)) ? sel_send_outbox(sel, io, run, outbox) : -1;
    }
    if (rc == 0 && !cJSON_IsNull(state) && ao_phase_of(state) == AO_PHASE_DONE &&
        ao_rs_srem(sel->store, AO_KEY_ACTIVE, run, err, sizeof err) < 0)
        rc = ao_io_fail(io, "run store: %s", err);
    free(pending);
    cJSON_Delete(state);
    cJSON_Delete(outbox);
    return rc;
}

int sel_tick(void *ctx, struct ao_io *io)
{
    struct selector *sel = ctx;
    double t = sel_now_s();
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
