/* results.c - results fill an iteration; a full one is closed: the beam
 * chosen, the pairs sent */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/log.h"
#include "core/task.h"
#include "core/util.h"
#include "state/beam.h"
#include "state/runstore.h"
#include "state/select.h"
#include "wire/msg.h"
#include "wire/names.h"
#include "wire/runconfig.h"
#include "wire/verdict.h"

#include "selector.h"

/* "r.p.s" into its numbers; 0 or -1. */
int sel_parse_slot(const char *slot, int *r, int *p, int *s)
{
    return ao_slot_parse(slot, r, p, s);
}

struct shape sel_shape_of(const struct ao_run_state *st)
{
    if (st->iter == 0)
        return (struct shape){1, 1, 1};
    return (struct shape){(int)st->candidates, (int)sel_int_or(st->config.plans, 1),
                          (int)sel_int_or(st->config.samples, 1)};
}

/* One more result of this status in the iteration's tally; 0 or -1. */
static void count(cJSON *statuses, const char *status)
{
    cJSON *n = cJSON_GetObjectItemCaseSensitive(statuses, status);

    if (n)
        cJSON_SetNumberValue(n, n->valuedouble + 1);
    else
        cJSON_AddNumberToObject(statuses, status, 1);
}

/* A member's profile as the summarizer sees it: latency_ns, pct_of_peak
 * and the profile fields, in one object. */
static cJSON *pair_profile(const struct ao_beam_member *m)
{
    cJSON *p = ao_kernel_profile_json(&m->profile);

    if (isfinite(m->latency_ns))
        cJSON_AddNumberToObject(p, "latency_ns", m->latency_ns);
    if (isfinite(m->pct_of_peak))
        cJSON_AddNumberToObject(p, "pct_of_peak", m->pct_of_peak);
    return p;
}

/* The size the run measures at, for the lesson: "cpu: M=512 N=512 K=512".
 * 0, or -1 when the task cannot be read again or the shape does not fit
 * (the pair goes without). */
static int pair_shape(const struct ao_run_state *st, char *out, size_t len)
{
    struct ao_task t;
    long long dims[AO_MAX_DIMS];
    char e[AO_ERRLEN];
    size_t at;

    if (!st->task_path || !st->size || ao_task_load(st->task_path, &t, e, sizeof e) < 0 ||
        ao_task_size(&t, st->size, dims, e, sizeof e) < 0)
        return -1;
    at = (size_t)snprintf(out, len, "%s:", st->size);
    for (int i = 0; i < t.ndims && at < len; i++)
        at += (size_t)snprintf(out + at, len - at, " %s=%lld", t.dims[i], dims[i]);
    return at < len ? 0 : -1; /* a shape cut short would be another: none rather */
}

static int add_pair(cJSON *outbox, const char *run, const struct ao_run_state *st, long long iter,
                    const struct ao_beam_member *parent, const struct ao_beam_member *child, double speedup,
                    const struct ao_sel_cmp *cmp, int rank, int plan, cJSON *ids)
{
    struct ao_pair_msg p;
    const struct ao_beam_member *slow = speedup > 1 ? parent : child, *fast = speedup > 1 ? child : parent;
    char id[AO_ID_BUF], shape[200];

    ao_msg_init(&ao_msg_pair, &p);
    if (ao_name(id, sizeof id, AO_ID_PAIR, run, iter, rank, plan) < 0)
        return -1;
    p.speedup = speedup > 1 ? speedup : 1 / speedup; /* how much faster the fast one is */
    if (cmp->have) { /* head to head: the interval of the fast one's speedup, and its half-width */
        p.speedup_low = speedup > 1 ? cmp->low : 1 / cmp->high;
        p.speedup_high = speedup > 1 ? cmp->high : 1 / cmp->low;
        p.speedup_spread = (p.speedup_high - p.speedup_low) / 2 / p.speedup;
    } else { /* a ratio's relative uncertainty is at most the sum of its terms' */
        p.speedup_spread = slow->profile.spread + fast->profile.spread;
    }
    sel_env_from(&p.env, "pair", id, run, st, iter);
    p.slow_source = sel_dup_or_null(slow->source);
    p.fast_source = sel_dup_or_null(fast->source);
    p.slow_sha256 = sel_dup_or_null(slow->sha256);
    p.fast_sha256 = sel_dup_or_null(fast->sha256);
    p.direction = ao_strdup(speedup > 1 ? "+" : "-");
    if (child->plan_text)
        p.plan = ao_strdup(child->plan_text);
    if (pair_shape(st, shape, sizeof shape) == 0)
        p.shape = ao_strdup(shape);
    p.slow_profile = pair_profile(slow);
    p.fast_profile = pair_profile(fast);
    p.config = ao_run_config_json(&st->config);
    sel_out_add(outbox, AO_TOPIC_PAIRS, &ao_msg_pair, &p);
    cJSON_AddItemToArray(ids, cJSON_CreateString(id));
    ao_msg_release(&ao_msg_pair, &p);
    return 0;
}

/* The iteration's results, each decoded as the result message it was
 * stored as (one that does not decode is left empty, no status: it counts
 * as failed), and the kernels
 * to choose from: k[0..nbeam) the parents, then the correct children, each
 * child's member in kids (by the same index). */
struct closing {
    int n, nok, nfail, nk;
    int compared, faster, slower, ties, voided; /* the children's head-to-heads */
    struct ao_result_msg *res;
    struct ao_sel_kernel *k;
    struct ao_beam_member *kids;
    cJSON *statuses;
};

static void closing_release(struct closing *c)
{
    for (int i = 0; c->res && i < c->n; i++)
        ao_msg_release(&ao_msg_result, &c->res[i]);
    for (int i = 0; c->kids && i < c->nk; i++)
        ao_beam_member_release(&c->kids[i]);
    free(c->res);
    free(c->k);
    free(c->kids);
    cJSON_Delete(c->statuses);
}

/* A correct child's head-to-head with its parent, from its result, into
 * the tally (issue 66: the only measurement of a kernel a model wrote). */
static void closing_compared(struct closing *c, int x, const struct ao_result_msg *r, const char *slot)
{
    struct ao_sel_cmp *cmp = &c->k[x].cmp;
    enum ao_cmp_verdict v;

    if (!r->head_to_head)
        return; /* measured alone (--no-compare): ranked behind its parent */
    c->compared++;
    if (!sel_compare_of(r, cmp)) {
        c->voided++;
        return;
    }
    v = ao_sel_cmp_verdict(cmp);
    c->faster += v == AO_CMP_FASTER;
    c->slower += v == AO_CMP_SLOWER;
    c->ties += v == AO_CMP_TIE;
    ao_debug("slot %s against its parent: %.3fx (%.3f-%.3f), %s", slot, cmp->speedup, cmp->low, cmp->high,
             ao_sel_cmp_name(v));
}

/* Read the slots into c: each as this selector kept it when it came, else
 * parsed from the store. */
static void closing_read(struct selector *sel, const char *slots_key, struct closing *c,
                        const cJSON *slots, const struct ao_beam *beam, long long iter)
{
    const cJSON *it;
    size_t cap;

    c->n = cJSON_GetArraySize(slots);
    cap = (size_t)(c->n + beam->n) + 1;
    c->res = ao_calloc((size_t)c->n + 1, sizeof *c->res);
    c->k = ao_calloc(cap, sizeof *c->k);
    c->kids = ao_calloc(cap, sizeof *c->kids);
    c->statuses = cJSON_CreateObject();
    for (int r = 0; r < beam->n; r++) {
        const struct ao_beam_member *b = &beam->m[r];
        c->k[r] = (struct ao_sel_kernel){.sha256 = b->sha256, .latency_ns = b->latency_ns, .parent = 1,
                                         .rank = r, .plan = -1,
                                         .spread = sel_median_u(b->profile.spread, b->profile.repeats)};
    }
    c->nk = beam->n;
    for (int i = 0; i < c->n; i++)
        ao_msg_init(&ao_msg_result, &c->res[i]);
    {
        int i = 0;
        cJSON_ArrayForEach(it, slots) {
            struct ao_result_msg *r = &c->res[i];
            char err[AO_ERRLEN];
            const char *status;
            int rk, p, s;
            if (!sel_take_result(sel, slots_key, it->string, r)) {
                cJSON *j = cJSON_Parse(it->valuestring);
                ao_msg_decode(&ao_msg_result, j, r, err, sizeof err); /* status is required: set when it decoded */
                cJSON_Delete(j);
            }
            status = r->status ? r->status : "unknown";
            count(c->statuses, status);
            if (ao_verdict_of(status) == AO_V_OK && r->latency_ns > 0 &&
                sel_parse_slot(it->string, &rk, &p, &s) == 0) {
                int x = c->nk++; /* the child's kernel, and its member */
                ao_beam_member_of(&c->kids[x], r, iter);
                c->k[x] = (struct ao_sel_kernel){.sha256 = c->kids[x].sha256, .latency_ns = r->latency_ns,
                                                 .rank = rk, .plan = p,
                                                 .spread = sel_median_u(r->spread, r->repeats)};
                c->nok++;
                if (iter > 0)
                    closing_compared(c, x, r, it->string);
            } else if (ao_verdict_of(status) != AO_V_DUPLICATE && /* a duplicate failed nothing, */
                       r->exhausted <= 0) { /* nor did a search out of moves */
                c->nfail++;
            }
            i++;
        }
    }
}

/* How many of the iteration's results bring a kernel the run had not
 * measured before (issue 69: a search with nothing new to try stops).
 * Each source's first iteration is kept (HSETNX), so a closing read again
 * after a crash counts the same.  The count, or -1 + err. */
static int count_new(struct selector *sel, const char *run, const struct closing *c, long long iter, char *err,
                     size_t errlen)
{
    char key[AO_KEY_MAX], it[24];
    int fresh = 0;

    if (ao_name(key, sizeof key, AO_KEY_SOURCES, run) < 0)
        return ao_errf(err, errlen, "run id '%.40s...' is too long for a key", run);
    snprintf(it, sizeof it, "%lld", iter);
    for (int i = 0; i < c->n; i++) {
        const char *sha = c->res[i].sha256;
        char *first = NULL;
        if (!sha || !sha[0])
            continue; /* an empty slot: no kernel */
        if (ao_rs_hsetnx(sel->store, key, sha, it, err, errlen) < 0 ||
            ao_rs_hget(sel->store, key, sha, &first, err, errlen) < 0)
            return -1;
        fresh += first && strcmp(first, it) == 0;
        free(first);
    }
    return fresh;
}

/* A kept child's latency as the comparisons put it (ao_select_chain), and
 * its % of peak with it: both quote one figure. */
static void set_latency(struct ao_beam_member *m, double ns)
{
    m->latency_ns = ns;
    if (isfinite(m->profile.t_min_ns) && ns > 0)
        m->pct_of_peak = m->profile.t_min_ns / ns;
}

/* What the choice rested on, for the history (issue 54): each correct
 * child's latency as the search ranked it ("ranked", slot: ns: its
 * comparison with its parent applied, ao_select_chain), and the slots of
 * the new beam, best first ("kept": "ITER:SLOT", or "baseline").  A child measured fast alone but kept out by its
 * comparison shows here why. */
static void add_ranking(cJSON *hist, const struct closing *cl, const struct ao_beam *beam,
                       const struct ao_beam *newbeam)
{
    cJSON *ranked = cJSON_AddObjectToObject(hist, "ranked"), *kept = cJSON_AddArrayToObject(hist, "kept");

    for (int x = beam->n; x < cl->nk; x++)
        if (cl->kids[x].slot && !cl->k[x].dropped)
            cJSON_AddNumberToObject(ranked, cl->kids[x].slot, cl->k[x].latency_ns);
    for (int j = 0; j < newbeam->n; j++) {
        const struct ao_beam_member *m = &newbeam->m[j];
        char at[64];
        if (m->iter > 0 && m->slot)
            snprintf(at, sizeof at, "%lld:%.40s", m->iter, m->slot);
        else
            snprintf(at, sizeof at, "baseline");
        cJSON_AddItemToArray(kept, cJSON_CreateString(at));
    }
}

/* The closed iteration's line of the run's history, and its log line. */
static void closing_history(cJSON *hist, const char *run, const struct ao_run_state *st, struct closing *cl,
                           const struct ao_beam *beam, const struct ao_beam *newbeam, int fresh, int npairs,
                           int compare)
{
    const struct ao_beam_member *best = newbeam->n ? &newbeam->m[0] : NULL;
    double best_ns = best ? best->latency_ns : NAN, base = st->baseline_ns;
    long long iter = st->iter;

    cJSON_AddNumberToObject(hist, "iter", (double)iter);
    cJSON_AddNumberToObject(hist, "kernels", cl->n);
    cJSON_AddNumberToObject(hist, "new_kernels", fresh); /* sources the run had not measured */
    cJSON_AddNumberToObject(hist, "ok", cl->nok);
    cJSON_AddItemToObject(hist, "statuses", cl->statuses);
    cl->statuses = NULL;
    cJSON_AddNumberToObject(hist, "best_ns", best_ns);
    cJSON_AddNumberToObject(hist, "speedup", base / best_ns);
    if (best && isfinite(best->pct_of_peak))
        cJSON_AddNumberToObject(hist, "pct_of_peak", best->pct_of_peak);
    cJSON_AddNumberToObject(hist, "pairs", npairs);
    if (compare) { /* what the head-to-heads decided: a tie is recorded as one */
        cJSON_AddNumberToObject(hist, "compared", cl->compared);
        cJSON_AddNumberToObject(hist, "faster", cl->faster);
        cJSON_AddNumberToObject(hist, "slower", cl->slower);
        cJSON_AddNumberToObject(hist, "ties", cl->ties);
        if (cl->voided) /* their parent ran well outside its own figures */
            cJSON_AddNumberToObject(hist, "voided", cl->voided);
    }
    if (iter > 0)
        add_ranking(hist, cl, beam, newbeam);
    cJSON_AddNumberToObject(hist, "seconds", sel_now_s() - st->opened);
    ao_info("run %s: iteration %lld closed: %d kernels, %d correct, best %.4g ns (%.3gx), %d pairs%s", run, iter,
            cl->n, cl->nok, best_ns, base / best_ns, npairs,
            iter > 0 && !compare ? " (decided on single measurements)" : "");
}

/* Every slot of the iteration has its result: choose, then pairs or on. */
int sel_close_iteration(struct selector *sel, struct ao_io *io, const char *run, struct ao_run_state *st,
                        const struct ao_beam *beam, const char *slots_key)
{
    const struct ao_run_config *c = &st->config;
    long long iter = st->iter;
    int order[AO_MAX_BEAM], npairs = 0, nsel;
    double parent_ns[AO_MAX_BEAM];
    char err[AO_ERRLEN];
    struct closing cl = {0};
    struct ao_beam newbeam;
    cJSON *all, *outbox = NULL, *hist = NULL, *pair_ids = NULL;
    struct ao_sel_pair pairs[64];
    int rc = -1, fresh = 0, compare = iter > 0 && sel_compare_on(st);

    ao_beam_init(&newbeam);
    if (!(all = ao_rs_hgetall(sel->store, slots_key, err, sizeof err)))
        return ao_io_fail(io, "run store: %s", err);
    closing_read(sel, slots_key, &cl, all, beam, iter);
    sel_forget_results(sel, slots_key); /* taken, or of no use now */
    if ((fresh = count_new(sel, run, &cl, iter, err, sizeof err)) < 0) {
        closing_release(&cl);
        cJSON_Delete(all);
        return ao_io_fail(io, "run store: %s", err);
    }
    outbox = cJSON_CreateArray();
    hist = cJSON_CreateObject();
    pair_ids = cJSON_CreateArray();
    for (int r = 0; r < beam->n; r++)
        parent_ns[r] = beam->m[r].latency_ns;
    if (compare) /* the children on their parents' scale: what their head-to-heads say, else ties */
        ao_select_chain(cl.k, cl.nk);
    /* cl.k[0..beam->n) are the parents, the rest the correct children */
    nsel = ao_select_beam(cl.k, cl.nk, (int)sel_int_or(c->beam, 1), order);
    for (int j = 0; j < nsel && newbeam.n < AO_MAX_BEAM; j++) {
        const struct ao_sel_kernel *x = &cl.k[order[j]];
        const struct ao_beam_member *from = x->parent ? &beam->m[x->rank] : &cl.kids[order[j]];
        if (ao_beam_member_copy(&newbeam.m[newbeam.n], from) < 0)
            goto refused;
        if (compare && !x->parent) /* on its parent's scale; the work is the task's, so % of peak goes as 1/latency */
            set_latency(&newbeam.m[newbeam.n], x->latency_ns);
        newbeam.n++;
    }
    if (iter > 0 && sel_memory_on(st))
        npairs = compare ? ao_select_pairs_compared(cl.k, cl.nk, (int)sel_int_or(c->topk, 0), pairs)
                         : ao_select_pairs(cl.k, cl.nk, parent_ns, beam->n, (int)sel_int_or(c->topk, 0), pairs);
    for (int j = 0; j < npairs; j++) {
        const struct ao_sel_kernel *x = &cl.k[pairs[j].child];
        if (add_pair(outbox, run, st, iter, &beam->m[x->rank], &cl.kids[pairs[j].child], pairs[j].speedup,
                     &x->cmp, x->rank, x->plan, pair_ids) < 0)
            goto refused;
    }
    if (st->phase == AO_PHASE_COMPARE) { /* a run from before issue 66: collect's counts and on */
        st->phase = AO_PHASE_COLLECT;
        cJSON_Delete(st->compares);
        st->compares = NULL;
    }
    st->kernels += cl.n;
    st->failures += cl.nfail;
    st->lost += (long long)ao_json_num(cl.statuses, ao_verdict_name(AO_V_LOST), 0);
    if (iter == 0) {
        if (cl.nok == 0) {
            const struct ao_result_msg *r0 = cl.n && cl.res[0].status ? &cl.res[0] : NULL;
            char r2[2600];
            /* with the compiler's (or the checks') own words: the user
             * sees them where the run says it stopped */
            snprintf(r2, sizeof r2, "the baseline did not pass: %s (%.300s)%s%.2000s",
                     !cl.n ? "no result" : r0 && r0->status ? r0->status : "no status",
                     r0 && r0->reason ? r0->reason : "no reason given",
                     r0 && r0->diagnostics && r0->diagnostics[0] ? ":\n" : "",
                     r0 && r0->diagnostics ? r0->diagnostics : "");
            cJSON_AddNumberToObject(hist, "iter", 0);
            cJSON_AddItemToArray(st->history, hist);
            hist = NULL;
            if (sel_add_done(sel, outbox, run, st, &newbeam, "baseline_failed", r2) < 0)
                goto refused;
            rc = sel_step(sel, io, run, st, &newbeam, outbox);
            goto out;
        }
        st->baseline_ns = newbeam.m[0].latency_ns;
    }
    closing_history(hist, run, st, &cl, beam, &newbeam, fresh, npairs, compare);
    cJSON_AddItemToArray(st->history, hist);
    hist = NULL;
    if (npairs > 0) {
        st->phase = AO_PHASE_MEMORY;
        cJSON_Delete(st->pairs);
        st->pairs = pair_ids;
        pair_ids = NULL;
        st->deadline = sel_now_s() + c->memory_deadline_s;
        rc = sel_step(sel, io, run, st, &newbeam, outbox);
    } else {
        rc = sel_advance(sel, io, run, st, &newbeam); /* nothing to learn: on at once */
    }
    goto out;
refused: /* an id too long for its buffer, or a member that does not read back */
    rc = ao_io_fail(io, "run %.40s: iteration %lld cannot close (a message's id or a kept kernel refused)", run, iter);
out:
    closing_release(&cl);
    ao_beam_release(&newbeam);
    cJSON_Delete(all);
    cJSON_Delete(outbox);
    cJSON_Delete(hist);
    cJSON_Delete(pair_ids);
    return rc;
}
