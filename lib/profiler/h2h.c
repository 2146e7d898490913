/* h2h.c - a head-to-head: a kernel and another (its parent, or the task's
 * baseline at a run's end) timed in interleaved rounds on the same secret
 * inputs in one sitting, the paired ratios' median with its interval
 * (issues 45, 46, 56, 66).  The one measurement of a kernel a model wrote.
 * compare_once is its steps (begin, run, the times, judge), each a
 * screen; ao_profiler_compare measures a difference twice. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/rng.h"
#include "core/util.h"
#include "measure/job.h"
#include "measure/measurement.h"
#include "measure/stats.h"
#include "profiler/profile.h"
#include "profiler/profiler_int.h"
#include "targets/target.h"
#include "wire/verdict.h"

#define H2H_MIN_ROUNDS 21
/* ... fewer where a round outlasts the budget's share of 21 (issue 66: a
 * 1.3 s kernel took 21 rounds, 55 s, measured twice where a lone
 * measurement took 3 calls): never under 6, the fewest whose extremes make
 * a 95% interval (a sign test: all six on one side is 2/64) */
#define H2H_MIN_FLOOR 6
/* Rounds read on a device that times itself (each side's execution of a
 * round viewed: two neuron-profile views a round), drawn after the rounds. */
#define H2H_DEVICE_ROUNDS 15

/* Build and start one side of a head-to-head: 0, or -1 with j->status (a
 * verdict) or err. */
static int h2h_side(struct ao_profiler *p, struct pool *pl, struct ao_job *j, const char *src,
                    char **diag, long long *compile_ns, char *err, size_t errlen)
{
    long long cns = 0;
    int rc;

    rc = prof_prepare_job(p, pl, j, src, err, errlen) < 0 ||
         prof_start_job(p, j, &pl->task, pl->dims, p->o.timeout_s, 1, err, errlen) < 0 ||
         prof_compile_job(p, j, diag, &cns, err, errlen) < 0;
    *compile_ns += cns;
    if (rc)
        return -1;
    if (j->status)
        return -1;
    if (ao_job_release(j, err, errlen) < 0)
        return -1;
    return prof_measure_wake(j);
}

/* Is source the task's own baseline, byte for byte (the final head-to-head's
 * other side), rather than a kernel a model wrote (a comparison's parent)? */
static int is_task_baseline(const struct ao_profiler *p, const struct ao_task *t, const char *source)
{
    char path[700], e[AO_ERRLEN], *base;
    int same;

    if (ao_name(path, sizeof path, "%s/baseline.%s", t->dir, p->tg->ext) < 0 ||
        !(base = ao_read_file(path, NULL, e, sizeof e)))
        return 0;
    same = strcmp(base, source) == 0;
    free(base);
    return same;
}

/* How a step of a head-to-head ended: on to the next, the kernel's verdict
 * (jk.status), the other side's failure (jb.status: the kernel's verdict
 * follows from it), a side's or ours (side_failed sorts them), or ours
 * (err), or out of memory. */
enum step { GO, VERDICT, PARENT_FAILED, SIDE_FAILED, FAIL, OOM };

struct h2h {
    struct ao_profiler *p;
    const struct ao_task *t;
    struct pool *pl;
    struct ao_job jb, jk; /* the other side, the kernel */
    struct ao_job *side[2];
    struct rounds rd;
    struct checks chk[2]; /* each side's check sets */
    float *out[AO_MAX_TENSORS];
    double *ratio, max_err, scratch; /* scratch: the other side's largest error, not reported */
    /* per round and side: the latency (rd.raw's, then as below), and the
     * runner's device time held against our clock (prof_runner_clock) */
    long long *lat[2], *held[2];
    long long kns, cns, pool_ns, t0;
    char *diag;
    cJSON *errors, *base_errors;
    cJSON *profile; /* a device that times itself: the kernel's profile of the round nearest its median */
    int n, clock, max;
    int child; /* against its parent: the rounds may stop once undecidable */
};

/* Both sides checked, built and started (nothing a kernel can see: before
 * its first call), on one core: the same machine for both. */
static enum step begin(struct h2h *x, const char *size, const char *source, const char *base_source,
                       char *err, size_t errlen)
{
    struct ao_profiler *p = x->p;
    const struct ao_task *t = x->t;

    /* the other side is the task's own baseline (the final head-to-head),
     * or a parent the model wrote: that one is checked and held to the
     * roofline as the kernel is (issue 56) */
    x->rd.check_both = !is_task_baseline(p, t, base_source);
    if (prof_static_check(base_source, x->rd.check_both ? x->jb.reason : err,
                          x->rd.check_both ? sizeof x->jb.reason : errlen)) {
        if (!x->rd.check_both) /* the task's baseline: it must pass */
            return FAIL;
        x->jb.status = AO_V_REJECTED;
        return PARENT_FAILED;
    }
    if (prof_static_check(source, x->jk.reason, sizeof x->jk.reason)) {
        x->jk.status = AO_V_REJECTED;
        return VERDICT;
    }
    x->pool_ns = ao_now_ns();
    if (!(x->pl = prof_pool_get(p, t, size, err, errlen)))
        return FAIL;
    x->pool_ns = ao_now_ns() - x->pool_ns;
    x->ratio = ao_malloc(sizeof *x->ratio * (size_t)x->max);
    x->held[0] = ao_malloc(sizeof **x->held * (size_t)x->max);
    x->held[1] = ao_malloc(sizeof **x->held * (size_t)x->max);
    for (int o = 0; o < t->noutputs; o++) /* tensors: checked, the measurement's failure alone */
        if (!(x->out[o] = prof_tensor_alloc(ao_task_elems(t, t->ninputs + o, x->pl->dims))))
            return OOM;
    for (int s = 0; s < 2; s++) {
        if (h2h_side(p, x->pl, x->side[s], s ? source : base_source, &x->diag, &x->cns, err, errlen) < 0)
            return SIDE_FAILED;
        if (s == 0 && x->jb.cpu >= 0)
            x->jk.pin = x->jb.cpu + 1;
    }
    return GO;
}

/* The opening rounds (issue 66): each side's first call, on the first
 * check set's inputs, in a random order, a side the model wrote held to
 * that set's reference as its check sets are.  Where both calls are long
 * it is the rounds' first: a first call meets the kernel's pages mapped
 * (the runner maps them before it), and what it meets cold besides (the
 * caches, the branch predictors) is nothing beside a call of a fifth of a
 * second, and the same for both sides, so one round less for each child
 * of a slow task, and no warm-up call for its parent.  Then the second
 * check set the same way, the second round: the child's call there was a
 * check-set call of its own, so a slow task's tie costs its parent's one
 * call where it cost a round of both (a tie from these two needs no more,
 * prof_rounds).  Shorter calls start each side's warm-up instead, and
 * the second set is left to the check sets.  A device's first calls
 * (compiling, loading) stay out of its rounds.  took: each side's first. */
#define OPENING_COUNTS_NS 200000000LL
static enum step opening(struct h2h *x, long long *took)
{
    struct ao_profiler *p = x->p;

    for (int r = 0; r < OPENING_ROUNDS; r++) {
        int order = (int)(ao_rng_next(&p->choice) & 1), away = 0;
        long long t[2];
        for (int k = 0; k < 2; k++) {
            int s = k ? !order : order;
            if ((t[s] = prof_check_opening(x->pl, &x->chk[s], s == 1 || x->rd.check_both)) < 0)
                return SIDE_FAILED;
            x->rd.opening[r][s] = x->side[s]->raw_ns;
            away |= x->side[s]->watch_void;
            if (r == 0)
                took[s] = t[s];
        }
        if (away || t[0] < OPENING_COUNTS_NS || t[1] < OPENING_COUNTS_NS)
            break;
        x->rd.opened = r + 1;
    }
    return GO;
}

/* A side's warm-up, unless it is warm: from its check sets, where the
 * shortest of their calls outlasts the warm-up, or from its opening call,
 * where that one does.  Its shortest call, or -1. */
static long long warm_up(struct h2h *x, int s, int checked, long long opened)
{
    struct ao_job *j = x->side[s];
    long long warmup = (long long)(x->p->o.warmup_s * 1e9);

    if (checked && !j->checks_known && j->checks_least_ns >= warmup)
        return j->checks_least_ns;
    if (opened >= warmup)
        return opened;
    return prof_warm_up(x->p, x->pl, j, &x->kns);
}

/* The sides in a random order (issue 56): the opening round (on a host),
 * the first's check sets, each side's warm-up, the rounds, then the
 * second's check sets.
 * The rounds: the same fresh inputs for both, in a random order, each call
 * timed as any timed call is (prof_rounds, the loop a measurement uses),
 * every one checked at secret positions where the task allows, as many as
 * the budget holds (H2H_MIN_FLOOR to H2H_MIN_ROUNDS at least). */
static enum step run(struct h2h *x, char *err, size_t errlen)
{
    struct ao_profiler *p = x->p;
    struct rounds *rd = &x->rd;
    int first = (int)(ao_rng_next(&p->choice) & 1), on;
    long long round_ns, opened[2] = {0, 0};
    double fit;

    x->chk[0] = (struct checks){&x->jb, x->out, x->base_errors, &x->scratch, &x->kns, 0, 0, 0};
    x->chk[1] = (struct checks){&x->jk, x->out, x->errors, &x->max_err, &x->kns, 0, 0, 0};
    if (!p->tg->device_time && !p->tg->runner_clock && opening(x, opened) != GO)
        return SIDE_FAILED;
    /* the task's own baseline (check_both 0) passed its check sets when
     * the run began: only a side the model wrote runs them (issue 66: five
     * calls of a 1.3 s baseline a head-to-head) */
    int checks = first || rd->check_both;
    long long least[2];
    if (checks && prof_correctness(x->pl, &x->chk[first]) < 0)
        return SIDE_FAILED;
    if ((least[first] = warm_up(x, first, checks, opened[first])) < 0 ||
        (least[!first] = warm_up(x, !first, 0, opened[!first])) < 0)
        return SIDE_FAILED;
    rd->after = !first || rd->check_both ? &x->chk[!first] : NULL;
    rd->side[0] = &x->jb, rd->side[1] = &x->jk;
    rd->nsides = 2;
    round_ns = least[0] + least[1]; /* the warm-ups' shortest calls */
    /* (a round under 20 ms always gets 21: one warm-up call slowed by a
     * busy machine must not cut a fast kernel's rounds, which cost little;
     * nor, for a longer kernel, a stalled call: the shortest stands) */
    fit = round_ns > 20000000 ? 2 * p->o.budget_s * 1e9 / (double)round_ns : H2H_MIN_ROUNDS;
    rd->min = fit >= H2H_MIN_ROUNDS ? H2H_MIN_ROUNDS : fit <= H2H_MIN_FLOOR ? H2H_MIN_FLOOR : (int)fit;
    rd->max = x->max;
    rd->budget_ns = (long long)(2 * p->o.budget_s * 1e9);
    rd->stop_undecidable = x->child && !p->tg->device_time;
    if ((on = prof_rounds_spots(p, x->pl, rd)) < 0)
        return OOM;
    /* every round checked at secret positions, or a sample of them whole */
    rd->smp.size = on ? 0 : prof_sample_size(x->pl, CHECKED_H2H);
    err[0] = '\0';
    if (prof_rounds(p, x->pl, rd, err, errlen) < 0) {
        x->kns += rd->kernel_ns;
        return SIDE_FAILED; /* a side's verdict, or our failure (err) */
    }
    x->kns += rd->kernel_ns;
    x->n = rd->n;
    x->lat[0] = rd->raw[0], x->lat[1] = rd->raw[1]; /* the host's raw times, until replaced */
    return GO;
}

/* Each side's own device times, held against our clock around the same
 * calls (prof_runner_clock), where both runners gave them; else our clock
 * less one wake-up estimate.  The rounds' ratios into x->ratio. */
static enum step runner_times(struct h2h *x, char *err, size_t errlen)
{
    struct ao_profiler *p = x->p;
    int n = x->n;

    if (p->tg->runner_clock) {
        int v[2], raised[2];
        /* one empty call's figure off both sides, the lower of the two
         * processes' (as the wake-up below): an A/A stays at 1 */
        long long empty = x->jb.empty_dev_ns < x->jk.empty_dev_ns ? x->jb.empty_dev_ns : x->jk.empty_dev_ns;
        for (int s = 0; s < 2; s++)
            v[s] = prof_runner_clock(x->lat[s], x->rd.dev[s], x->rd.late[s], n, x->pl->launch_ns, empty,
                                     x->held[s], &raised[s], x->side[s]->reason, sizeof x->side[s]->reason);
        if (v[1] > 0) {
            x->jk.status = AO_V_REJECTED;
            return VERDICT;
        }
        if (v[0] > 0 && x->rd.check_both) {
            x->jb.status = AO_V_REJECTED;
            return PARENT_FAILED;
        }
        if (v[0] > 0) {
            snprintf(err, errlen, "the baseline's device times in its head-to-head: %s", x->jb.reason);
            return FAIL;
        }
        if (v[0] == 0 && v[1] == 0) {
            for (int i = 0; i < n; i++) {
                x->lat[0][i] = x->held[0][i], x->lat[1][i] = x->held[1][i];
                x->ratio[i] = x->lat[1][i] > 0 ? (double)x->lat[0][i] / (double)x->lat[1][i] : 0;
            }
            x->clock = (int)__atomic_load_n(&x->jk.hdr->device_clock, __ATOMIC_RELAXED);
        }
    }
    if (!p->tg->device_time && !x->clock) {
        /* One wake-up estimate off both sides' calls, the lower of the two
         * processes' (each the minimum of its own samples): two processes
         * of one kernel had estimates 5 and 12-14 us apart, and each taking
         * off its own made identical kernels differ by up to 18% at 50 us
         * (issue 46).  The same constant off both keeps an A/A at 1.  (A
         * device's own times replace these below; the raw host times stay
         * for the cross-check.) */
        long long w = x->jb.wake_ns < x->jk.wake_ns ? x->jb.wake_ns : x->jk.wake_ns;
        for (int i = 0; i < n; i++) {
            for (int s = 0; s < 2; s++)
                x->lat[s][i] = x->lat[s][i] > w ? x->lat[s][i] - w : x->lat[s][i];
            x->ratio[i] = x->lat[1][i] > 0 ? (double)x->lat[0][i] / (double)x->lat[1][i] : 0;
        }
    }
    return GO;
}

static int cmp_ll(const void *a, const void *b)
{
    long long x = *(const long long *)a, y = *(const long long *)b;
    return (x > y) - (x < y);
}

/* On a device that times itself: the rounds' ratios from the device's own
 * times of both sides' executions, on a random choice of rounds, and the
 * kernel's held against our clock around the same executions. */
static enum step device_times(struct h2h *x, char *err, size_t errlen)
{
    struct ao_profiler *p = x->p;
    int n = x->n, k = n < H2H_DEVICE_ROUNDS ? n : H2H_DEVICE_ROUNDS, round[H2H_DEVICE_ROUNDS];
    long long hk[H2H_DEVICE_ROUNDS], hb[H2H_DEVICE_ROUNDS], dk[H2H_DEVICE_ROUNDS], db[H2H_DEVICE_ROUNDS];
    long long gap[H2H_DEVICE_ROUNDS];
    struct ao_stats g;

    for (int i = 0; i < k; i++) { /* k distinct rounds, uniformly */
        int dup;
        do {
            round[i] = (int)(ao_rng_next(&p->choice) % (unsigned long long)n);
            dup = 0;
            for (int q = 0; q < i; q++)
                dup |= round[q] == round[i];
        } while (dup);
    }
    for (int i = 0; i < k; i++) /* the host's raw times, before lat[] holds the device's */
        hb[i] = x->lat[0][round[i]], hk[i] = x->lat[1][round[i]];
    cJSON *prof[H2H_DEVICE_ROUNDS] = {0};
    int mid = 0;
    enum step st = GO;

    for (int i = 0; i < k && st == GO; i++) {
        double d[2];
        for (int s = 0; s < 2 && st == GO; s++) {
            int got = p->tg->device_time(x->side[s]->dir, round[i], &d[s], s ? &prof[i] : NULL, err, errlen);
            if (got > 0 && s == 1) { /* the kernel's build tampered with its traces */
                x->jk.status = AO_V_REJECTED;
                snprintf(x->jk.reason, sizeof x->jk.reason, "%s", err);
                st = VERDICT;
            } else if (got != 0) {
                st = FAIL;
            }
        }
        if (st != GO)
            break;
        x->lat[0][i] = db[i] = (long long)d[0], x->lat[1][i] = dk[i] = (long long)d[1];
        x->ratio[i] = d[1] > 0 ? d[0] / d[1] : 0;
    }
    if (st == GO && k > 0) { /* the kernel's profile nearest its median: its counters are the planner's */
        long long sorted[H2H_DEVICE_ROUNDS];
        memcpy(sorted, dk, sizeof *dk * (size_t)k);
        qsort(sorted, (size_t)k, sizeof *sorted, cmp_ll);
        for (int i = 1; i < k; i++)
            if (llabs(dk[i] - sorted[k / 2]) < llabs(dk[mid] - sorted[k / 2]))
                mid = i;
        x->profile = prof[mid];
        prof[mid] = NULL;
    }
    for (int i = 0; i < k; i++)
        cJSON_Delete(prof[i]);
    if (st != GO)
        return st;
    x->n = k;
    /* allowed the launch overhead the other side showed in the same rounds
     * (host less device, its median) */
    for (int i = 0; i < k; i++)
        gap[i] = hb[i] > db[i] ? hb[i] - db[i] : 0;
    ao_stats_of(gap, k, &g);
    if (k > 0 && prof_device_unbelievable(hk, dk, k, g.median >= 1 ? (long long)g.median : 1, x->jk.reason,
                                          sizeof x->jk.reason)) {
        x->jk.status = AO_V_REJECTED;
        return VERDICT;
    }
    return GO;
}

/* The rule every measurement holds, on one side's calls: none under the
 * roofline (a kernel that skips its work on the rounds it thinks are not
 * checked is faster than the machine on those). */
static enum step hold_roofline(struct h2h *x, struct ao_job *j, const struct ao_stats *st,
                               struct ao_measurement *r, char *err, size_t errlen)
{
    long long wu = x->p->tg->device_time || x->clock ? 0 : ao_low_tail(j->wakes, j->nwakes);
    int rechecked = 0;

    if (prof_roofline_hold(x->p, x->t, x->pl, (double)st->min, wu, st->median, r, j, &rechecked, err, errlen) < 0)
        return FAIL;
    return j->status ? (j == &x->jk ? VERDICT : PARENT_FAILED) : GO;
}

/* The floor a pair's interval is never narrower than, as a share of its
 * median: what two processes of one kernel can differ by in one sitting,
 * the more where the machine moves either side's calls about
 * (profiler_int.h H2H_SPREAD_SHARE). */
static double h2h_floor(const struct ao_stats *sb, const struct ao_stats *sk)
{
    return fmin(H2H_FLOOR_MAX, fmax(H2H_SYSTEMATIC, H2H_SPREAD_SHARE * fmax(sb->spread, sk->spread)));
}

/* The figures: the median of the paired ratios and its distribution-free
 * 95% interval (order statistics k and n-1-k of the sorted ratios), both
 * sides held to the roofline, the sampled rounds against the reference,
 * then head_to_head.  The kernel's verdict (ok, or why not). */
static enum step judge(struct h2h *x, struct ao_measurement *r, char *err, size_t errlen)
{
    struct ao_profiler *p = x->p;
    struct ao_stats sb, sk;
    double low, high, speedup, floor_frac;
    enum step st;
    cJSON *h;

    ao_stats_of(x->lat[0], x->n, &sb);
    ao_stats_of(x->lat[1], x->n, &sk);
    floor_frac = h2h_floor(&sb, &sk);
    if (x->rd.answered) /* stopped short of its minimum on this interval (timing.c answered) */
        ao_t_interval(x->ratio, x->n, floor_frac, &speedup, &low, &high);
    else
        ao_median_interval(x->ratio, x->n, floor_frac, &speedup, &low, &high);
    r->latency_ns = sk.median;
    r->latency_min_ns = sk.min;
    r->spread = sk.spread;
    r->repeats = x->n;
    r->steady = sk.spread <= p->o.target_spread;
    if ((st = hold_roofline(x, &x->jk, &sk, r, err, errlen)) != GO) {
        if (st == VERDICT) {
            char why[sizeof x->jk.reason];
            snprintf(why, sizeof why, "%s", x->jk.reason);
            snprintf(x->jk.reason, sizeof x->jk.reason, "in its head-to-head: %.400s", why);
        }
        return st;
    }
    if (x->rd.check_both) { /* the parent: the same rule, on its side's calls */
        struct ao_measurement mb;
        ao_measurement_init(&mb);
        st = hold_roofline(x, &x->jb, &sb, &mb, err, errlen);
        ao_measurement_release(&mb);
        if (st != GO)
            return st;
    }
    /* then the sampled rounds against the reference; where the kernel's
     * pass, a parent's that disagreed with them on the same inputs are
     * the parent's fault (prof_rounds, sides_agree) */
    if (prof_check_sample(p, x->pl, &x->jk, &x->rd.smp, x->errors, &x->max_err, err, errlen) < 0)
        return FAIL;
    if (x->jk.status)
        return VERDICT;
    if (x->rd.disagree[0]) {
        x->jb.status = AO_V_REJECTED;
        snprintf(x->jb.reason, sizeof x->jb.reason, "%s", x->rd.disagree);
        return PARENT_FAILED;
    }
    if ((h = cJSON_CreateObject())) {
        cJSON_AddNumberToObject(h, "speedup", speedup);
        cJSON_AddNumberToObject(h, "speedup_low", low);
        cJSON_AddNumberToObject(h, "speedup_high", high);
        cJSON_AddNumberToObject(h, "rounds", x->n);
        cJSON_AddNumberToObject(h, "floor", floor_frac);
        if (x->rd.voided)
            cJSON_AddNumberToObject(h, "rounds_voided", x->rd.voided);
        if (x->rd.undecidable) /* stopped short of its minimum: a tie whatever came next */
            cJSON_AddTrueToObject(h, "undecidable");
        if (x->rd.answered) /* ... or a plain answer, its interval a Student-t one */
            cJSON_AddStringToObject(h, "interval", "student-t");
        if (x->rd.opened) { /* its first rounds both sides' first calls (opening) */
            cJSON_AddTrueToObject(h, "opening_round");
            cJSON_AddNumberToObject(h, "opening_rounds", x->rd.opened);
        }
        cJSON_AddNumberToObject(h, "baseline_median_ns", sb.median);
        cJSON_AddNumberToObject(h, "baseline_spread", sb.spread);
        cJSON_AddNumberToObject(h, "kernel_median_ns", sk.median);
        cJSON_AddNumberToObject(h, "kernel_spread", sk.spread);
        if (p->tg->device_time)
            cJSON_AddStringToObject(h, "times", "the device's own (profiled executions)");
        else if (x->clock)
            cJSON_AddStringToObject(h, "times", x->clock == 2 ? "the device's own (CUPTI records "
                                    "of each call's work)" : x->clock == 3 ? "the device's own (CUDA "
                                    "events around each call's work, held behind a gate)"
                                    : "the device's own (CUDA events)");
        cJSON_Delete(r->head_to_head);
        r->head_to_head = h;
    }
    x->jk.status = AO_V_OK;
    return VERDICT;
}

/* A side failed before the figures: the kernel's verdict, the parent's
 * failure, or ours (err). */
static enum step side_failed(struct h2h *x, char *err, size_t errlen)
{
    if (!x->jb.status && !x->jk.status) /* ours, not a side's: err says why */
        return FAIL;
    if (x->jb.status && x->rd.check_both)
        return PARENT_FAILED;
    if (x->jb.status) {
        snprintf(err, errlen, "the baseline failed its head-to-head: %s", x->jb.reason);
        return FAIL;
    }
    return VERDICT;
}

/* The kernel's verdict into r, and where the head-to-head's time went, as
 * a profile's (both sides). */
static void verdict(struct h2h *x, struct ao_measurement *r)
{
    const struct ao_task *t = x->t;
    struct spots_tally tally;
    cJSON *h;

    long long metrics_ns = 0;

    prof_spots_tally(&x->rd.spots[1], &tally);
    prof_spots_json(&tally, t, NULL, x->errors);
    if (x->jk.status == AO_V_OK) {
        /* what the planner is shown of the kernel, as a lone measurement
         * shows it: a device's profile of one of its rounds, or its
         * metrics from an untimed pass (cuda) */
        if (x->profile) {
            cJSON_AddNumberToObject(x->profile, "executions", x->n);
            cJSON_AddStringToObject(x->profile, "latency", "the median of the executions' on-device total_time");
            cJSON_Delete(r->device_profile);
            r->device_profile = x->profile;
            x->profile = NULL;
        }
        metrics_ns = prof_metrics_pass(x->p, x->pl, &x->jk, r, r->latency_ns);
    }
    prof_set_verdict(r, &x->jk, t, x->p->o.calib, x->max_err, &x->errors, x->t0);
    h = cJSON_CreateObject();
    if (metrics_ns > 0)
        cJSON_AddNumberToObject(h, "metrics_ns", (double)metrics_ns);
    cJSON_AddNumberToObject(h, "compile_ns", (double)x->cns);
    cJSON_AddNumberToObject(h, "kernel_ns", (double)x->kns);
    cJSON_AddNumberToObject(h, "checks_ns", (double)x->rd.smp.check_ns);
    cJSON_AddNumberToObject(h, "references_ns", (double)x->pool_ns);
    cJSON_AddNumberToObject(h, "inputs_ns", (double)(x->jb.inputs_ns + x->jk.inputs_ns));
    cJSON_AddNumberToObject(h, "inputs_copied_calls", x->jb.inputs_copied + x->jk.inputs_copied);
    prof_spots_json(&tally, t, h, NULL); /* the kernel's side's */
    if (x->rd.spots[0].on)
        cJSON_AddNumberToObject(h, "spots_parent_calls", x->rd.spots[0].calls);
    if (x->rd.voided)
        cJSON_AddNumberToObject(h, "calls_voided", x->rd.voided);
    if (x->jb.checks_known + x->jk.checks_known) /* sides whose check sets passed here before */
        cJSON_AddNumberToObject(h, "checks_known", x->jb.checks_known + x->jk.checks_known);
    cJSON_AddNumberToObject(h, "overhead_ns", (double)(r->wall_ns - x->cns - x->kns));
    cJSON_Delete(r->timing);
    r->timing = h;
}

static void h2h_release(struct h2h *x)
{
    prof_rounds_free(&x->rd);
    for (int o = 0; o < x->t->noutputs; o++)
        prof_tensor_free(x->out[o]);
    free(x->ratio);
    for (int s = 0; s < 2; s++)
        free(x->held[s]);
    ao_job_free(&x->jb);
    ao_job_free(&x->jk);
    cJSON_Delete(x->errors);
    cJSON_Delete(x->base_errors);
    cJSON_Delete(x->profile);
    free(x->diag);
}

static int compare_once(struct ao_profiler *p, const struct ao_task *t, const char *size,
                        const char *source, const char *base_source, int child,
                        struct ao_measurement *r, char *err, size_t errlen)
{
    struct h2h *x = ao_calloc(1, sizeof *x);
    enum step st;
    int rc = -1;

    x->p = p, x->t = t, x->t0 = ao_now_ns(), x->child = child;
    x->side[0] = &x->jb, x->side[1] = &x->jk;
    x->jb.second = 1; /* two runners at once: each in its own cgroup */
    x->max = p->o.max_calls > H2H_MIN_ROUNDS ? p->o.max_calls : H2H_MIN_ROUNDS;
    x->errors = cJSON_CreateArray(), x->base_errors = cJSON_CreateArray();
    st = begin(x, size, source, base_source, err, errlen);
    if (st == GO)
        st = run(x, err, errlen);
    if (st == GO)
        st = runner_times(x, err, errlen);
    if (st == GO && p->tg->device_time)
        st = device_times(x, err, errlen);
    if (st == GO)
        st = judge(x, r, err, errlen);
    if (st == SIDE_FAILED)
        st = side_failed(x, err, errlen);
    if (st == PARENT_FAILED) { /* no comparison with a kernel that cheats on its own side */
        char why[sizeof x->jb.reason];
        snprintf(why, sizeof why, "%s", x->jb.reason);
        x->jk.status = AO_V_REJECTED;
        snprintf(x->jk.reason, sizeof x->jk.reason, "the kernel it was measured against (its parent, the "
                 "head-to-head's other side) failed there, so the comparison says nothing: %.300s", why);
        st = VERDICT;
    }
    if (st == OOM)
        snprintf(err, errlen, "out of memory for a head-to-head");
    if (st == VERDICT) {
        verdict(x, r);
        rc = 0;
    } else {
        r->verdict = AO_V_INTERNAL_ERROR;
        prof_set_str(&r->reason, err);
    }
    h2h_release(x);
    free(x);
    return rc;
}

/* Does a head-to-head find a difference that decides something: a gain
 * (what a run keeps and quotes), or a loss past 1/1.15 (a warning the
 * memory may learn: the selector's AO_PAIR_NEGATIVE)?  A smaller loss
 * keeps nothing and teaches nothing, and is not measured again (issue 66:
 * most knob moves are a little slower, and each second head-to-head cost
 * as much as the first). */
static int decisive(const cJSON *h)
{
    return ao_json_num(h, "speedup_low", NAN) > 1 || ao_json_num(h, "speedup_high", NAN) < 1 / 1.15;
}

/* A head-to-head measured twice costs both: their walls and their
 * breakdowns summed into the one that stands. */
static void timing_sum(struct ao_measurement *into, const struct ao_measurement *from)
{
    const cJSON *x;

    into->wall_ns += from->wall_ns;
    if (!into->timing || !from->timing)
        return;
    cJSON_ArrayForEach(x, from->timing) {
        cJSON *y = cJSON_GetObjectItemCaseSensitive(into->timing, x->string);
        if (!cJSON_IsNumber(x))
            continue;
        if (cJSON_IsNumber(y))
            cJSON_SetNumberValue(y, y->valuedouble + x->valuedouble);
        else
            cJSON_AddNumberToObject(into->timing, x->string, x->valuedouble);
    }
}

int ao_profiler_compare(struct ao_profiler *p, const struct ao_task *t, const char *size,
                        const char *source, const char *base_source, int child,
                        struct ao_measurement *r, char *err, size_t errlen)
{
    struct ao_measurement again;
    const cJSON *h1, *h2;
    double s1, s2;
    cJSON *h, *both;

    if (compare_once(p, t, size, source, base_source, child, r, err, errlen) < 0)
        return -1;
    if (r->verdict != AO_V_OK || !r->head_to_head || !decisive(r->head_to_head))
        return 0;
    /* A difference is measured again, in two fresh processes: two processes
     * of one kernel can differ by several percent where their pages fall,
     * more on a busy machine (docs/BENCHMARKS.md, issue 47), and one draw
     * of that must not decide what the run keeps or learns.  The figure
     * is the less extreme of the two, its interval the two together. */
    ao_measurement_init(&again);
    /* ... and on fresh pages: kept regions (region.c) would give each
     * side the pages it had the first time, and a difference of where
     * they fall would be found twice (an A/A child of 84-aa-under-load was
     * "faster" at 1.063 in both) */
    ao_region_forget_all();
    if (compare_once(p, t, size, source, base_source, child, &again, err, errlen) < 0) {
        ao_measurement_release(&again);
        return -1;
    }
    if (again.verdict != AO_V_OK || !again.head_to_head) { /* it failed the second time: that stands */
        timing_sum(&again, r);
        ao_measurement_release(r);
        *r = again;
        return 0;
    }
    h1 = r->head_to_head;
    h2 = again.head_to_head;
    s1 = ao_json_num(h1, "speedup", NAN);
    s2 = ao_json_num(h2, "speedup", NAN);
    both = cJSON_CreateArray();
    cJSON_AddItemToArray(both, cJSON_CreateNumber(s1));
    cJSON_AddItemToArray(both, cJSON_CreateNumber(s2));
    if (fabs(log(s2)) < fabs(log(s1))) { /* the second is the less extreme: its measurement is the result */
        struct ao_measurement first = *r;
        *r = again;
        again = first; /* released below */
        h1 = r->head_to_head;
        h2 = again.head_to_head;
    }
    h = r->head_to_head;
    cJSON_ReplaceItemInObjectCaseSensitive(h, "speedup_low", cJSON_CreateNumber(fmin(ao_json_num(h1, "speedup_low", NAN),
                                                                                    ao_json_num(h2, "speedup_low", NAN))));
    cJSON_ReplaceItemInObjectCaseSensitive(h, "speedup_high", cJSON_CreateNumber(fmax(ao_json_num(h1, "speedup_high", NAN),
                                                                                     ao_json_num(h2, "speedup_high", NAN))));
    cJSON_AddItemToObject(h, "replicates", both);
    timing_sum(r, &again);
    ao_measurement_release(&again);
    return 0;
}

