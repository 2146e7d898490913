/* pools.c - the inputs and references of a task at a size, built once
 * and kept for the profiler's life (the reference run as a kernel is) */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/alloc.h"
#include "core/log.h"
#include "core/rng.h"
#include "core/util.h"
#include "measure/job.h"
#include "profiler/profile.h"
#include "profiler/profiler_int.h"
#include "targets/target.h"

/* The launch overhead from the reference's profiled nominal calls (their
 * host times host[], the runner's device times dev[] where it gives them):
 * the median of host less device.  Unknown (0, and
 * said in the log) when the device's times cannot be read. */

/* A reference's limit a call: references may be slow (plain loops in
 * double), so ten times a kernel's unless set apart (task new's check). */
static double ref_timeout(const struct ao_profiler *p)
{
    return p->o.ref_timeout_s > 0 ? p->o.ref_timeout_s : p->o.timeout_s * 10;
}

static void launch_overhead(struct ao_profiler *p, struct pool *pl, struct ao_job *j,
                            const long long *host, const long long *dev)
{
    long long gap[NOMINAL_CHECKS];
    struct ao_stats s;
    char e[AO_ERRLEN];

    for (int k = 0; k < NOMINAL_CHECKS; k++) {
        double d = (double)dev[k];
        int bad = 0;
        /* a runner's own clock (runner_clock), else the device's profiles */
        if (!p->tg->runner_clock)
            bad = p->tg->device_time(j->dir, k, &d, NULL, e, sizeof e) != 0;
        else if ((bad = dev[k] <= 0))
            snprintf(e, sizeof e, "the runner reported none");
        if (bad) {
            ao_warn("the reference's device time: %s; %s for '%s'", e,
                    p->tg->runner_clock ? "the host's clock times the kernels"
                                        : "device times go unchecked against the host's clock",
                    pl->task.name);
            return;
        }
        gap[k] = host[k] > (long long)d ? host[k] - (long long)d : 0;
    }
    ao_stats_of(gap, NOMINAL_CHECKS, &s);
    pl->launch_ns = s.median >= 1 ? (long long)s.median : 1;
    ao_info("launch overhead on '%s' (the reference's host time less its device's): %.1f us",
            pl->task.name, pl->launch_ns / 1e3);
}

/* The reference built into its job's runner, or the one built before
 * under the same basis (the target's compiler and flags, the harness, the
 * source): trusted code, the same on every profile of the task, and nvcc
 * takes over a second over it.  As prof_compile_job. */
static int compile_reference(struct ao_profiler *p, struct pool *pl, struct ao_job *j,
                             const char *src, char **diag, long long *cns, char *err, size_t errlen)
{
    struct ao_buf b = {0};
    char runner[800], name[200], cmd[1024];
    int rc;

    if (!p->tg->basis)
        return prof_compile_job(p, j, diag, cns, err, errlen);
    p->tg->build_command(cmd, sizeof cmd);
    ao_buf_printf(&b, "reference of %s\nbuild %s\n", pl->task.name, cmd);
    p->tg->basis(&b);
    prof_harness_basis(p, j->dir, &b);
    ao_buf_printf(&b, "source\n%s", src);
    if (ao_name(runner, sizeof runner, "%s/runner", j->dir) == 0 &&
        ao_name(name, sizeof name, "%s-reference-%s", p->tg->name, pl->task.name) == 0 &&
        ao_target_kept_get(name, &b, runner, 0755) == 0) {
        ao_buf_release(&b);
        return 0;
    }
    rc = prof_compile_job(p, j, diag, cns, err, errlen);
    if (rc == 0 && !j->status && runner[0] && name[0]) /* (a name refused: built, not kept) */
        ao_target_kept_put(name, &b, runner);
    ao_buf_release(&b);
    return rc;
}

static int compute_references(struct ao_profiler *p, struct pool *pl, char *err, size_t errlen)
{
    long long host[NOMINAL_CHECKS] = {0}, dev[NOMINAL_CHECKS] = {0};
    char path[900];
    char *src = NULL, *diag = NULL;
    struct ao_job j;
    long long cns = 0;
    int rc = -1;

    memset(&j, 0, sizeof j);
    if (ao_path(path, sizeof path, pl->task.dir, p->tg->reference_file, err, errlen) < 0 ||
        !(src = ao_read_file(path, NULL, err, errlen)))
        return -1;
    if (prof_prepare_job(p, pl, &j, src, err, errlen) < 0 ||
        prof_start_job(p, &j, &pl->task, pl->dims, ref_timeout(p), 1, err, errlen) < 0 ||
        compile_reference(p, pl, &j, src, &diag, &cns, err, errlen) < 0)
        goto out;
    if (j.status) {
        snprintf(err, errlen, "the reference of '%s' does not build: %s: %.500s", pl->task.name,
                 j.reason, diag ? diag : "");
        goto out;
    }
    if (ao_job_release(&j, err, errlen) < 0)
        goto out;
    for (int s = 0; s < pl->nchecks; s++) {
        struct dataset *d = &pl->check[s];
        long long e;
        ao_job_place(&j, d->dims);
        /* a device that times itself profiles the nominal calls: their
         * host time less the device's is the launch overhead that device
         * times of kernels are held against (prof_device_unbelievable) */
        j.hdr->profile = p->tg->device_time && s < NOMINAL_CHECKS;
        if ((e = prof_job_call(&j, d->dims, d->t, NULL, 0x7fc00000u, d->t + pl->task.ninputs,
                               "computing the reference")) < 0) {
            snprintf(err, errlen, "the reference of '%s' failed: %s", pl->task.name, j.reason);
            goto out;
        }
        /* the fastest: load slows some calls, and the number of timed
         * calls checked (prof_sample_size) must not fall with load */
        if (s < NOMINAL_CHECKS && e > 0 && (pl->ref_ns == 0 || e < pl->ref_ns))
            pl->ref_ns = e;
        if (s < NOMINAL_CHECKS) {
            host[s] = j.raw_ns;
            dev[s] = (long long)__atomic_load_n(&j.hdr->device_ns, __ATOMIC_RELAXED);
        }
        for (int o = 0; o < pl->task.noutputs; o++) {
            float *r = d->t[pl->task.ninputs + o];
            for (size_t k = 0; k < ao_task_elems(&pl->task, pl->task.ninputs + o, d->dims); k++)
                if (!isfinite(r[k])) {
                    snprintf(err, errlen, "the reference of '%s' gives a non-finite output",
                             pl->task.name);
                    goto out;
                }
        }
    }
    j.hdr->profile = 0;
    if ((p->tg->device_time || p->tg->runner_clock) && pl->nchecks >= NOMINAL_CHECKS)
        launch_overhead(p, pl, &j, host, dev);
    /* the built reference stays for the timed calls' checks (ref_outputs) */
    snprintf(pl->refdir, sizeof pl->refdir, "%s", j.dir);
    ao_job_end(&j);
    j.dir[0] = '\0';
    rc = 0;
out:
    ao_job_free(&j);
    free(src);
    free(diag);
    return rc;
}

/* The pool's reference process down, its region unmapped. */
static void ref_down(struct pool *pl)
{
    if (!pl->ref_up)
        return;
    ao_job_stop(&pl->ref, "after its last call");
    ao_job_end(&pl->ref); /* the directory is the pool's */
    pl->ref_up = 0;
}

/* The pool's reference process up: kept from an earlier profile, or
 * started now (another pool's taken down first: the reference's cgroup
 * slot holds one).  0, or -1 + err. */
static int ref_up(struct ao_profiler *p, struct pool *pl, char *err, size_t errlen)
{
    struct ao_job *j = &pl->ref;

    if (pl->ref_up && j->started && !j->status)
        return 0;
    ref_down(pl);
    for (struct pool *o = p->pools; o; o = o->next)
        if (o != pl)
            ref_down(o);
    memset(j, 0, sizeof *j);
    snprintf(j->dir, sizeof j->dir, "%s", pl->refdir);
    /* the kernels' jobs are alive: bmm's 1 GB outputs at paper, charged to
     * their cgroup, left this one no room in it (issue 57) */
    j->second = 2;
    pl->ref_up = 1;
    pl->ref_starts++;
    if (prof_start_job(p, j, &pl->task, pl->dims, ref_timeout(p), 0, err, errlen) < 0 ||
        (j->sb.sync_fd >= 0 && ao_job_release(j, err, errlen) < 0)) {
        ref_down(pl);
        return -1;
    }
    return 0;
}

int prof_ref_call(struct ao_profiler *p, struct pool *pl, struct dataset *d, char *err, size_t errlen)
{
    const struct ao_task *t = &pl->task;
    int kept = pl->ref_up;

    for (;;) {
        if (ref_up(p, pl, err, errlen) < 0)
            return -1;
        ao_job_place(&pl->ref, d->dims);
        if (prof_job_call(&pl->ref, d->dims, d->t, NULL, 0x7fc00000u, d->t + t->ninputs,
                          "checking a timed call at secret positions") >= 0)
            return 0;
        snprintf(err, errlen, "the reference of '%s' failed on a timed call's positions: %s", t->name,
                 pl->ref.reason);
        ref_down(pl);
        if (!kept) /* a kept one may have met its CPU limit since: one fresh try */
            return -1;
        kept = 0;
    }
}

int prof_ref_outputs(struct ao_profiler *p, struct pool *pl, int n,
                     void (*draw)(void *ctx, int k, struct dataset *in),
                     int (*each)(void *ctx, int k, const struct dataset *ref), void *ctx,
                     char *err, size_t errlen)
{
    const struct ao_task *t = &pl->task;
    struct dataset ref;
    int rc = -1, kept = pl->ref_up;

    memset(&ref, 0, sizeof ref);
    /* one set of inputs and outputs, each set's drawn and read into it in
     * turn and judged at once: a buffer per set was 117 MB each for silu,
     * faulted in afresh */
    if (prof_dataset_alloc(t, &ref, pl->dims, PROF_INPUTS | PROF_OUTPUTS) < 0) {
        snprintf(err, errlen, "out of memory for the timed checks");
        goto out;
    }
    if (ref_up(p, pl, err, errlen) < 0)
        goto out;
    for (int k = 0; k < n; k++) {
        draw(ctx, k, &ref);
        ao_job_place(&pl->ref, pl->dims);
        if (prof_job_call(&pl->ref, pl->dims, ref.t, NULL, 0x7fc00000u, ref.t + t->ninputs,
                          "checking a timed call") < 0) {
            /* a kept process may have met its CPU limit or been killed
             * since: one fresh try before the reference is blamed */
            snprintf(err, errlen, "the reference of '%s' failed on a timed call's inputs: %s",
                     t->name, pl->ref.reason);
            ref_down(pl);
            if (!kept || ref_up(p, pl, err, errlen) < 0)
                goto out;
            kept = 0;
            k--;
            continue;
        }
        if (each(ctx, k, &ref) < 0)
            break; /* a verdict: the sets after it change nothing */
    }
    rc = 0;
out:
    /* a device that times itself runs its own profile tool in the
     * reference's slot (trn): nothing kept there between profiles */
    if (rc < 0 || p->tg->device_time)
        ref_down(pl);
    prof_dataset_free(&ref);
    return rc;
}

/* The target's trusted part of the task's runner, in a directory of its own. */
int prof_build_harness(struct ao_profiler *p, struct pool *pl, char *err, size_t errlen)
{
    if (ao_name(pl->harness, sizeof pl->harness, "%s/harness-%s-%u", p->root, pl->task.name, p->seq++) < 0)
        return ao_errf(err, errlen, "the profiler's directory '%s' is too long", p->root);
    if (ao_mkdirs(pl->harness, 0755) < 0) {
        snprintf(err, errlen, "cannot create '%s': %s", pl->harness, strerror(errno));
        return -1;
    }
    return p->tg->harness(&pl->task, pl->harness, err, errlen);
}

void prof_pool_free(struct pool *pl)
{
    ref_down(pl);
    for (int s = 0; s < NOMINAL_CHECKS + 1; s++)
        prof_dataset_free(&pl->check[s]);
    for (int c = 0; c < PASSED_MAX; c++)
        cJSON_Delete(pl->passed[c].errors);
    if (pl->refdir[0])
        ao_rmtree(pl->refdir);
    if (pl->harness[0])
        ao_rmtree(pl->harness);
    free(pl);
}

/* An unannounced shape: each free size shrunk to a random smaller value,
 * keeping the task's constraints (or the nominal shape if draws break them). */
static void extra_shape(struct ao_profiler *p, const struct ao_task *t, const long long *dims,
                        long long *x)
{
    char err[AO_ERRLEN];

    for (int tries = 0; tries < 20; tries++) {
        for (int i = 0; i < t->ndims; i++) {
            long long m = t->dim_multiple[i], lo = dims[i] / 2, hi = dims[i] - 1, v;
            x[i] = dims[i];
            if (t->dim_fixed[i] || dims[i] < 2 * m || hi < lo)
                continue;
            v = lo + (long long)(ao_rng_next(&p->choice) % (unsigned long long)(hi - lo + 1));
            v = v / m * m;
            x[i] = v >= m ? v : m;
        }
        if (ao_task_check_dims(t, x, err, sizeof err) == 0)
            return;
    }
    memcpy(x, dims, sizeof(long long) * AO_MAX_DIMS);
}

/* What the pools may hold in all: a quarter of the machine's memory, at
 * least POOLS_MIN_BYTES.  A run over all fourteen tasks at the cpu size
 * needs ~3.6 GB of them, and visits the tasks in turn: past the cap, least
 * recently used is always the next one asked for, so every profile built
 * its task's check sets and references again (1-5 s each, issue 66). */
static size_t pools_cap(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
    size_t quarter = pages > 0 && size > 0 ? (size_t)pages * (size_t)size / 4 : 0;

    return quarter > POOLS_MIN_BYTES ? quarter : POOLS_MIN_BYTES;
}

/* Drop the least recently used pools until `need` more bytes fit. */
static void pools_trim(struct ao_profiler *p, size_t need)
{
    static size_t cap;

    if (!cap)
        cap = pools_cap();
    for (;;) {
        struct pool **pp = &p->pools, **last = NULL;
        size_t total = need;
        for (; *pp; pp = &(*pp)->next) {
            total += (*pp)->bytes;
            last = pp;
        }
        if (total <= cap || !last)
            return;
        {
            struct pool *old = *last;
            *last = NULL;
            prof_pool_free(old);
        }
    }
}

struct pool *prof_pool_get(struct ao_profiler *p, const struct ao_task *t, const char *size,
                           char *err, size_t errlen)
{
    char key[700];
    struct pool *pl;
    long long xdims[AO_MAX_DIMS];

    if (ao_name(key, sizeof key, "%s|%s|%s", t->dir, t->name, size) < 0)
        return ao_errf(err, errlen, "size class '%.40s' is too long", size), NULL;
    for (struct pool **pp = &p->pools; (pl = *pp); pp = &pl->next)
        if (strcmp(pl->key, key) == 0) {
            *pp = pl->next; /* most recently used first */
            pl->next = p->pools;
            p->pools = pl;
            return pl;
        }
    pl = ao_calloc(1, sizeof *pl);
    snprintf(pl->key, sizeof pl->key, "%s", key);
    pl->task = *t;
    if (ao_task_size(t, size, pl->dims, err, errlen) < 0)
        goto fail;
    extra_shape(p, t, pl->dims, xdims);
    pl->bytes = (NOMINAL_CHECKS + 1) * ao_job_bytes(t, pl->dims);
    pools_trim(p, pl->bytes);
    pl->nchecks = NOMINAL_CHECKS + (memcmp(xdims, pl->dims, sizeof xdims) != 0);
    for (int s = 0; s < pl->nchecks; s++) {
        const long long *d = s < NOMINAL_CHECKS ? pl->dims : xdims;
        int stress = s == STRESS_CHECK && t->has_stress;
        if (prof_dataset_alloc(t, &pl->check[s], d, PROF_INPUTS | PROF_OUTPUTS) < 0)
            goto oom;
        for (int i = 0; i < t->ninputs; i++) {
            size_t n = ao_task_elems(t, i, d);
            prof_fill_wide(&p->rng, stress ? &t->t[i].stress : &t->t[i].dist, pl->check[s].t[i], n,
                           prof_timed_parts(p->tg, p->draw_parts, n));
        }
    }
    if (prof_build_harness(p, pl, err, errlen) < 0 || compute_references(p, pl, err, errlen) < 0)
        goto fail;
    pl->next = p->pools;
    p->pools = pl;
    return pl;
oom:
    snprintf(err, errlen, "out of memory for the inputs of '%s' at size '%s'", t->name, size);
fail:
    prof_pool_free(pl);
    return NULL;
}
