/* results.c - results fill an iteration; a full one is closed: the beam
 * chosen, the pairs sent */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "core/util.h"
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
static int count(cJSON *statuses, const char *status)
{
    cJSON *n = cJSON_GetObjectItemCaseSensitive(statuses, status);

    if (n) {
        cJSON_SetNumberValue(n, n->valuedouble + 1);
        return 0;
    }
    return cJSON_AddNumberToObject(statuses, status, 1) ? 0 : -1;
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

static int add_pair(cJSON *outbox, const char *run, const struct ao_run_state *st, long long iter,
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
    rc = sel_env_from(&p.env, "pair", id, run, st, iter) < 0 ||
         !(p.slow_source = sel_dup_or_null(ao_json_str(slow, "source", NULL))) ||
         !(p.fast_source = sel_dup_or_null(ao_json_str(fast, "source", NULL))) ||
         !(p.slow_sha256 = sel_dup_or_null(ao_json_str(slow, "sha256", NULL))) ||
         !(p.fast_sha256 = sel_dup_or_null(ao_json_str(fast, "sha256", NULL))) ||
         !(p.direction = strdup(speedup > 1 ? "+" : "-")) ||
         !(p.slow_profile = pair_profile(slow)) || !(p.fast_profile = pair_profile(fast)) ||
         (plan_text && !(p.plan = strdup(plan_text))) ||
         !(p.config = ao_run_config_json(&st->config)) ||
         sel_out_add(outbox, AO_TOPIC_PAIRS, &ao_msg_pair, &p) < 0 ? -1 : 0;
    if (rc == 0)
        cJSON_AddItemToArray(ids, cJSON_CreateString(id));
    ao_msg_release(&ao_msg_pair, &p);
    return rc;
}

/* Every slot of the iteration has its result: choose, then pairs or on. */
int sel_close_iteration(struct selector *sel, struct ao_io *io, const char *run, struct ao_run_state *st,
                        cJSON *beam, const char *slots_key)
{
    const struct ao_run_config *c = &st->config;
    const cJSON *it;
    long long iter = st->iter;
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
                                      sel_median_u(cJSON_GetObjectItemCaseSensitive(b, "profile"))};
    }
    {
        int i = 0, m = nbeam;
        cJSON_ArrayForEach(it, all) {
            const char *status;
            double ns;
            int r, p, s;
            res[i] = cJSON_Parse(it->valuestring);
            status = ao_json_str(res[i], "status", "unknown");
            ns = ao_json_num(res[i], "latency_ns", NAN);
            if (count(statuses, status) < 0)
                goto oom;
            if (ao_verdict_of(status) == AO_V_OK && ns > 0 && sel_parse_slot(it->string, &r, &p, &s) == 0) {
                from[m] = i; /* the child's result */
                k[m++] = (struct ao_sel_kernel){ao_json_str(res[i], "sha256", NULL), ns, 0, r, p,
                                                sel_median_u(res[i])};
                nok++;
            } else if (ao_verdict_of(status) != AO_V_DUPLICATE) { /* a duplicate failed nothing */
                nfail++;
            }
            i++;
        }
        /* k[0..nbeam) are the parents, k[nbeam..m) the correct children */
        nsel = ao_select_beam(k, m, (int)sel_int_or(c->beam, 1), order);
        for (int j = 0; j < nsel; j++) {
            const struct ao_sel_kernel *x = &k[order[j]];
            cJSON *mb = x->parent ? cJSON_Duplicate(cJSON_GetArrayItem(beam, x->rank), 1)
                                  : member(res[from[order[j]]], iter);
            if (!mb)
                goto oom;
            cJSON_AddItemToArray(newbeam, mb);
        }
        if (iter > 0 && sel_memory_on(st))
            npairs = ao_select_pairs(k, m, parent_ns, nbeam, (int)sel_int_or(c->topk, 0), pairs);
        for (int j = 0; j < npairs; j++) {
            const struct ao_sel_kernel *x = &k[pairs[j].child];
            if (add_pair(outbox, run, st, iter, cJSON_GetArrayItem(beam, x->rank),
                         res[from[pairs[j].child]], pairs[j].speedup, x->rank, x->plan, pair_ids) < 0)
                goto oom;
        }
    }
    st->kernels += n;
    st->failures += nfail;
    st->lost += (long long)ao_json_num(statuses, ao_verdict_name(AO_V_LOST), 0);
    if (iter == 0) {
        if (nok == 0) {
            const char *why = n ? ao_json_str(res[0], "reason", NULL) : NULL;
            char r2[600];
            snprintf(r2, sizeof r2, "the baseline did not pass: %s (%s)",
                     n ? ao_json_str(res[0], "status", "no status") : "no result",
                     why ? why : "no reason given");
            cJSON_AddNumberToObject(hist, "iter", 0);
            cJSON_AddItemToArray(st->history, hist);
            hist = NULL;
            if (sel_add_done(sel, outbox, run, st, newbeam, "baseline_failed", r2) < 0)
                goto oom;
            rc = sel_step(sel, io, run, st, newbeam, outbox);
            goto out;
        }
        st->baseline_ns = ao_json_num(cJSON_GetArrayItem(newbeam, 0), "latency_ns", NAN);
    }
    {
        const cJSON *best = cJSON_GetArrayItem(newbeam, 0);
        double best_ns = ao_json_num(best, "latency_ns", NAN), base = st->baseline_ns;
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
        cJSON_AddNumberToObject(hist, "seconds", sel_now_s() - st->opened);
        cJSON_AddItemToArray(st->history, hist);
        hist = NULL;
        ao_info("run %s: iteration %lld closed: %d kernels, %d correct, best %.4g ns (%.3gx), %d pairs",
                run, iter, n, nok, best_ns, base / best_ns, npairs);
    }
    if (npairs > 0) {
        st->phase = AO_PHASE_MEMORY;
        cJSON_Delete(st->pairs);
        st->pairs = pair_ids;
        pair_ids = NULL;
        st->deadline = sel_now_s() + c->memory_deadline_s;
        rc = sel_step(sel, io, run, st, newbeam, outbox);
    } else {
        rc = sel_advance(sel, io, run, st, newbeam); /* nothing to learn: on at once */
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
