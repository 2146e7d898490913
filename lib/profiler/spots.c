/* spots.c - every timed call checked at secret positions (issue 66,
 * part 2).  A task whose sizes are marked independent (task.h) lets the
 * reference compute a few output elements alone: the inputs at the chosen
 * indices of each independent size (and all of each other size) make a
 * small problem of the same kind, and its outputs are the full problem's
 * outputs at those indices.  So after each timed call the profiler picks
 * indices the kernel cannot know, gathers the kernel's outputs there and
 * the inputs they came from, runs the kept reference process on the small
 * problem and holds the two to the tolerance: about SPOTS_TARGET outputs
 * a call, for a fraction of the call's time, where six full references a
 * measurement cost seconds.  A few input elements are noted before each
 * call (guards) and held after it: the small problem's inputs are read
 * back from the kernel's tensors, and a kernel that rewrote them to
 * match outputs it did not compute rewrote the guards too. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "core/alloc.h"
#include "core/util.h"
#include "profiler/profiler_int.h"
#include "targets/target.h"

/* a timed call's outputs checked at about this many positions: a kernel
 * wrong on a fraction f of them escapes one call with (1 - f)^n, e^-8 at
 * f = 0.1% ... */
#define SPOTS_TARGET 8192
/* ... and a grid at up to this many, where its work allows: a grid draws
 * whole rows (mamba's 7168 outputs a channel made one channel of 256 a
 * call at the target), and a pattern along rows is met with the share of
 * rows drawn */
#define SPOTS_GRID_MAX 32768
/* ... for at most this share of the kernel's own call (the reference is a
 * plain double loop: a matmul's small problem costs K per output) */
#define SPOTS_SHARE 0.25
/* the small problem is judged at this many times the task's tolerance:
 * fewer elements scatter the relative L2 error more than the whole
 * output's, and a skipped or stale element is off by its own size */
#define SPOTS_SLACK 2.0
#define GUARDS 256 /* input elements held per input tensor */

/* every tensor has exactly the independent sizes, in one order: each
 * element its own problem (cells), not a grid of rows and columns */
static int elementwise(const struct ao_task *t)
{
    const struct ao_tensor *a = &t->t[0];

    for (int i = 0; i < t->ninputs + t->noutputs; i++) {
        const struct ao_tensor *x = &t->t[i];
        if (x->rank != a->rank)
            return 0;
        for (int k = 0; k < x->rank; k++)
            if (x->dim[k] != a->dim[k] || !t->dim_independent[x->dim[k]])
                return 0;
    }
    return 1;
}

/* the first output's elements at the small problem's sizes */
static long long out_elems(const struct ao_task *t, const long long *sub)
{
    return ao_task_elems(t, t->ninputs, sub);
}

void prof_spots_plan(const struct ao_profiler *p, const struct pool *pl, long long call_ns, struct spots *s)
{
    const struct ao_task *t = &pl->task;
    double share = 1; /* of the full reference's work the small problem is */
    int any = 0;

    s->on = 0;
    for (int d = 0; d < t->ndims; d++)
        any |= t->dim_independent[d];
    /* a device's outputs stay on it between calls: sampled full checks there */
    if (!any || p->tg->after_call || p->tg->device_time)
        return;
    memcpy(s->sub, pl->dims, sizeof s->sub);
    s->cells = elementwise(t);
    if (s->cells) {
        /* the flat positions laid out as a small problem of the same rank,
         * each size no larger than the task's */
        const struct ao_tensor *a = &t->t[0];
        long long want = SPOTS_TARGET, all = ao_task_elems(t, 0, pl->dims);
        double budget = call_ns > 0 && pl->ref_ns > 0 ? SPOTS_SHARE * (double)call_ns / (double)pl->ref_ns : 1;
        if ((double)want > budget * (double)all)
            want = (long long)(budget * (double)all);
        if (want > all)
            want = all;
        if (want < 1)
            want = 1;
        for (int k = a->rank - 1; k >= 0; k--) {
            long long full = pl->dims[a->dim[k]], e = want < full ? want : full;
            s->sub[a->dim[k]] = e;
            want = (want + e - 1) / e;
        }
    } else {
        /* grow the independent size with the smallest share of its indices
         * drawn, by a quarter, while the outputs stay under the target and
         * the work under its share: even shares, so a wrong pattern along
         * one size (a few columns) is as likely met as one along another */
        for (int d = 0; d < t->ndims; d++)
            if (t->dim_independent[d])
                s->sub[d] = 1;
        for (;;) {
            int best = -1;
            for (int d = 0; d < t->ndims; d++)
                if (t->dim_independent[d] && s->sub[d] < pl->dims[d] &&
                    (best < 0 || (double)s->sub[d] / (double)pl->dims[d] <
                                     (double)s->sub[best] / (double)pl->dims[best]))
                    best = d;
            if (best < 0)
                break;
            long long was = s->sub[best], grown = was + (was + 3) / 4;
            long long next = grown < pl->dims[best] ? grown : pl->dims[best];
            s->sub[best] = next;
            share = 1;
            for (int d = 0; d < t->ndims; d++)
                if (t->dim_independent[d])
                    share *= (double)s->sub[d] / (double)pl->dims[d];
            if (out_elems(t, s->sub) > SPOTS_GRID_MAX ||
                (call_ns > 0 && share * (double)pl->ref_ns > SPOTS_SHARE * (double)call_ns)) {
                s->sub[best] = was;
                break;
            }
        }
    }
    share = 1;
    for (int d = 0; d < t->ndims; d++)
        if (t->dim_independent[d])
            share *= (double)s->sub[d] / (double)pl->dims[d];
    /* one index of each is still too much work (gqa's batch of 1 at the
     * cpu size is the whole problem): the sampled whole checks instead,
     * which keep to a reference budget of their own */
    if (call_ns > 0 && share * (double)pl->ref_ns > SPOTS_SHARE * (double)call_ns)
        return;
    s->positions = 0;
    for (int o = 0; o < t->noutputs; o++)
        s->positions += ao_task_elems(t, t->ninputs + o, s->sub);
    s->on = 1;
}

/* Before a call: the guards' positions drawn ... */
void prof_spots_guard(struct ao_profiler *p, struct spots *s, const struct ao_task *t, const long long *dims)
{
    for (int i = 0; i < t->ninputs; i++) {
        size_t n = ao_task_elems(t, i, dims);
        for (int g = 0; g < GUARDS; g++)
            s->guard_at[i][g] = (size_t)(ao_rng_next(&p->choice) % n);
    }
}

/* ... and their values noted, the inputs in place */
void prof_spots_note(struct spots *s, int i, const float *x)
{
    for (int g = 0; g < GUARDS; g++)
        memcpy(&s->guard_val[i][g], &x[s->guard_at[i][g]], sizeof(float));
}

/* k indices of [0, n) in random order: distinct where k is a large share
 * of n (a partial shuffle), else drawn independently (a repeat checks
 * one position twice, which costs little and misses nothing) */
static int draw_indices(struct ao_rng *r, long long n, long long k, long long *out)
{
    if (k * 4 <= n) {
        for (long long i = 0; i < k; i++)
            out[i] = (long long)(ao_rng_next(r) % (unsigned long long)n);
        return 0;
    }
    long long *all = ao_malloc(sizeof *all * (size_t)n);
    for (long long i = 0; i < n; i++)
        all[i] = i;
    for (long long i = 0; i < k; i++) {
        long long j = i + (long long)(ao_rng_next(r) % (unsigned long long)(n - i)), x = all[j];
        all[j] = all[i];
        all[i] = x;
        out[i] = x;
    }
    free(all);
    return 0;
}

static int by_value(const void *a, const void *b)
{
    long long x = *(const long long *)a, y = *(const long long *)b;
    return (x > y) - (x < y);
}

/* Tensor i's elements at the small problem's indices, from full (the task's
 * sizes dims) into part (the small problem's).  Each is a miss in the
 * caches (rope's 232 columns of 384 rows far apart: 3 ms a call, taken one
 * miss at a time): the offsets are made first, then read with the next
 * GATHER_AHEAD already asked for (1.2 ms). */
#define GATHER_AHEAD 32
static void gather(const struct ao_task *t, const struct spots *s, int i, const long long *dims,
                   const float *full, float *part)
{
    const struct ao_tensor *x = &t->t[i];
    long long at[AO_MAX_RANK] = {0}, n = ao_task_elems(t, i, s->sub);
    const long long *off = s->cells ? s->cell : s->off;

    if (!s->cells)
        for (long long k = 0; k < n; k++) {
            long long o = 0;
            for (int a = 0; a < x->rank; a++) {
                int d = x->dim[a];
                o = o * dims[d] + (t->dim_independent[d] ? s->idx[d][at[a]] : at[a]);
            }
            s->off[k] = o;
            for (int a = x->rank - 1; a >= 0 && ++at[a] == s->sub[x->dim[a]]; a--)
                at[a] = 0; /* the odometer: the last axis fastest */
        }
    for (long long k = 0; k < n; k++) {
        if (k + GATHER_AHEAD < n)
            __builtin_prefetch(&full[off[k + GATHER_AHEAD]]);
        part[k] = full[off[k]];
    }
}

int prof_spots_check(struct ao_profiler *p, struct pool *pl, struct spots *s, struct ao_job *j, int call,
                     char *err, size_t errlen)
{
    const struct ao_task *t = &pl->task;
    long long t0 = ao_now_ns();
    int rc = -1;

    /* the guards first: inputs are read-only, and the small problem's
     * inputs come from the kernel's tensors */
    for (int i = 0; i < t->ninputs; i++) {
        const float *x = ao_job_tensor(j, i);
        for (int g = 0; g < GUARDS; g++)
            if (memcmp(&x[s->guard_at[i][g]], &s->guard_val[i][g], sizeof(float)) != 0) {
                j->status = AO_V_REJECTED;
                snprintf(j->reason, sizeof j->reason, "wrote to its input '%s' in timed call %d: inputs are "
                         "read-only", t->t[i].name, call);
                goto out;
            }
    }
    if (s->cells) {
        long long n = ao_task_elems(t, 0, s->sub), all = ao_task_elems(t, 0, pl->dims);
        if (draw_indices(&p->choice, all, n, s->cell) < 0)
            goto oom;
    } else {
        for (int d = 0; d < t->ndims; d++)
            if (t->dim_independent[d]) {
                if (draw_indices(&p->choice, pl->dims[d], s->sub[d], s->idx[d]) < 0)
                    goto oom;
                /* in order: each row's reads go one way through memory */
                qsort(s->idx[d], (size_t)s->sub[d], sizeof *s->idx[d], by_value);
            }
    }
    memcpy(s->part.dims, s->sub, sizeof s->part.dims);
    for (int i = 0; i < t->ninputs; i++)
        gather(t, s, i, pl->dims, ao_job_tensor(j, i), s->part.t[i]);
    for (int o = 0; o < t->noutputs; o++)
        gather(t, s, t->ninputs + o, pl->dims, ao_job_tensor(j, t->ninputs + o), s->got[o]);
    if (prof_ref_call(p, pl, &s->part, err, errlen) < 0)
        goto out;
    for (int o = 0; o < t->noutputs; o++) {
        size_t n = ao_task_elems(t, t->ninputs + o, s->sub);
        double e = prof_rel_l2(s->got[o], s->part.t[t->ninputs + o], n, 1);
        if (!(e <= s->max_err) && isfinite(e))
            s->max_err = e;
        if (!(e <= SPOTS_SLACK * t->tolerance)) {
            j->status = AO_V_INCORRECT;
            snprintf(j->reason, sizeof j->reason, "output '%s' at %zu secret positions of timed call %d: "
                     "relative L2 error %.3g over the tolerance %.3g (in a timed call, after passing the "
                     "correctness checks: outputs must be computed from the inputs of each call)",
                     t->t[t->ninputs + o].name, n, call, e, SPOTS_SLACK * t->tolerance);
            goto out;
        }
    }
    s->calls++;
    rc = 0;
    goto out;
oom:
    snprintf(err, errlen, "out of memory for a timed call's positions");
out:
    s->check_ns += ao_now_ns() - t0;
    return rc;
}

int prof_spots_alloc(const struct pool *pl, struct spots *s)
{
    const struct ao_task *t = &pl->task;
    size_t most = 0;

    if (!s->on)
        return 0;
    for (int i = 0; i < t->ninputs; i++) {
        s->guard_at[i] = ao_malloc(sizeof *s->guard_at[i] * GUARDS);
        s->guard_val[i] = ao_malloc(sizeof *s->guard_val[i] * GUARDS);
    }
    if (prof_dataset_alloc(t, &s->part, s->sub, PROF_INPUTS | PROF_OUTPUTS) < 0)
        return -1;
    for (int o = 0; o < t->noutputs; o++)
        if (!(s->got[o] = prof_tensor_alloc(ao_task_elems(t, t->ninputs + o, s->sub))))
            return -1;
    if (s->cells && !(s->cell = malloc(sizeof *s->cell * (size_t)ao_task_elems(t, 0, s->sub))))
        return -1;
    for (int d = 0; !s->cells && d < t->ndims; d++)
        if (t->dim_independent[d] && !(s->idx[d] = malloc(sizeof *s->idx[d] * (size_t)s->sub[d])))
            return -1;
    for (int i = 0; !s->cells && i < t->ninputs + t->noutputs; i++)
        if ((size_t)ao_task_elems(t, i, s->sub) > most)
            most = (size_t)ao_task_elems(t, i, s->sub);
    if (most && !(s->off = malloc(sizeof *s->off * most)))
        return -1;
    return 0;
}

void prof_spots_free(const struct ao_task *t, struct spots *s)
{
    for (int i = 0; i < AO_MAX_TENSORS; i++) {
        free(s->guard_at[i]);
        free(s->guard_val[i]);
        s->guard_at[i] = NULL;
        s->guard_val[i] = NULL;
    }
    prof_dataset_free(&s->part);
    for (int o = 0; o < AO_MAX_TENSORS; o++) {
        prof_tensor_free(s->got[o]);
        s->got[o] = NULL;
    }
    for (int d = 0; d < AO_MAX_DIMS; d++) {
        free(s->idx[d]);
        s->idx[d] = NULL;
    }
    free(s->cell);
    free(s->off);
    s->cell = s->off = NULL;
    (void)t;
}

void prof_spots_tally(const struct spots *s, struct spots_tally *t)
{
    memset(t, 0, sizeof *t);
    if (!s->on)
        return;
    t->calls = s->calls;
    t->positions = s->positions;
    t->ns = s->check_ns;
    t->max_err = s->max_err;
}

void prof_spots_json(const struct spots_tally *s, const struct ao_task *t, cJSON *timing, cJSON *errors)
{
    cJSON *e;

    if (s->calls <= 0)
        return;
    if (timing) {
        cJSON_AddNumberToObject(timing, "spots_calls", s->calls);
        cJSON_AddNumberToObject(timing, "spots_positions", (double)s->positions);
        cJSON_AddNumberToObject(timing, "spots_ns", (double)s->ns);
    }
    if (errors && (e = cJSON_CreateObject())) {
        cJSON_AddStringToObject(e, "set", "timed-spots");
        cJSON_AddStringToObject(e, "output", t->noutputs == 1 ? t->t[t->ninputs].name : "all");
        cJSON_AddNumberToObject(e, "rel_l2", s->max_err);
        cJSON_AddItemToArray(errors, e);
    }
}
