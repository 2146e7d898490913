/* clock.c - time: memory deadlines, wall-time budgets, stalled iterations,
 * and runs resumed when this replica is handed them */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "core/alloc.h"
#include "core/log.h"
#include "core/redis.h"
#include "core/util.h"
#include "state/runstore.h"
#include "wire/msg.h"
#include "wire/names.h"
#include "wire/verdict.h"

#include "selector.h"

static int resend_phase(struct selector *sel, struct ao_io *io, const char *run, long long iter);

/* The run's entry in the list of what was said and done for it (made
 * with no warning said yet). */
static struct warned *warned_of(struct selector *sel, const char *run)
{
    struct warned *w;

    for (w = sel->warned; w && strcmp(w->run, run) != 0; w = w->next)
        ;
    if (!w) {
        w = ao_calloc(1, sizeof *w);
        snprintf(w->run, sizeof w->run, "%s", run);
        w->mark = -2;
        w->next = sel->warned;
        sel->warned = w;
    }
    return w;
}

/* Is the run's phase, missing results since `since`, due to go again
 * (--reask-after)?  Once each period; the period is recorded. */
static int reask_due(struct selector *sel, const char *run, double since)
{
    long period = sel->reask_s > 0 ? (long)((sel_now_s() - since) / sel->reask_s) : 0;
    struct warned *w = period >= 1 ? warned_of(sel, run) : NULL;

    if (!w || w->reasked == period)
        return 0;
    w->reasked = period;
    return 1;
}

/* Is mark new for the run (its warning not said yet)?  It is recorded. */
static int fresh_mark(struct selector *sel, const char *run, long mark)
{
    struct warned *w = warned_of(sel, run);

    if (w && w->mark == mark)
        return 0;
    if (w)
        w->mark = mark;
    return 1;
}

static void warn_missing(struct selector *sel, const char *run, const struct ao_run_state *st)
{
    double waited = sel_now_s() - st->opened;
    long mark = (long)(waited / 120);
    char key[AO_KEY_MAX], err[AO_ERRLEN];
    cJSON *have;
    struct ao_buf b = {0};
    long long iter = st->iter;
    struct shape sh = sel_shape_of(st);
    int shown = 0;

    if (mark < 1)
        return;
    if (!fresh_mark(sel, run, mark))
        return;
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

/* A run whose state or beam does not read back is not ticked: said once. */
static void warn_unreadable(struct selector *sel, const char *run, const char *why)
{
    if (fresh_mark(sel, run, -1))
        ao_warn("%s; its deadlines are not kept", why);
}

/* The `lost` result of a slot, as stored in its place. */
static char *lost_result(const char *run, const struct ao_run_state *st, const char *kernel_id,
                         const char *id, const char *slot, const char *why)
{
    struct ao_result_msg r;
    cJSON *j = NULL;
    char *text;

    ao_msg_init(&ao_msg_result, &r);
    sel_env_from(&r.env, "result", id, run, st, st->iter);
    r.kernel_id = ao_strdup(kernel_id);
    r.slot = ao_strdup(slot);
    r.size = ao_strdup(st->size);
    r.status = ao_strdup(ao_verdict_name(AO_V_LOST));
    r.reason = ao_strdup(why);
    j = ao_msg_encode(&ao_msg_result, &r);
    text = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    ao_msg_release(&ao_msg_result, &r);
    return text;
}

/* No result of the open iteration has come for the slot deadline: every
 * slot still without one gets a `lost` result saying so (recorded like a
 * result, so one that comes later counts no more), and the iteration closes. */
static int lose_missing(struct selector *sel, struct ao_io *io, const char *run, struct ao_run_state *st)
{
    long long iter = st->iter;
    struct shape sh = sel_shape_of(st);
    char key[AO_KEY_MAX], err[AO_ERRLEN], why[400], bad[AO_ERRLEN];
    struct ao_beam beam;
    int lost = 0, rc = 0;

    if (ao_name(key, sizeof key, AO_KEY_ITER, run, iter) < 0)
        return ao_io_fail(io, "run id '%.40s...' is too long for a key", run);
    snprintf(why, sizeof why, "no result came for %g s (the slot deadline): the kernel went to the "
             "dead letters, or a planner, executor or profiler never answered",
             sel_slot_deadline(st));
    for (int r = 0; r < sh.ranks && rc == 0; r++)
        for (int p = 0; p < sh.plans && rc == 0; p++)
            for (int q = 0; q < sh.samples && rc == 0; q++) {
                char slot[64], kid[AO_ID_BUF], id[AO_ID_BUF], *text;
                int isnew;
                snprintf(slot, sizeof slot, "%d.%d.%d", r, p, q); /* three ints: fits */
                if (ao_name(kid, sizeof kid, AO_ID_KERNEL, run, iter, slot) < 0 ||
                    ao_name(id, sizeof id, AO_ID_RESULT, kid) < 0)
                    continue; /* a run id is at most AO_RUN_ID_MAX: they fit */
                text = lost_result(run, st, kid, id, slot, why);
                if ((isnew = ao_rs_hsetnx(sel->store, key, slot, text, err, sizeof err)) < 0)
                    rc = ao_io_fail(io, "run store: %s", err);
                lost += isnew > 0;
                cJSON_free(text);
            }
    if (rc < 0 || sel_save(sel, io) < 0)
        return -1;
    ao_warn("run %s: iteration %lld: %d of its %d results lost (%s)", run, iter, lost,
            sh.ranks * sh.plans * sh.samples, why);
    if (sel_load_beam(sel, run, &beam, io, bad, sizeof bad) < 0) {
        if (!io->err[0])
            warn_unreadable(sel, run, bad);
        return io->err[0] ? -1 : 0;
    }
    rc = sel_close_iteration(sel, io, run, st, &beam, key);
    ao_beam_release(&beam);
    return rc;
}

static int tick_run(struct selector *sel, struct ao_io *io, const char *run)
{
    struct ao_run_state st;
    struct ao_beam beam;
    cJSON *outbox = NULL;
    char why[AO_ERRLEN] = "";
    int rc = 0, have = sel_load_state(sel, run, &st, io, why, sizeof why);

    ao_beam_init(&beam);
    if (have < 0 && why[0]) {
        warn_unreadable(sel, run, why);
        return 0;
    }
    if (have <= 0 || st.phase == AO_PHASE_NONE || st.phase == AO_PHASE_DONE)
        goto out;
    if (sel_wall_time_out(&st)) { /* the token and dollar budgets stop a run between iterations */
        if (sel_load_beam(sel, run, &beam, io, why, sizeof why) < 0)
            goto unreadable;
        outbox = cJSON_CreateArray();
        rc = sel_add_done(sel, outbox, run, &st, &beam, "wall_time", "the run's wall time ran out") < 0
                 ? ao_io_fail(io, "run %.40s: its done's id is too long", run)
                 : sel_step(sel, io, run, &st, NULL, outbox);
    } else if (st.phase == AO_PHASE_MEMORY && sel_now_s() > st.deadline) {
        ao_warn("run %s: memory deadline passed with pairs unacked; going on without them", run);
        st.memory_deadline_missed = 1;
        if (sel_load_beam(sel, run, &beam, io, why, sizeof why) < 0)
            goto unreadable;
        rc = sel_advance(sel, io, run, &st, &beam);
    } else if (st.phase == AO_PHASE_FINAL) {
        if (sel_now_s() - st.progress > sel_slot_deadline(&st)) {
            ao_warn("run %s: the final head-to-head never came; the search's figures stand", run);
            if (sel_load_beam(sel, run, &beam, io, why, sizeof why) < 0)
                goto unreadable;
            outbox = cJSON_CreateArray();
            rc = sel_add_done(sel, outbox, run, &st, &beam, st.final_stop ? st.final_stop : "iterations",
                              "the final head-to-head never came (the slot deadline passed)") < 0
                     ? ao_io_fail(io, "run %.40s: its done's id is too long", run)
                     : sel_step(sel, io, run, &st, NULL, outbox);
        }
    } else if (st.phase == AO_PHASE_COMPARE) {
        if (sel_now_s() - st.progress > sel_slot_deadline(&st)) {
            char key[AO_KEY_MAX];
            /* a run from before issue 66, when comparisons came after the
             * children's own measurements: those results are its figures */
            ao_warn("run %s: iteration %lld: waiting on comparisons no selector asks for now; closed on its "
                    "children's own results", run, st.iter);
            if (sel_load_beam(sel, run, &beam, io, why, sizeof why) < 0)
                goto unreadable;
            rc = ao_name(key, sizeof key, AO_KEY_ITER, run, st.iter) < 0
                     ? ao_io_fail(io, "run id '%.40s...' is too long for a key", run)
                     : sel_close_iteration(sel, io, run, &st, &beam, key);
        }
    } else if (st.phase == AO_PHASE_COLLECT || st.phase == AO_PHASE_BASELINE) {
        double since = isnan(st.progress) ? st.opened : st.progress;
        if (sel_now_s() - since > sel_slot_deadline(&st)) {
            rc = lose_missing(sel, io, run, &st);
        } else {
            warn_missing(sel, run, &st);
            if (reask_due(sel, run, since)) {
                ao_warn("run %s: results missing for %.0f s: its phase's messages go again", run,
                        sel_now_s() - since);
                rc = resend_phase(sel, io, run, st.iter);
            }
        }
    }
    goto out;
unreadable: /* the store failed (io says so), or the beam does not decode */
    if (io->err[0])
        rc = -1;
    else
        warn_unreadable(sel, run, why);
out:
    if (have < 0)
        rc = -1;
    ao_run_state_release(&st);
    ao_beam_release(&beam);
    cJSON_Delete(outbox);
    return rc;
}

/* The runs in flight that this replica owns (their partition is assigned
 * to it; replicas share the work by runs), each with `fn`: how many, or -1. */
static int each_run(struct selector *sel, struct ao_io *io,
                    int (*fn)(struct selector *, struct ao_io *, const char *))
{
    char err[AO_ERRLEN];
    cJSON *runs = ao_rs_smembers(sel->store, AO_KEY_ACTIVE, err, sizeof err);
    const cJSON *it;
    int rc = 0, owned = 0, all;

    if (!runs)
        return ao_io_fail(io, "run store: %s", err);
    all = cJSON_GetArraySize(runs);

    cJSON_ArrayForEach(it, runs)
        if (rc == 0 && ao_io_owns(io, it->valuestring)) {
            rc = fn(sel, io, it->valuestring);
            owned++;
        }
    cJSON_Delete(runs);
    /* none in flight counts as all seen */
    return rc < 0 ? -1 : all == 0 ? 1 : owned;
}

/* Forget the stages' acted-on marks (AO_KEY_ACTED, wire/once.h) of the
 * run's messages of iteration iter: a field "<stage>:<type>:<run>:<iter>:..."
 * (a result's or an experience's id holds the kernel's or pair's).  The
 * marks of other iterations stay, so a replay of an earlier message is
 * still refused after a re-ask (issue 68).  iter < 0: every mark (a new
 * broker, --resend: none of the old places exist).  0, or -1 (io says
 * why). */
static int forget_acted(struct selector *sel, struct ao_io *io, const char *run, long long iter)
{
    char key[AO_KEY_MAX], ekey[AO_REDIS_KEY_MAX], err[AO_ERRLEN] = "", at[AO_RUN_ID_MAX + 48];
    const char *argv[2 + 256];
    cJSON *all, *it;
    int n = 2, rc = 0;

    if (ao_name(key, sizeof key, AO_KEY_ACTED, run) < 0 || ao_name(at, sizeof at, ":%s:%lld:", run, iter) < 0)
        return ao_io_fail(io, "run id '%.40s...' is too long for a key", run);
    if (iter < 0 || !sel->redis) /* (without Redis, a state file, the stages keep no marks) */
        return ao_rs_del(sel->store, key, err, sizeof err) < 0
                   ? ao_io_fail(io, "run store: cannot forget what the stages acted on: %s", err)
                   : 0;
    if (!ao_redis_key(sel->redis, ekey, sizeof ekey, "%s", key)) /* HDEL goes past the store: its prefix */
        return ao_io_fail(io, "the redis prefix is too long for '%s'", key);
    if (!(all = ao_rs_hgetall(sel->store, key, err, sizeof err)))
        return ao_io_fail(io, "run store: cannot read what the stages acted on: %s", err);
    argv[0] = "HDEL", argv[1] = ekey;
    for (it = all->child; rc == 0 && it; it = it->next) {
        redisReply *rep;
        if (strstr(it->string, at))
            argv[n++] = it->string;
        if (n == 2 || (n < (int)(sizeof argv / sizeof argv[0]) && it->next))
            continue; /* nothing to send yet */
        if (!(rep = ao_redis_argv(sel->redis, n, argv, NULL, err, sizeof err)))
            rc = ao_io_fail(io, "run store: cannot forget what the stages acted on: %s", err);
        else
            freeReplyObject(rep);
        n = 2;
    }
    cJSON_Delete(all);
    return rc;
}

/* --resend: the broker lost what was in flight (accelopt run --resume
 * on a new embedded broker).  The messages of the step that opened the
 * run's phase go again (the open iteration's candidates, its pairs, the
 * final kernel), and the last fix request if that came after: slots that
 * have their results keep them (a repeat counts once), the rest are
 * worked again. */
static int resend_phase(struct selector *sel, struct ao_io *io, const char *run, long long iter)
{
    cJSON *phase = sel_load_json(sel, run, "phase_outbox", io), *last = NULL;
    int rc = -1;

    if (!phase || !(last = sel_load_json(sel, run, "outbox", io)))
        goto out;
    ao_info("run %s: the broker lost what was in flight; sending the phase's messages again", run);
    /* what the stages acted on in this phase went with the broker's
     * outputs: the same ids come again, to be acted on again, not refused
     * as replays; the marks of earlier iterations stay (issue 68) */
    if (forget_acted(sel, io, run, iter) < 0)
        goto out;
    if (!cJSON_IsNull(phase) && sel_send_outbox(sel, io, run, phase) < 0)
        goto out;
    rc = cJSON_IsNull(last) || cJSON_Compare(phase, last, 1) ? 0 : sel_send_outbox(sel, io, run, last);
out:
    cJSON_Delete(phase);
    cJSON_Delete(last);
    return rc;
}

/* When a run comes to this replica (at start, or from another replica):
 * resend the outbox a crash left unsent; forget it if finished. */
static int resume_run(struct selector *sel, struct ao_io *io, const char *run)
{
    char key[AO_KEY_MAX], err[AO_ERRLEN], why[AO_ERRLEN] = "", *pending = NULL;
    struct ao_run_state st;
    cJSON *outbox = NULL;
    int rc = 0, have = sel_load_state(sel, run, &st, io, why, sizeof why);

    if (have < 0 && !why[0])
        return -1; /* the store failed */
    if (ao_name(key, sizeof key, AO_KEY_RUN, run) < 0) {
        rc = ao_io_fail(io, "run id '%.40s...' is too long for a key", run);
    } else if (ao_rs_hget(sel->store, key, "outbox_pending", &pending, err, sizeof err) < 0) {
        rc = ao_io_fail(io, "run store: %s", err);
    } else if (sel->resend && have > 0 && st.phase != AO_PHASE_DONE) {
        rc = resend_phase(sel, io, run, -1);
    } else if (pending && strcmp(pending, "1") == 0) {
        ao_info("run %s: resending the last step's messages", run);
        rc = (outbox = sel_load_json(sel, run, "outbox", io)) ? sel_send_outbox(sel, io, run, outbox) : -1;
    }
    if (rc == 0 && have > 0 && st.phase == AO_PHASE_DONE &&
        ao_rs_srem(sel->store, AO_KEY_ACTIVE, run, err, sizeof err) < 0)
        rc = ao_io_fail(io, "run store: %s", err);
    free(pending);
    ao_run_state_release(&st);
    cJSON_Delete(outbox);
    return rc;
}

int sel_tick(void *ctx, struct ao_io *io)
{
    struct selector *sel = ctx;
    double t = sel_now_s();
    unsigned g = ao_io_generation(io);

    sel_keep_fresh(sel, io);
    if (g != sel->resumed) { /* runs came to this replica: finish their last steps */
        int seen;
        sel->resumed = g;
        if ((seen = each_run(sel, io, resume_run)) < 0)
            return -1;
        if (seen > 0)
            sel->resend = 0; /* once: what the new broker has from now on is not lost */
    }
    if (t - sel->last_tick < 1)
        return 0;
    sel->last_tick = t;
    return each_run(sel, io, tick_run) < 0 ? -1 : 0;
}
