/* store.c - a run's state in the run store: reading, writing, and each step
 * taken whole (state, beam, outbox) before its messages go; the run's
 * config completed with the selector's defaults */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/alloc.h"
#include "core/rc.h"
#include "core/util.h"
#include "state/memory.h"
#include "state/runstore.h"
#include "targets/target.h"
#include "wire/msg.h"
#include "wire/names.h"
#include "wire/runconfig.h"

#include "selector.h"

/* The selector's options that give a run's config its defaults. */
static const struct {
    const char *key, *option;
} defaults[] = {
    {"beam", "beam"}, {"plans", "plans"}, {"samples", "samples"}, {"iters", "iters"},
    {"topk", "topk"}, {"expn", "expn"}, {"seed", "seed"}, {"memory_deadline_s", "memory-deadline"},
    {"slot_deadline_s", "slot-deadline"}, {"fix_attempts", "fix-attempts"}, {"compare", "compare"},
};

double sel_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The run's effective config: its task's, completed with the selector's
 * defaults, then checked whole (wire/runconfig.h): a default out of bounds
 * is refused as a task's value would be. */
int sel_run_config(struct selector *sel, const cJSON *given, struct ao_run_config *out, char *reason,
                   size_t len)
{
    cJSON *c = given ? cJSON_Duplicate(given, 1) : cJSON_CreateObject();
    char key[AO_KEY_MAX];
    int rc = -1;

    ao_msg_init(&ao_rec_run_config, out);
    if (!cJSON_IsObject(c)) {
        snprintf(reason, len, "config must be an object");
        goto out;
    }
    for (size_t i = 0; i < sizeof defaults / sizeof defaults[0]; i++)
        if (!cJSON_GetObjectItemCaseSensitive(c, defaults[i].key))
            cJSON_AddNumberToObject(c, defaults[i].key, ao_config_num(sel->cfg, defaults[i].option));
    if (!cJSON_GetObjectItemCaseSensitive(c, "memory_scope"))
        cJSON_AddStringToObject(c, "memory_scope", ao_config_str(sel->cfg, "memory-scope"));
    if (!cJSON_GetObjectItemCaseSensitive(c, "plan_mode"))
        cJSON_AddStringToObject(c, "plan_mode", ao_config_str(sel->cfg, "plan-mode"));
    if (ao_run_config_decode(c, out, reason, len) < 0)
        goto out;
    if (ao_memory_key(out->memory_scope, ao_target_default()->name, "t", key, sizeof key, reason, len) < 0)
        ao_run_config_release(out);
    else
        rc = 0;
out:
    cJSON_Delete(c);
    return rc;
}

/* Does the run keep a memory (its scope is not "none")? */
int sel_memory_on(const struct ao_run_state *st)
{
    return !st->config.memory_scope || strcmp(st->config.memory_scope, "none") != 0;
}

/* How long an iteration waits for a missing result (the run's slot deadline). */
double sel_slot_deadline(const struct ao_run_state *st)
{
    return isnan(st->config.slot_deadline_s) ? 1800 : st->config.slot_deadline_s;
}

/* A config's integer, or def where it is absent. */
long long sel_int_or(long long v, long long def)
{
    return v == AO_ABSENT_INT ? def : v;
}

/* A record's load (runstate.h, beam.h) as the selector answers it: the
 * store's failure fails the stage, a record that does not decode is the
 * message's reason. */
static int loaded(int rc, const char *err, struct ao_io *io, char *reason, size_t len)
{
    if (rc == -1)
        return ao_io_fail(io, "run store: %s", err);
    if (rc == AO_RC_CORRUPT)
        return snprintf(reason, len, "%s", err), -1;
    return rc;
}

int sel_load_state(struct selector *sel, const char *run, struct ao_run_state *st, struct ao_io *io,
                   char *reason, size_t len)
{
    char err[AO_ERRLEN];
    int rc = ao_run_state_load(sel->store, run, st, err, sizeof err);

    return loaded(rc, err, io, reason, len);
}

int sel_load_beam(struct selector *sel, const char *run, struct ao_beam *b, struct ao_io *io,
                  char *reason, size_t len)
{
    char err[AO_ERRLEN];
    int rc = ao_beam_load(sel->store, run, b, err, sizeof err);

    return loaded(rc, err, io, reason, len) < 0 ? -1 : 0;
}

void sel_keep_fresh(struct selector *sel, struct ao_io *io)
{
    unsigned g = ao_io_generation(io);

    if (g != sel->kept) { /* the runs may have been another replica's meanwhile */
        ao_rs_keep_clear(sel->store);
        sel_forget_results(sel, NULL);
        sel->kept = g;
    }
}

/* An open iteration's results, kept so that its close need not read and
 * decode them all again; at most KEPT_ITERS iterations (runs) at once. */
#define KEPT_ITERS 32
struct kept_slots {
    struct kept_slots *next;
    char key[AO_KEY_MAX];
    int n, cap;
    struct kept_result {
        char slot[40]; /* "rank.plan.sample" */
        struct ao_result_msg r;
    } *e;
};

static void slots_free(struct kept_slots *k)
{
    for (int i = 0; i < k->n; i++)
        ao_msg_release(&ao_msg_result, &k->e[i].r);
    free(k->e);
    free(k);
}

void sel_forget_results(struct selector *sel, const char *slots_key)
{
    for (struct kept_slots **kp = &sel->slots, *k; (k = *kp);) {
        if (!slots_key || strcmp(k->key, slots_key) == 0) {
            *kp = k->next;
            slots_free(k);
        } else {
            kp = &k->next;
        }
    }
}

void sel_keep_result(struct selector *sel, const char *slots_key, const char *slot,
                     struct ao_result_msg *r)
{
    struct kept_slots *k, **kp;
    int n = 0;

    for (k = sel->slots; k && strcmp(k->key, slots_key) != 0; k = k->next)
        ;
    if (!k) {
        k = ao_calloc(1, sizeof *k);
        snprintf(k->key, sizeof k->key, "%s", slots_key);
        k->next = sel->slots; /* the newest first; the oldest goes past KEPT_ITERS */
        sel->slots = k;
        for (kp = &sel->slots; *kp; kp = &(*kp)->next)
            if (++n > KEPT_ITERS) {
                slots_free(*kp);
                *kp = NULL;
                break;
            }
    }
    if (k->n == k->cap) {
        int cap = k->cap ? 2 * k->cap : 16;
        struct kept_result *e = ao_realloc(k->e, (size_t)cap * sizeof *e);
        k->e = e;
        k->cap = cap;
    }
    if (ao_name(k->e[k->n].slot, sizeof k->e[k->n].slot, "%s", slot) < 0)
        return; /* not a canonical slot: never one the close asks for */
    k->e[k->n++].r = *r;
    ao_msg_init(&ao_msg_result, r); /* taken */
}

int sel_take_result(struct selector *sel, const char *slots_key, const char *slot,
                    struct ao_result_msg *r)
{
    for (struct kept_slots *k = sel->slots; k; k = k->next)
        if (strcmp(k->key, slots_key) == 0) {
            for (int i = 0; i < k->n; i++)
                if (strcmp(k->e[i].slot, slot) == 0) {
                    *r = k->e[i].r;
                    k->e[i] = k->e[--k->n];
                    return 1;
                }
            return 0;
        }
    return 0;
}

cJSON *sel_load_json(struct selector *sel, const char *run, const char *field, struct ao_io *io)
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

int sel_store_json(struct selector *sel, const char *run, const char *field, const cJSON *v,
                   struct ao_io *io)
{
    char key[AO_KEY_MAX], err[AO_ERRLEN], *text = cJSON_PrintUnformatted(v);
    int rc;

    if (ao_name(key, sizeof key, AO_KEY_RUN, run) < 0) {
        cJSON_free(text);
        return ao_io_fail(io, "run id '%.40s...' is too long for a key", run);
    }
    rc = ao_rs_hset(sel->store, key, field, text, err, sizeof err);
    cJSON_free(text);
    return rc < 0 ? ao_io_fail(io, "run store: %s", err) : 0;
}

int sel_store_state(struct selector *sel, const char *run, const struct ao_run_state *st,
                    struct ao_io *io)
{
    cJSON *j = ao_run_state_json(st);
    int rc = sel_store_json(sel, run, "state", j, io);

    cJSON_Delete(j);
    return rc;
}

int sel_save(struct selector *sel, struct ao_io *io)
{
    char err[AO_ERRLEN];
    return ao_runstore_save(sel->store, err, sizeof err) < 0 ? ao_io_fail(io, "%s", err) : 0;
}

/* Send the run's pending outbox, flush, and mark it sent. */
int sel_send_outbox(struct selector *sel, struct ao_io *io, const char *run, const cJSON *outbox)
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
    return sel_save(sel, io);
}

/* Commit a step: the new state, the beam, the messages it sends, in one
 * HSET (atomic: a crash leaves the step taken whole or not at all); a step
 * that opens a phase (all but a fix request) keeps its messages as the
 * phase's too, for a broker that lost them (--resend). */
static int step(struct selector *sel, struct ao_io *io, const char *run, const struct ao_run_state *st,
                const struct ao_beam *beam, const cJSON *outbox, int opens_phase)
{
    char key[AO_KEY_MAX], err[AO_ERRLEN];
    const char *fields[6] = {"state", "outbox", "outbox_pending"};
    const char *vals[6] = {NULL, NULL, "1"};
    char *state = NULL, *sent = NULL, *kept = NULL;
    cJSON *b = beam ? ao_beam_json(beam) : NULL, *s = ao_run_state_json(st);
    int n = 3, rc = -1;

    if (ao_name(key, sizeof key, AO_KEY_RUN, run) < 0) {
        rc = ao_io_fail(io, "run id '%.40s...' is too long for a key", run);
        goto out;
    }
    vals[0] = state = cJSON_PrintUnformatted(s);
    vals[1] = sent = cJSON_PrintUnformatted(outbox);
    if (b)
        kept = cJSON_PrintUnformatted(b);
    if (opens_phase)
        fields[n] = "phase_outbox", vals[n++] = sent;
    if (kept)
        fields[n] = "beam", vals[n++] = kept;
    /* what `accelopt run` waits on: one small field, read each second */
    if (st->phase == AO_PHASE_DONE)
        fields[n] = "ended", vals[n++] = "done";
    if (ao_rs_hset_many(sel->store, key, n, fields, vals, err, sizeof err) < 0) {
        rc = ao_io_fail(io, "run store: %s", err);
        goto out;
    }
    if (sel_save(sel, io) < 0 || sel_send_outbox(sel, io, run, outbox) < 0)
        goto out;
    /* a finished run is no longer in flight (accelopt status, ticks) */
    if (st->phase == AO_PHASE_DONE && ao_rs_srem(sel->store, AO_KEY_ACTIVE, run, err, sizeof err) < 0) {
        rc = ao_io_fail(io, "run store: %s", err);
        goto out;
    }
    rc = 0;
out:
    cJSON_free(state);
    cJSON_free(sent);
    cJSON_free(kept);
    cJSON_Delete(b);
    cJSON_Delete(s);
    return rc;
}

int sel_step(struct selector *sel, struct ao_io *io, const char *run, const struct ao_run_state *st,
             const struct ao_beam *beam, const cJSON *outbox)
{
    return step(sel, io, run, st, beam, outbox, 1);
}

int sel_step_fix(struct selector *sel, struct ao_io *io, const char *run, const struct ao_run_state *st,
                 const cJSON *outbox)
{
    return step(sel, io, run, st, NULL, outbox, 0);
}

void sel_out_add(cJSON *outbox, const char *topic, const struct ao_msg_type *t, const void *msg)
{
    cJSON *e = cJSON_CreateObject();

    cJSON_AddStringToObject(e, "topic", topic);
    cJSON_AddItemToObject(e, "msg", ao_msg_encode(t, msg));
    cJSON_AddItemToArray(outbox, e);
}
