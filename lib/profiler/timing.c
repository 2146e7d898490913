/* timing.c - one measurement: correctness on the check sets, warm-up,
 * the timed calls until the spread or the budget says stop, and the
 * reservoir of timed calls checked after */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/alloc.h"
#include "core/rc.h"
#include "core/rng.h"
#include "core/util.h"
#include "measure/job.h"
#include "profiler/profile.h"
#include "profiler/profiler_int.h"
#include "measure/stats.h"
#include "targets/target.h"
#include "wire/verdict.h"

/* How far the lowest wake-up could be off (ao_low_tail): quiet, a few
 * hundred ns; on a busy machine, microseconds, and then a tiny kernel's
 * time is that uncertain. */
static long long wake_uncertainty(const struct ao_job *j)
{
    return ao_low_tail(j->wakes, j->nwakes);
}

/* The timed calls' latencies: their raw times less the wake-up estimate
 * as it stands (as run_call takes it off). */
static long long less(long long t, long long off)
{
    return t > off ? t - off : t;
}

static void take_wake(const long long *raw, long long *lat, int n, long long wake)
{
    for (int i = 0; i < n; i++)
        lat[i] = less(raw[i], wake);
}

void prof_sample_free(struct sample *s)
{
    for (int k = 0; k < CHECKED_MAX; k++)
        prof_dataset_free(&s->out[k]);
}

/* How many timed calls a measurement checks: `most` (CHECKED_TIMED, or
 * CHECKED_H2H), fewer when the reference is slow (CHECK_BUDGET_S of
 * reference time per CHECKED_TIMED checks at most), never under
 * CHECKED_MIN. */
int prof_sample_size(const struct pool *pl, int most)
{
    double budget_ns = CHECK_BUDGET_S * 1e9 * most / CHECKED_TIMED;
    long long fit = pl->ref_ns > 0 ? (long long)(budget_ns / (double)pl->ref_ns) : most;
    return fit > most ? most : fit < CHECKED_MIN ? CHECKED_MIN : (int)fit;
}

/* Is timed call n (0-based) kept, and where?  -1: not.  The generator is
 * drawn only past the first s->size calls (ao_reservoir_slot). */
int prof_sample_slot(struct ao_profiler *p, struct sample *s, int n)
{
    return ao_reservoir_slot(n, s->size, n < s->size ? 0 : ao_rng_next(&p->choice));
}

/* One kept timed call against the reference's outputs on its inputs */
struct sample_check {
    struct ao_profiler *p;
    struct ao_job *j;
    const struct ao_task *t;
    struct sample *s;
    cJSON *errors;
    double *max_err;
};

/* kept call k's inputs, drawn again from the state they were drawn from */
static void redraw(void *ctx, int k, struct dataset *in)
{
    struct sample_check *c = ctx;
    struct ao_rng r = c->s->seed[k];

    prof_draw_timed(&r, c->p, c->t, in);
}

static int check_one(void *ctx, int k, const struct dataset *ref)
{
    struct sample_check *c = ctx;
    const struct ao_task *t = c->t;
    float *out[AO_MAX_TENSORS] = {0};
    char set[32];

    snprintf(set, sizeof set, "timed%d", c->s->call[k]);
    for (int o = 0; o < t->noutputs; o++)
        out[o] = c->s->out[k].t[t->ninputs + o];
    if (prof_check_outputs(c->j, t, out, ref, set, c->errors, c->max_err) < 0) {
        /* right on the check sets, wrong when timed: a replay, a race,
         * or a kernel that changes its ways once checks seem over */
        c->j->status = AO_V_REJECTED;
        snprintf(c->j->reason + strlen(c->j->reason), sizeof c->j->reason - strlen(c->j->reason),
                 " (in a timed call, after passing the correctness checks: outputs "
                 "must be computed from the inputs of each call)");
        return -1;
    }
    return 0;
}

int prof_check_sample(struct ao_profiler *p, struct pool *pl, struct ao_job *j,
                      struct sample *s, cJSON *errors, double *max_err, char *err, size_t errlen)
{
    struct sample_check c = {p, j, &pl->task, s, errors, max_err};
    long long t0 = ao_now_ns();
    int rc;

    if (s->n == 0)
        return 0;
    rc = prof_ref_outputs(p, pl, s->n, redraw, check_one, &c, err, errlen);
    s->check_ns = ao_now_ns() - t0;
    return rc;
}

/* A kept round's first side (an untrusted parent, r->check_both) against
 * the kernel's outputs of the same inputs: both right means within the
 * tolerance of the reference each, so within twice it of each other; the
 * kernel's are checked against the reference afterwards, so a
 * disagreement is the parent's once the kernel passes.  The first noted in
 * r->disagree. */
static void sides_agree(const struct ao_profiler *p, const struct ao_task *t, struct rounds *r, int v,
                        float *const *first)
{
    for (int o = 0; o < t->noutputs && !r->disagree[0]; o++) {
        const float *k = r->smp.out[v].t[t->ninputs + o];
        double e = prof_rel_l2(first[o], k, ao_task_elems(t, t->ninputs + o, r->smp.out[v].dims),
                               prof_host_threads(p->tg));
        if (!(e <= 2 * t->tolerance))
            snprintf(r->disagree, sizeof r->disagree, "output '%s' in timed round %d is %.3g (relative L2) "
                     "from the kernel's on the same inputs, over twice the tolerance %.3g",
                     t->t[t->ninputs + o].name, r->n, e, t->tolerance);
    }
}

/* Has this source passed the pool's check sets?  Its entry, or NULL. */
static struct passed *passed_find(struct pool *pl, const char *digest)
{
    for (int c = 0; c < PASSED_MAX; c++)
        if (pl->passed[c].errors && strcmp(pl->passed[c].digest, digest) == 0)
            return &pl->passed[c];
    return NULL;
}

/* What the check sets found for a source that passed them, from index
 * `from` of errors on; kept in place of the oldest (out of memory: not kept). */
static void passed_note(struct pool *pl, const char *digest, const cJSON *errors, int from,
                         double max_err)
{
    struct passed *c = &pl->passed[pl->passed_next];
    cJSON *mine = cJSON_CreateArray();
    int i = 0;
    const cJSON *e;

    cJSON_ArrayForEach(e, errors)
        if (mine && i++ >= from)
            cJSON_AddItemToArray(mine, cJSON_Duplicate(e, 1));
    if (!mine)
        return;
    cJSON_Delete(c->errors);
    snprintf(c->digest, sizeof c->digest, "%s", digest);
    c->max_err = max_err;
    c->errors = mine;
    pl->passed_next = (pl->passed_next + 1) % PASSED_MAX;
}

/* Check set s: the call (its time added to *kernel_ns), the inputs held
 * to what was given, the outputs to the set's reference (errors NULL: not
 * held).  The call's ns, or -1 with the job's status. */
static long long check_set(struct pool *pl, struct ao_job *j, int s, float **out, cJSON *errors,
                           double *worst, long long *kernel_ns)
{
    const struct ao_task *t = &pl->task;
    const struct dataset *d = &pl->check[s < pl->nchecks ? s : 0];
    uint32_t poison = s < NOMINAL_CHECKS ? 0x7fc00000u : 0x7f7f7f7fu;
    char set[32];
    const char *bad;
    long long e;

    snprintf(set, sizeof set, s < NOMINAL_CHECKS ? (s == STRESS_CHECK && t->has_stress ? "check-stress" : "check%d")
             : s < pl->nchecks ? "check-other-shape-repoisoned" : "check0-repoisoned", s);
    ao_job_place(j, d->dims);
    if ((e = prof_job_call(j, d->dims, d->t, NULL, poison, errors ? out : NULL, "on a correctness check")) < 0)
        return -1;
    *kernel_ns += e; /* the call's, whatever the checks find */
    if (s == 0 || (e < j->checks_least_ns && memcmp(d->dims, pl->dims, sizeof d->dims) == 0))
        j->checks_least_ns = e; /* the shortest at the nominal shape (the first set is at it) */
    if ((bad = prof_inputs_changed(j, d->dims, d->t))) {
        j->status = AO_V_REJECTED;
        snprintf(j->reason, sizeof j->reason, "wrote to its input '%s' (set '%s'): "
                 "inputs are read-only", bad, set);
        return -1;
    }
    return errors && prof_check_outputs(j, t, out, d, set, errors, worst) < 0 ? -1 : e;
}

/* Correctness on every check set, the nominal ones poisoned with NaN and
 * the one at another shape with another poison (where the pool has no
 * other shape, the first set again with it), so an output left untouched
 * can never pass, whichever poison a kernel looks for.  (The second poison
 * had a nominal set of its own, a fifth call: a second of a slow task's
 * child, issue 66.)  A source that passed this pool's sets before is not
 * run on them again (issue 66: a difference measured twice, a parent on
 * its side of its children's head-to-heads): the sets are drawn once per
 * pool, the same source on the same inputs does the same work, and a
 * kernel that varies from call to call is met by the checks of every
 * timed call; what they found then is reported, and j->checks_known set. */
int prof_correctness(struct pool *pl, struct checks *c)
{
    struct ao_job *j = c->j;
    const struct passed *known = j->digest[0] ? passed_find(pl, j->digest) : NULL;
    int from = c->done ? c->errors_from : cJSON_GetArraySize(c->errors);
    double worst = c->done ? c->worst : 0;
    long long e;

    if (known) {
        const cJSON *k;
        cJSON_ArrayForEach(k, known->errors)
            cJSON_AddItemToArray(c->errors, cJSON_Duplicate(k, 1));
        if (!(known->max_err <= *c->max_err) && isfinite(*c->max_err))
            *c->max_err = known->max_err;
        j->checks_known = 1;
        return 0;
    }
    for (int s = c->done; s < NOMINAL_CHECKS + 1; s++) {
        e = check_set(pl, j, s, c->out, c->errors, &worst, c->kernel_ns);
        if (!(worst <= *c->max_err) && isfinite(*c->max_err))
            *c->max_err = worst;
        if (e < 0)
            return -1;
    }
    if (j->digest[0])
        passed_note(pl, j->digest, c->errors, from, worst);
    return 0;
}

long long prof_check_opening(struct pool *pl, struct checks *c, int check)
{
    struct ao_job *j = c->j;
    int known = check && j->digest[0] && passed_find(pl, j->digest);
    cJSON *scratch = known ? cJSON_CreateArray() : NULL;
    double worst = 0;
    long long e;

    if (c->done == 0) {
        c->errors_from = cJSON_GetArraySize(c->errors);
        c->worst = 0;
    }
    e = check_set(pl, j, c->done, c->out, !check ? NULL : known ? scratch : c->errors, &worst, c->kernel_ns);
    cJSON_Delete(scratch);
    if (check && !known && !(worst <= *c->max_err) && isfinite(*c->max_err))
        *c->max_err = worst;
    if (e < 0)
        return -1;
    c->done++;
    if (!(worst <= c->worst))
        c->worst = worst;
    return e;
}

int prof_device_unbelievable(const long long *host, const long long *dev, int n,
                             long long launch_ns, char *reason, size_t len)
{
    struct ao_stats hs, ds;
    double h, d;

    ao_stats_of(host, n, &hs);
    ao_stats_of(dev, n, &ds);
    h = hs.median, d = ds.median;
    if (n <= 0 || launch_ns <= 0 || 4 * d >= h ||
        h - d <= DEVICE_GAP_LAUNCHES * launch_ns + DEVICE_GAP_FLOOR_NS)
        return 0;
    snprintf(reason, len, "the device's time of its executions (median %.1f us) is far below the "
             "host's clock around the same executions (median %.1f us), beyond %d launch overheads "
             "measured on the reference (%.1f us each): the device's time cannot be the "
             "executions'", d / 1e3, h / 1e3, DEVICE_GAP_LAUNCHES, launch_ns / 1e3);
    return 1;
}

int prof_runner_clock(const long long *raw, const long long *dev, const unsigned *late, int n,
                      long long launch_ns, long long empty_ns, long long *lat, int *raised,
                      char *reason, size_t len)
{
    long long allow, *gap;
    struct ao_stats g, d;
    int host = 0;

    *raised = 0;
    if (n <= 0 || launch_ns <= 0)
        return -1;
    for (int i = 0; i < n; i++) {
        if (dev[i] <= 0)
            return -1;
        if (dev[i] > raw[i] + RUNNER_CLOCK_OVER_NS) {
            snprintf(reason, len, "the device's time of a timed call (%.1f us) is longer than the "
                     "host's clock around the whole call (%.1f us): it cannot be the call's",
                     dev[i] / 1e3, raw[i] / 1e3);
            return 1;
        }
    }
    gap = ao_malloc(sizeof *gap * (size_t)n);
    for (int i = 0; i < n; i++)
        gap[i] = raw[i] - dev[i];
    ao_stats_of(gap, n, &g);
    ao_stats_of(dev, n, &d);
    free(gap);
    allow = launch_ns + RUNNER_CLOCK_GATE_NS + RUNNER_CLOCK_SLACK_NS +
            (long long)(d.median / RUNNER_CLOCK_SHARE);
    /* honest calls can sit far above their device time on our clock (host
     * work of their own, a busy host's late wake-ups after a long wait):
     * those get our clock's figure below.  Refused only a device time
     * that is almost nothing of a call that took long */
    if (g.median - (double)allow > RUNNER_CLOCK_FAR_NS &&
        d.median * RUNNER_CLOCK_FAR_SHARE < g.median - (double)allow) {
        snprintf(reason, len, "the device's time of its calls (median %.1f us) is far below the "
                 "host's clock around the same calls (%.1f us more, where the trusted reference's "
                 "differ by %.1f us): the device's time cannot be the calls'",
                 d.median / 1e3, g.median / 1e3, launch_ns / 1e3);
        return 1;
    }
    /* judged on the medians, so the host clock's own scatter (tens of us
     * on a VM) does not move single calls: past the allowance, every
     * call's figure is our clock's less the allowance */
    host = g.median > (double)allow;
    for (int i = 0; i < n; i++) {
        /* a call whose window missed work (late records) is allowed the
         * launch overhead alone */
        long long floor = host ? raw[i] - allow : late[i] ? raw[i] - launch_ns : 0;
        /* the empty call's own device time off, as a wake-up is: what is
         * left is the work's; never under our clock's floor */
        lat[i] = less(dev[i], empty_ns);
        if (floor > lat[i]) {
            lat[i] = floor;
            (*raised)++;
        }
    }
    return 0;
}

int prof_device_times(struct ao_profiler *p, struct ao_job *j, int n, int want, long long *ns,
                      int *which, cJSON **profile, char *err, size_t errlen)
{
    int pick[64], k = n < want ? n : want, mid = 0, rc = 0;
    int *all = ao_malloc(sizeof *all * (size_t)(n > 0 ? n : 1));
    cJSON *prof[64] = {0};
    long long sorted[64];

    if (profile)
        *profile = NULL;
    if (!all || k > 64) {
        free(all);
        snprintf(err, errlen, "out of memory reading the device's times");
        return -1;
    }
    /* which ones: a random k of the n, drawn after all of them ran */
    for (int i = 0; i < n; i++)
        all[i] = i;
    for (int i = 0; i < k; i++) {
        int r = i + (int)(ao_rng_next(&p->choice) % (unsigned long long)(n - i)), t = all[i];
        all[i] = all[r];
        all[r] = t;
        pick[i] = all[i];
    }
    free(all);
    for (int i = 0; i < k && rc == 0; i++) {
        double d;
        if ((rc = p->tg->device_time(j->dir, pick[i], &d, profile ? &prof[i] : NULL, err,
                                     errlen)) == 0)
            sorted[i] = ns[i] = (long long)d;
        if (which)
            which[i] = pick[i];
    }
    if (rc == 0 && k > 0 && profile) {
        /* the profile of the one nearest the median: its counters are the planner's */
        for (int a = 1; a < k; a++)
            for (int b = a; b > 0 && sorted[b - 1] > sorted[b]; b--) {
                long long t = sorted[b];
                sorted[b] = sorted[b - 1];
                sorted[b - 1] = t;
            }
        for (int i = 1; i < k; i++)
            if (llabs(ns[i] - sorted[k / 2]) < llabs(ns[mid] - sorted[k / 2]))
                mid = i;
        *profile = prof[mid];
        prof[mid] = NULL;
    }
    for (int i = 0; i < k; i++)
        cJSON_Delete(prof[i]);
    return rc > 0 ? AO_RC_REJECTED : rc < 0 ? AO_RC_FAIL : k;
}

/* Warm up: warmup_s of running, so the core has left any low-power state
 * before the clock counts.  One call that outlasts warmup_s is enough (its
 * pages faulted in, whether or not the check sets ran first): a second
 * would cost a slow kernel a whole call (issue 28; docs/BENCHMARKS.md).
 * The same calls in the same order in a normal
 * measurement and in each side of a head-to-head, so a kernel cannot tell
 * the two apart by them (issue 46): two on fresh inputs, then the same
 * inputs again.  The last call's time (it sizes the run), or -1. */
long long prof_warm_up(struct ao_profiler *p, struct pool *pl, struct ao_job *j, long long *kernel_ns)
{
    long long e = 0, warm = 0, least = 0;

    for (int w = 0; w == 0 || (warm < (long long)(p->o.warmup_s * 1e9) && w < 100000); w++) {
        if (w < 2) {
            ao_job_place(j, pl->dims);
            e = prof_job_call(j, pl->dims, NULL, &p->rng, 0x7fc00000u, NULL, "while warming up");
        } else {
            /* the same inputs again: warming up needs no fresh data */
            e = ao_job_run(j, AO_RUN_CMD_CALL, 0, "while warming up");
        }
        if (e < 0)
            return -1;
        *kernel_ns += e;
        warm += e;
        if (least == 0 || e < least)
            least = e;
    }
    return least;
}

int prof_rounds_spots(struct ao_profiler *p, struct pool *pl, struct rounds *r)
{
    for (int s = 0; s < r->nsides; s++) {
        struct spots *sp = &r->spots[s];
        memset(sp, 0, sizeof *sp);
        if (s == r->nsides - 1 || r->check_both) /* the untrusted sides */
            prof_spots_plan(p, pl, r->side[s]->raw_ns, sp);
        if (prof_spots_alloc(pl, sp) < 0)
            return -1;
    }
    return r->spots[r->nsides - 1].on;
}

void prof_rounds_free(struct rounds *r)
{
    for (int s = 0; s < 2; s++)
        if (r->side[s])
            prof_spots_free(r->side[s]->task, &r->spots[s]);
    prof_sample_free(&r->smp);
    for (int s = 0; s < 2; s++) {
        free(r->raw[s]);
        free(r->dev[s]);
        free(r->ev[s]);
        free(r->late[s]);
        r->raw[s] = r->dev[s] = r->ev[s] = NULL;
        r->late[s] = NULL;
    }
}

/* Has a one-sided measurement's figure settled?  The device's own times
 * where the runner gives them all (the host's clock scatters by tens of
 * us around ~100 us calls), else our clock less the wake-up. */
static int settled(const struct rounds *r, int clock, long long *lat, double spread)
{
    struct ao_stats st;

    if (clock) /* as prof_runner_clock will: the empty call's off */
        take_wake(r->dev[0], lat, r->n, r->side[0]->empty_dev_ns);
    else
        take_wake(r->raw[0], lat, r->n, r->side[0]->wake_ns);
    ao_stats_of(lat, r->n, &st);
    return st.spread <= spread;
}

/* The paired ratios of the rounds so far into ratio, as compare_once will
 * take them (the runner's device times less one empty call's, else our
 * clock less one wake-up, the lower of the two sides').  0 where a kernel's
 * time is not above that. */
static int round_ratios(const struct rounds *r, int clock, double *ratio)
{
    const struct ao_job *a = r->side[0], *b = r->side[1];
    long long w = clock ? (a->empty_dev_ns < b->empty_dev_ns ? a->empty_dev_ns : b->empty_dev_ns)
                        : (a->wake_ns < b->wake_ns ? a->wake_ns : b->wake_ns);
    long long *const *t = clock ? r->dev : r->raw;

    for (int i = 0; i < r->n; i++) {
        long long y = less(t[1][i], w);
        if (y <= 0)
            return 0;
        ratio[i] = (double)less(t[0][i], w) / (double)y;
    }
    return 1;
}

/* Has a head-to-head's answer settled (issue 66: stop on the answer, not
 * on a count; asked from H2H_DECIDED_MIN rounds on)?  The paired ratios'
 * distribution-free 95% interval: within H2H_DECIDED of their median, more
 * rounds would not change the interval reported, which is never narrower
 * than H2H_SYSTEMATIC. */
static int decided(const struct rounds *r, int clock, double *ratio)
{
    double median, low, high;

    if (!round_ratios(r, clock, ratio))
        return 0;
    ao_median_interval(ratio, r->n, 0, &median, &low, &high);
    return median > 0 && high - low <= 2 * H2H_DECIDED * median;
}

/* Can the rounds still decide anything?  Where they would end (`end`
 * rounds: r->min, or as many as the budget holds at their pace so far),
 * their interval is the k-th ratios from either end (ao_median_interval's
 * k for `end` rounds): more than k on each side of 1 already, and it
 * holds 1 whatever the rounds left show, so the pair is a tie now as then
 * (issue 66: a child against its parent, where most are ties, and a slow
 * kernel's six rounds took most of its profile; a tie among bmm's children
 * ran its eight rounds where two showed it). */
/* The sign test's k for n rounds: the 95% interval of their median is
 * the k-th ratios from either end (ao_median_interval's k; 0 under six) */
static int sign_k(int n)
{
    int k = (int)floor((n - 1.96 * sqrt((double)n)) / 2);

    return k > 0 ? k : 0;
}

static int undecidable(const struct rounds *r, int end, int clock, double *ratio)
{
    int k = sign_k(end), above = 0, below = 0;

    if (!round_ratios(r, clock, ratio))
        return 0;
    for (int i = 0; i < r->n; i++) {
        above += ratio[i] > 1;
        below += ratio[i] < 1;
    }
    return above > k && below > k;
}

/* Is a child's answer plain before its minimum, with its budget spent
 * (issue 66: stop on the answer, not on a count)?  Six rounds are the
 * fewest whose distribution-free interval is a 95% one; a slow kernel's
 * six of both sides were most of its profile where three rounds a few
 * percent apart already showed the answer.  From H2H_ANSWERED_MIN rounds,
 * the Student-t interval of the log-ratios (judge reports it, widened to
 * the systematic floor): past 1 by the floor again, a difference; or a
 * tie already inside the floor, which holds 1: more rounds only narrow the
 * t-interval, and the floor's band around the median stays what is
 * reported.  A gain, and a loss past 1/1.15, are measured again in fresh
 * processes all the same (ao_profiler_compare). */
static int answered(const struct rounds *r, int clock, double *ratio)
{
    double median, low, high, floor_low, floor_high;
    int k = sign_k(r->n), above = 0, below = 0;

    if (r->n < H2H_ANSWERED_MIN || !round_ratios(r, clock, ratio))
        return 0;
    for (int i = 0; i < r->n; i++) {
        above += ratio[i] > 1;
        below += ratio[i] < 1;
    }
    ao_t_interval(ratio, r->n, 0, &median, &low, &high); /* the bare interval; the floor's band: */
    floor_low = median * (1 - H2H_SYSTEMATIC), floor_high = median * (1 + H2H_SYSTEMATIC);
    /* a difference: the interval past 1 by the floor once more, and the
     * rounds as the sign test has them (all but k on that side; k is 0
     * under six rounds).  A few rounds are one moment of the machine: on
     * a busy CI two processes of one kernel sat 8% apart for four rounds
     * (an A/A pair "slower" at 0.85-0.99); one call stalled tenfold drags
     * a mean of logs (an A/A pair "slower" at 0.19-0.96 from 12 rounds).
     * A smaller difference runs on to the minimum, as any pair does. */
    return (fmin(low, floor_low) > 1 + H2H_SYSTEMATIC && above >= r->n - k) ||
           (fmax(high, floor_high) < 1 - H2H_SYSTEMATIC && below >= r->n - k) ||
           (low >= floor_low && high <= floor_high);
}

/* What prof_rounds works with beside the rounds themselves. */
struct rounds_work {
    struct ao_job *kj;   /* the kernel's side: its outputs are checked */
    struct dataset fresh; /* a kept round's inputs drawn again after its calls, to compare */
    /* the first side's outputs of a kept round go to a scratch copy (held
     * against the kernel's where it is untrusted): a kept round reads both
     * sides', so both are watched alike */
    float *scratch[AO_MAX_TENSORS];
    long long *lat;
    double *ratio;
    int clock;         /* every call so far gave the runner's device time */
};

static int rounds_start(struct ao_profiler *p, struct pool *pl, struct rounds *r, struct rounds_work *w)
{
    const struct ao_task *t = &pl->task;

    memset(w, 0, sizeof *w);
    w->kj = r->side[r->nsides - 1];
    w->clock = p->tg->runner_clock;
    r->n = r->voided = 0;
    r->kernel_ns = r->inputs_ns = 0;
    for (int s = 0; s < r->nsides; s++) {
        r->raw[s] = ao_malloc(sizeof **r->raw * (size_t)r->max);
        r->dev[s] = ao_malloc(sizeof **r->dev * (size_t)r->max);
        r->ev[s] = ao_malloc(sizeof **r->ev * (size_t)r->max);
        r->late[s] = ao_calloc((size_t)r->max, sizeof **r->late);
    }
    w->lat = ao_malloc(sizeof *w->lat * (size_t)r->max);
    w->ratio = ao_malloc(sizeof *w->ratio * (size_t)r->max);
    if (prof_dataset_alloc(t, &w->fresh, pl->dims, PROF_INPUTS) < 0)
        return -1;
    for (int k = 0; k < r->opened; k++) /* the opening rounds are the first (h2h.c) */
        for (int s = 0; s < r->nsides; s++)
            r->raw[s][k] = r->opening[k][s], r->dev[s][k] = r->ev[s][k] = 0;
    r->n = r->opened;
    if (r->nsides == 2)
        for (int o = 0; o < t->noutputs; o++)
            if (!(w->scratch[o] = prof_tensor_alloc(ao_task_elems(t, t->ninputs + o, pl->dims))))
                return -1;
    /* a device that times itself profiles every timed call (and no other):
     * the executions timed are the executions checked */
    if (p->tg->device_time)
        for (int s = 0; s < r->nsides; s++)
            r->side[s]->hdr->profile = 1;
    return 0;
}

/* The job's driver tells each input in place (prof_job_call_guarded). */
static void note_input(void *spots, int i, const float *x)
{
    prof_spots_note(spots, i, x);
}

/* Side s's call of round r->n, on inputs drawn from gen (next: past
 * them); v >= 0 when the round is kept (its outputs read back).  Its time
 * into the round's arrays; *away when we were away at its `done`.  The
 * call's ns, or -1 with a status or err. */
static long long side_call(struct ao_profiler *p, struct pool *pl, struct rounds *r, struct rounds_work *w,
                           int s, int v, const struct ao_rng *gen, struct ao_rng *next, int *away)
{
    const struct ao_task *t = &pl->task;
    struct ao_job *j = r->side[s];
    float **out = v < 0 ? NULL : j == w->kj ? r->smp.out[v].t + t->ninputs : w->scratch;
    struct prof_note note = {note_input, NULL};
    long long e;

    if ((r->n < 32 || r->n % 4 == 0) && prof_wake_sample(j, "in a timed call") < 0)
        return -1; /* spread over the calls, at most about 90 */
    ao_job_place(j, pl->dims);
    *next = *gen;
    if (r->spots[s].on)
        prof_spots_guard(p, &r->spots[s], t, pl->dims);
    note.ctx = &r->spots[s];
    if ((e = prof_job_call_guarded(j, pl->dims, NULL, next,
                                   r->spots[r->nsides - 1].on ? PROF_NO_POISON : 0x7fc00000u, out,
                                   r->spots[s].on ? &note : NULL, "in a timed call")) < 0)
        return -1;
    r->kernel_ns += e;
    /* written by the kernel's process: held against our clock
     * (prof_runner_clock) where it is the latency, else reported */
    r->raw[s][r->n] = j->raw_ns; /* raw: the wake-up comes off after */
    r->dev[s][r->n] = (long long)__atomic_load_n(&j->hdr->device_ns, __ATOMIC_RELAXED);
    r->late[s][r->n] = __atomic_load_n(&j->hdr->late_records, __ATOMIC_RELAXED);
    r->ev[s][r->n] = (long long)__atomic_load_n(&j->hdr->events_ns, __ATOMIC_RELAXED);
    w->clock = w->clock && r->dev[s][r->n] > 0;
    *away |= (v >= 0 || r->spots[s].on) && j->watch_void;
    return e;
}

/* A kept round's inputs, drawn again from gen (untimed) once both sides
 * have made their calls, held against what each side was given: drawn
 * between the two calls, they made the second side's wait longer in the
 * rounds that are checked, a tell (issue 68).  0, or -1 with the side's
 * status. */
static int inputs_kept(struct ao_profiler *p, struct pool *pl, struct rounds *r, struct rounds_work *w,
                       const struct ao_rng *gen)
{
    struct ao_rng again = *gen;
    long long t1 = ao_now_ns();
    const char *bad;

    prof_draw_timed(&again, p, &pl->task, &w->fresh);
    r->inputs_ns += ao_now_ns() - t1;
    for (int s = 0; s < r->nsides; s++)
        if ((bad = prof_inputs_changed(r->side[s], pl->dims, w->fresh.t))) {
            r->side[s]->status = AO_V_REJECTED;
            snprintf(r->side[s]->reason, sizeof r->side[s]->reason, "wrote to its input '%s' in timed call %d: "
                     "inputs are read-only", bad, r->n);
            return -1;
        }
    return 0;
}

/* Where a head-to-head's rounds would end, from their pace so far: at
 * their minimum, or later while the budget lasts (at most r->max). */
static int rounds_end_at(const struct rounds *r, long long spent)
{
    double held = spent >= r->budget_ns || spent <= 0 ? r->n : ceil((double)r->budget_ns * r->n / (double)spent);
    int end = held > r->max ? r->max : (int)held;

    return end > r->min ? end : r->min;
}

/* Enough rounds, past the minimum: the budget spent, one side's figure
 * settled, or a head-to-head's answer (a device that times itself is read
 * after the rounds: it runs them all); before they would end, a child's
 * pair that can decide nothing any more; short of the minimum, with the
 * budget spent, a child's pair whose answer is plain. */
static int rounds_enough(const struct ao_profiler *p, struct rounds *r, struct rounds_work *w,
                         long long spent)
{
    if (r->stop_undecidable && r->nsides == 2) {
        int end = rounds_end_at(r, spent);
        if (r->n < end && undecidable(r, end, w->clock, w->ratio))
            return r->undecidable = 1;
        if (r->n < r->min && spent >= r->budget_ns && answered(r, w->clock, w->ratio))
            return r->answered = 1;
    }
    return r->n >= r->min &&
           (spent >= r->budget_ns ||
            (r->spread > 0 && r->nsides == 1 && settled(r, w->clock, w->lat, r->spread)) ||
            (r->nsides == 2 && !p->tg->device_time && r->n >= H2H_DECIDED_MIN &&
             decided(r, w->clock, w->ratio)));
}

/* After the rounds: a side's check sets where they come last, the runners
 * stopped, the work freed.  rc as it goes on. */
static int rounds_end(struct pool *pl, struct rounds *r, struct rounds_work *w, int rc)
{
    for (int s = 0; s < r->nsides; s++)
        if (r->side[s]->hdr)
            r->side[s]->hdr->profile = 0;
    if (rc == 0 && r->after) {
        if (prof_correctness(pl, r->after) < 0)
            rc = -1; /* its status says why */
    }
    for (int s = 0; s < r->nsides; s++)
        ao_job_stop(r->side[s], "after its last call");
    w->kj->inputs_ns += r->inputs_ns;
    prof_dataset_free(&w->fresh);
    for (int o = 0; o < pl->task.noutputs; o++)
        prof_tensor_free(w->scratch[o]);
    free(w->lat);
    free(w->ratio);
    return rc;
}

#define ROUND_STALL 3

int prof_rounds(struct ao_profiler *p, struct pool *pl, struct rounds *r, char *err, size_t errlen)
{
    struct rounds_work w;
    long long spent = 0, least = 0;
    int force = -1;

    if (rounds_start(p, pl, r, &w) < 0) {
        snprintf(err, errlen, "out of memory for the timed calls");
        return rounds_end(pl, r, &w, -1);
    }
    err[0] = '\0';
    for (int k = 0; k < r->opened; k++) { /* their calls counted as any round's */
        long long round_ns = r->opening[k][0] + r->opening[k][1];
        spent += round_ns;
        least = least == 0 || round_ns < least ? round_ns : least;
    }
    /* (a tie the opening rounds show needs no more) */
    while (r->n < r->max && !(r->opened > 1 && r->n == r->opened && rounds_enough(p, r, &w, spent))) {
        /* (the opening rounds, fully checked, are not among those sampled) */
        int v = force >= 0 ? force : prof_sample_slot(p, &r->smp, r->n - r->opened), away = 0;
        int first = r->nsides == 2 ? (int)(ao_rng_next(&p->choice) & 1) : 0;
        /* every side's inputs drawn straight into its tensors from its
         * core, from the round's one generator state: the same inputs for
         * both sides, and a kept call's written exactly as any other's
         * (issue 56); a kept round's drawn again after, to compare */
        struct ao_rng gen = p->rng, next = gen;
        long long round_ns = 0, e;

        force = -1;
        if (v >= 0 && prof_dataset_alloc(&pl->task, &r->smp.out[v], pl->dims, PROF_OUTPUTS) < 0) {
            snprintf(err, errlen, "out of memory for the timed calls");
            return rounds_end(pl, r, &w, -1);
        }
        if (v >= 0)
            r->smp.seed[v] = gen;
        for (int k = 0; k < r->nsides; k++) {
            int s = k ? !first : first;
            if ((e = side_call(p, pl, r, &w, s, v, &gen, &next, &away)) < 0)
                return rounds_end(pl, r, &w, -1);
            round_ns += e;
        }
        if (v >= 0 && inputs_kept(p, pl, r, &w, &gen) < 0)
            return rounds_end(pl, r, &w, -1);
        /* the round's calls at secret positions, once both sides made theirs */
        for (int s = 0; s < r->nsides; s++)
            if (r->spots[s].on && prof_spots_check(p, pl, &r->spots[s], r->side[s], r->n, err, errlen) < 0)
                return rounds_end(pl, r, &w, -1);
        p->rng = next; /* past the round's inputs */
        if (away && r->voided < WATCH_VOIDS_MAX) {
            /* we were away at a side's `done`: neither the round's times
             * nor its outputs count, and another takes its place */
            r->voided++;
            force = v;
            continue;
        }
        if (v >= 0 && r->check_both)
            sides_agree(p, &pl->task, r, v, w.scratch);
        if (v >= 0) {
            r->smp.call[v] = r->n;
            if (v >= r->smp.n)
                r->smp.n = v + 1;
        }
        r->n++;
        /* a round counts against the budget at most ROUND_STALL times the
         * shortest so far: a stalled round (a busy machine took the core
         * for tens of ms) must not cut the rounds short where their
         * interval needs them most (a 10x slower kernel found "not
         * slower" from 18 rounds, each stretched 15x, on a busy CI) */
        if (least == 0 || round_ns < least)
            least = round_ns;
        spent += round_ns < ROUND_STALL * least ? round_ns : ROUND_STALL * least;
        if (rounds_enough(p, r, &w, spent))
            break;
    }
    return rounds_end(pl, r, &w, 0);
}

/* Correctness on the check sets, then timed calls on fresh inputs, a
 * uniform sample of them (secretly chosen) checked against the reference
 * afterwards. */
int prof_measure(struct ao_profiler *p, struct pool *pl, struct ao_job *j, cJSON *errors,
                 double *max_err, struct timed *m, char *err, size_t errlen)
{
    const struct ao_task *t = &pl->task;
    float *out[AO_MAX_TENSORS] = {0};
    long long *lat = NULL, e = 0;
    int n, min_calls, timed, on, rc = -1;
    struct rounds r;

    memset(&r, 0, sizeof r);
    snprintf(err, errlen, "out of memory while measuring");
    m->kernel_ns = 0;
    m->voided = 0;
    m->clock = m->raised = 0;
    m->launch_ns = 0;
    m->empty_dev_ns = 0;
    if (prof_measure_wake(j) < 0)
        goto out;
    m->wake_ns = j->wake_ns;
    for (int o = 0; o < t->noutputs; o++)
        if (!(out[o] = prof_tensor_alloc(ao_task_elems(t, t->ninputs + o, pl->dims))))
            goto out;
    lat = ao_malloc(sizeof *lat * (size_t)p->o.max_calls);
    /* the check sets, the warm-up, then the timed calls.  A lone
     * measurement is the task's own baseline's (or one asked for by name,
     * `--no-compare`, `profile --alone`): a kernel a model wrote is
     * measured head to head with its parent (issue 66), so nothing hides
     * which kind this is */
    struct checks c = {j, out, errors, max_err, &m->kernel_ns, 0, 0, 0};
    if (prof_correctness(pl, &c) < 0)
        goto out;
    /* warm from its check sets where each call outlasts the warm-up (h2h.c) */
    if (!j->checks_known && j->checks_least_ns >= (long long)(p->o.warmup_s * 1e9))
        e = j->checks_least_ns;
    else if ((e = prof_warm_up(p, pl, j, &m->kernel_ns)) < 0)
        goto out;
    min_calls = e > 0 ? (int)(p->o.budget_s * 1e9 / (double)e) : 10;
    r.side[0] = j;
    r.nsides = 1;
    if ((on = prof_rounds_spots(p, pl, &r)) < 0)
        goto out;
    r.min = min_calls < 3 ? 3 : min_calls > 10 ? 10 : min_calls;
    r.max = p->o.max_calls;
    r.budget_ns = (long long)(p->o.budget_s * 1e9);
    r.spread = p->o.target_spread;
    /* every call checked at secret positions, or a sample of them whole */
    r.smp.size = on ? 0 : prof_sample_size(pl, CHECKED_TIMED);
    timed = prof_rounds(p, pl, &r, err, errlen);
    m->kernel_ns += r.kernel_ns;
    m->voided = r.voided;
    if (timed < 0)
        goto out;
    n = r.n;
    take_wake(r.raw[0], lat, n, j->wake_ns);
    ao_stats_of(lat, n, &m->st);
    ao_stats_of(r.dev[0], n, &m->device);
    ao_stats_of(r.ev[0], n, &m->events);
    m->wake_ns = j->wake_ns;
    m->wake_u_ns = wake_uncertainty(j);
    if (p->tg->device_time) {
        /* the latency is the device's own time of the executions */
        long long dns[DEVICE_VIEWS], hns[DEVICE_VIEWS];
        int which[DEVICE_VIEWS];
        int k = prof_device_times(p, j, n, DEVICE_VIEWS, dns, which, &m->profile, err, errlen);
        if (k == AO_RC_REJECTED) {
            j->status = AO_V_REJECTED;
            snprintf(j->reason, sizeof j->reason, "%s", err);
            goto out;
        }
        if (k <= 0) {
            if (k == 0)
                snprintf(err, errlen, "no timed execution to read the device's time of");
            goto out;
        }
        /* the device's word against our clock around the same executions */
        for (int i = 0; i < k; i++)
            hns[i] = r.raw[0][which[i]];
        if (prof_device_unbelievable(hns, dns, k, pl->launch_ns, j->reason, sizeof j->reason)) {
            j->status = AO_V_REJECTED;
            goto out;
        }
        m->host = m->st;
        ao_stats_of(dns, k, &m->st);
        m->views = k;
        m->profiled = n;
        m->wake_u_ns = 0; /* the device's clock has no wake-up in it */
    }
    if (p->tg->runner_clock) {
        int raised = 0, v = prof_runner_clock(r.raw[0], r.dev[0], r.late[0], n, pl->launch_ns,
                                              j->empty_dev_ns, lat, &raised, j->reason,
                                              sizeof j->reason);
        if (v > 0) {
            j->status = AO_V_REJECTED;
            goto out;
        }
        if (v == 0) {
            m->host = m->st;
            ao_stats_of(lat, n, &m->st);
            m->clock = (int)__atomic_load_n(&j->hdr->device_clock, __ATOMIC_RELAXED);
            m->raised = raised;
            m->launch_ns = pl->launch_ns;
            m->empty_dev_ns = j->empty_dev_ns;
            m->wake_u_ns = 0; /* the device's clock has no wake-up in it */
        }
    }
    err[0] = '\0';
    if (prof_check_sample(p, pl, j, &r.smp, errors, max_err, err, errlen) < 0)
        goto out;
    m->check_ns = r.smp.check_ns;
    prof_spots_tally(&r.spots[0], &m->spots);
    rc = 0;
out:
    prof_rounds_free(&r);
    for (int o = 0; o < t->noutputs; o++)
        prof_tensor_free(out[o]);
    free(lat);
    return rc;
}
