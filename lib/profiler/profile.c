/* profile.c - compile, contain, check and time one kernel: the policy that
 * is the same for every target
 *
 * The kernel is built in a sandbox and checked by its target's rules
 * (target.h), then started in a fresh sandbox that shares only a memory
 * region with us (job.h).  We choose every input, poison every output,
 * start every call and stop the clock; the runner just calls `kernel`, and
 * the target moves the tensors to its device and back around each call.
 * References come from the task's trusted reference for the target, run
 * the same way in its own process.  See docs/MEASUREMENT.md and docs/THREATS.md. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/alloc.h"
#include "core/log.h"
#include "core/rng.h"
#include "core/tokens.h"
#include "core/util.h"
#include "measure/job.h"
#include "measure/measurement.h"
#include "measure/probe.h"
#include "profiler/profile.h"
#include "profiler/profiler_int.h"
#include "measure/sandbox.h"
#include "measure/stats.h"
#include "targets/target.h"
#include "wire/verdict.h"

void prof_set_str(char **dst, const char *s)
{
    free(*dst);
    *dst = s ? ao_strdup(s) : NULL;
}

static void layers_json(struct ao_measurement *r, const char *layers, int seccomp)
{
    char buf[600];
    cJSON *a = cJSON_CreateArray();
    snprintf(buf, sizeof buf, "%s%s", layers, seccomp ? ",seccomp" : "");
    for (char *s = strtok(buf, ","); s; s = strtok(NULL, ","))
        cJSON_AddItemToArray(a, cJSON_CreateString(s));
    cJSON_Delete(r->sandbox);
    r->sandbox = a;
}

/* How busy the machine is, as known code finds it: the probe timed now,
 * against the calibration's where it has one.  Only after a kernel that
 * was timed: ~5 ms, and nothing to say of a failure. */
static void set_machine(struct ao_measurement *r, const struct ao_calib *c)
{
    struct ao_probe pr;
    if (ao_probe_run(&pr) < 0)
        return;
    r->machine_spread = pr.spread;
    if (c && c->probe_mean_ns > 0) {
        r->machine_slowdown = pr.mean_ns / c->probe_mean_ns;
        r->machine_spread_calibrated = c->probe_spread;
    }
}

/* The result's verdict from the job's: status, reason, the errors of the
 * checks (taken from *errors when there are any), the wall time, how busy
 * the machine was. */
void prof_set_verdict(struct ao_measurement *r, const struct ao_job *j, const struct ao_task *t,
                      const struct ao_calib *c, double max_err, cJSON **errors, long long t0)
{
    r->verdict = j->status;
    if (j->reason[0])
        prof_set_str(&r->reason, j->reason);
    r->tolerance = t->tolerance;
    {
        double load[1];
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        if (getloadavg(load, 1) == 1 && cpus > 0)
            r->machine_load = load[0] / (double)cpus;
    }
    if (j->status == AO_V_OK)
        set_machine(r, c);
    if (cJSON_GetArraySize(*errors) > 0) {
        r->max_rel_l2 = max_err;
        cJSON_Delete(r->rel_l2);
        r->rel_l2 = *errors;
        *errors = NULL;
    }
    r->wall_ns = ao_now_ns() - t0;
}

/* The device's profile as the result carries it: where the latency came
 * from, how many executions, the host's clock beside it, the counters. */
static void device_profile_json(struct ao_measurement *r, struct timed *m)
{
    cJSON *o = m->profile;

    if (!o)
        return;
    m->profile = NULL;
    cJSON_AddNumberToObject(o, "executions", m->views);
    cJSON_AddNumberToObject(o, "profiled", m->profiled);
    cJSON_AddNumberToObject(o, "host_median_ns", m->host.median);
    cJSON_AddStringToObject(o, "latency", "the median of the executions' on-device total_time");
    cJSON_Delete(r->device_profile);
    r->device_profile = o;
}

/* Which clock gave the latency of a runner that times its device
 * (prof_runner_clock): the device's records, its events, or ours where
 * the runner gave none; how many calls our clock raised, and the allowance
 * (the reference's launch overhead) it was held to. */
static void runner_clock_json(cJSON *timing, const struct timed *m)
{
    static const char *const names[] = {"host", "device (CUDA events around the call)",
                                        "device (CUPTI records of the call's work)",
                                        "device (CUDA events around the call's work, held behind a gate)"};

    cJSON_AddStringToObject(timing, "clock", names[m->clock >= 0 && m->clock <= 3 ? m->clock : 0]);
    if (!m->clock)
        return;
    cJSON_AddNumberToObject(timing, "clock_raised_calls", m->raised);
    if (m->events.median > 0) /* CUDA events around the same calls: the launch is in them */
        cJSON_AddNumberToObject(timing, "events_median_ns", m->events.median);
    cJSON_AddNumberToObject(timing, "launch_ns", (double)m->launch_ns);
    if (m->empty_dev_ns > 0) /* the clock's own cost, taken off every call's device time */
        cJSON_AddNumberToObject(timing, "empty_call_device_ns", (double)m->empty_dev_ns);
}

/* A failure's class and code, where the target reads its tools' words. */
static void failure_json(const struct ao_profiler *p, struct ao_measurement *r)
{
    struct ao_buf b = {0};
    char code[40];
    const char *cls;
    cJSON *o;

    if (!p->tg->failure_class || r->verdict == AO_V_OK || r->verdict == AO_V_INTERNAL_ERROR)
        return;
    ao_buf_printf(&b, "%s\n%s", r->reason ? r->reason : "", r->diagnostics ? r->diagnostics : "");
    cls = p->tg->failure_class(b.data ? b.data : "", code, sizeof code);
    ao_buf_release(&b);
    if (r->verdict == AO_V_TIMEOUT)
        cls = "timeout";
    o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "class", cls);
    if (code[0])
        cJSON_AddStringToObject(o, "code", code);
    cJSON_Delete(r->failure);
    r->failure = o;
}

/* One full measurement in a fresh process. */
static int run_once(struct ao_profiler *p, struct pool *pl, struct ao_job *j,
                    struct ao_measurement *r, cJSON *errors, double *max_err,
                    struct timed *m, char *err, size_t errlen)
{
    if (!j->started && prof_start_job(p, j, &pl->task, pl->dims, p->o.timeout_s, 0, err, errlen) < 0)
        return -1;
    if (j->sb.sync_fd >= 0 && ao_job_release(j, err, errlen) < 0)
        return -1;
    layers_json(r, j->sb.layers, 1);
    if (prof_measure(p, pl, j, errors, max_err, m, err, errlen) < 0 && !j->status)
        return -1;
    ao_job_stop(j, "after its last call");
    return 0;
}

/* The machine's peaks measured now (kept for FRESH_CALIB_S), or NULL + err. */
static const struct ao_calib *fresh_calib(struct ao_profiler *p, char *err, size_t errlen)
{
    if (p->fresh_at && ao_now_ns() - p->fresh_at < FRESH_CALIB_S * 1000000000LL)
        return &p->fresh;
    if (p->tg->calibrate(NULL, p->o.bw_mib, &p->fresh, err, errlen) < 0)
        return NULL;
    p->fresh_at = ao_now_ns();
    if (p->o.calib_path) {
        /* peaks are maxima: what this measurement found higher is kept for
         * the next start (best effort: the verdict stands without it) */
        struct ao_calib keep = p->fresh;
        char e[AO_ERRLEN];
        if (ao_calib_keep_best(p->o.calib_path, keep.cpu_model, keep.cflags, &keep) &&
            ao_calib_store(p->o.calib_path, p->tg->name, &keep, e, sizeof e) < 0)
            ao_warn("the fresh measurement of the machine was not kept: %s", e);
    }
    return &p->fresh;
}

/* % of peak at median_ns: t_min / median, at most 1.  A kernel let through
 * under t_min (within the roofline's slack and the machine's spread, see
 * roofline_hold) is at the peak as well as this machine's peaks can be
 * told: it reads 100%, not a figure no honest kernel can reach. */
static double peak_fraction(double t_min_ns, double median_ns)
{
    return fmin(1, t_min_ns / median_ns);
}

/* The roofline: r gets the time the machine's peaks allow (t_min_ns, its
 * three terms and what binds) and the % of peak at median_ns.  A fastest
 * call under it by more than the wake-up uncertainty could be wrong, or
 * the calibration was taken on a busy machine: it is held against a fresh
 * measurement of the machine first, and refused (j->status) only if it
 * still beats that by more than the uncertainty of both.  Without a
 * calibration nothing is held.  0, or -1 + err. */
int prof_roofline_hold(struct ao_profiler *p, const struct ao_task *t, const struct pool *pl, double min_ns,
                       long long wake_u_ns, double median_ns, struct ao_measurement *r, struct ao_job *j,
                       int *rechecked, char *err, size_t errlen)
{
    const struct ao_calib *c = p->o.calib, *f;
    double mm, vec, bytes, tb, tm, tv, t2, u;
    char e[AO_ERRLEN];

    if (!c || ao_task_work(t, pl->dims, &mm, &vec, &bytes, e, sizeof e) < 0)
        return 0;
    tb = bytes / ao_calib_bw_for(c, bytes), tm = mm / c->fma_gflops, tv = vec / c->vec_gflops;
    r->t_min_ns = fmax(tb, fmax(tm, tv));
    r->t_memory_ns = tb; /* the three terms, so a model sees which resource is near */
    r->memory_bw_gbs = ao_calib_bw_for(c, bytes); /* and which level's bandwidth the first assumes */
    r->t_matmul_ns = tm;
    r->t_elementwise_ns = tv;
    prof_set_str(&r->bound, r->t_min_ns == tb ? "memory" : r->t_min_ns == tm ? "matmul" : "elementwise");
    prof_set_str(&r->calibration, c->id);
    r->pct_of_peak = peak_fraction(r->t_min_ns, median_ns);
    if (min_ns + (double)wake_u_ns >= r->t_min_ns * (1 - ROOFLINE_SLACK))
        return 0;
    if (!(f = fresh_calib(p, err, errlen)))
        return -1;
    t2 = fmax(bytes / fmax(ao_calib_bw_for(c, bytes), ao_calib_bw_for(f, bytes)),
              fmax(mm / fmax(c->fma_gflops, f->fma_gflops), vec / fmax(c->vec_gflops, f->vec_gflops)));
    u = ROOFLINE_SLACK + fmax(f->bw_spread, fmax(f->fma_spread, f->vec_spread));
    if (min_ns + (double)wake_u_ns < t2 * (1 - u)) {
        j->status = AO_V_REJECTED;
        snprintf(j->reason, sizeof j->reason, "a call took %.0f ns (give or take %lld ns), under the roofline "
                 "minimum of %.0f ns (%s bound) by more than %.0f%%, also against a fresh measurement of "
                 "this machine (%.1f GB/s, %.0f GFLOP/s FMA): impossible here, so not measured honestly",
                 min_ns, wake_u_ns, t2, r->bound, 100 * u, f->bw_gbs, f->fma_gflops);
        return 0;
    }
    /* honest after all: the machine is faster than its stored figures */
    ao_warn("a kernel beat the stored roofline of '%s' (%.0f ns); a fresh measurement of the machine "
            "allows %.0f ns: the stored calibration is low (accelopt calibrate measures it again)",
            t->name, r->t_min_ns, t2);
    r->t_min_ns = fmin(r->t_min_ns, t2);
    r->pct_of_peak = peak_fraction(r->t_min_ns, median_ns);
    *rechecked = 1;
    return 0;
}

/* The metrics pass (target.h device_metrics): one more process of the
 * kernel, its runner under CUPTI's records (which slow every launch, so
 * never the timed process), one call on inputs of no one's, untimed and
 * unchecked; r->device_profile gets the counters a planner is shown.
 * Best effort: a pass that fails leaves the verdict as it was, and says
 * why.  Its wall time. */
long long prof_metrics_pass(struct ao_profiler *p, struct pool *pl, struct ao_job *kj,
                            struct ao_measurement *r, double latency_ns)
{
    struct ao_job j;
    struct ao_rng inputs;
    char e[AO_ERRLEN] = "";
    double mm = 0, vec = 0, bytes = 0;
    long long t0 = ao_now_ns();
    cJSON *c = NULL, *o = NULL;

    if (!p->tg->device_metrics || ao_task_work(&pl->task, pl->dims, &mm, &vec, &bytes, e, sizeof e) < 0)
        return 0;
    memset(&j, 0, sizeof j);
    snprintf(j.dir, sizeof j.dir, "%s", kj->dir); /* the runner built there */
    j.metrics = 1;
    /* a cgroup of its own: the kernel's job's pages (its region, still
     * mapped here) stay charged to the first slot, and at paper that left
     * bmm and bmm_softmax no room (an H200, issue 71) */
    j.second = 1;
    if (ao_random_bytes(inputs.s, sizeof inputs.s) < 0) { /* inputs that tell nothing of the others */
        snprintf(e, sizeof e, "getrandom failed");
        goto out;
    }
    if (prof_start_job(p, &j, &pl->task, pl->dims, p->o.timeout_s, 0, e, sizeof e) < 0 ||
        (j.sb.sync_fd >= 0 && ao_job_release(&j, e, sizeof e) < 0))
        goto out;
    ao_job_place(&j, pl->dims);
    if (prof_job_call(&j, pl->dims, NULL, &inputs, 0x7fc00000u, NULL, "in the metrics pass") < 0) {
        snprintf(e, sizeof e, "%s", j.reason[0] ? j.reason : "the call failed");
        goto out;
    }
    /* the hardware counters, where the runner could set their profiler up:
     * the call again, once per pass.  Best effort: the records above stay
     * in the header even if this process dies */
    if (j.hdr->hw_status == AO_RUN_HW_READY &&
        ao_job_run(&j, AO_RUN_CMD_COUNTERS, 1, "reading the GPU's counters") < 0)
        ao_warn("no hardware counters for the planner: %s", j.reason[0] ? j.reason : "the call failed");
    else if (j.hdr->hw_status < 0)
        ao_warn("no hardware counters for the planner: CUPTI's range profiler failed at step %d "
                "(nkibench/harness/cuda/hw_counters.cuh)", (int)j.hdr->hw_status);
    if (!(c = p->tg->device_metrics(j.hdr, latency_ns, bytes, mm + vec))) {
        snprintf(e, sizeof e, "the call left no kernel record (CUPTI did not start)");
        goto out;
    }
    if ((o = cJSON_CreateObject()) &&
        cJSON_AddStringToObject(o, "source", "CUPTI activity records of one untimed call in a process "
                                "of its own (the kernel's process: reported, never judged)")) {
        cJSON_AddItemToObject(o, "counters", c);
        c = NULL;
        cJSON_Delete(r->device_profile);
        r->device_profile = o;
        o = NULL;
    }
out:
    if (e[0])
        ao_warn("no device counters for the planner: %s", e);
    cJSON_Delete(c);
    cJSON_Delete(o);
    if (j.started)
        ao_job_stop(&j, "after the metrics pass");
    ao_job_end(&j); /* the directory is the kernel's job's */
    return ao_now_ns() - t0;
}

/* A big jump over the parent is measured again, cold, in a new process:
 * the slower of the two stands, with its own wake-up.  0 (j->status set
 * where the second one failed), or -1 + err. */
static int measure_again(struct ao_profiler *p, struct pool *pl, struct ao_job *j, struct ao_measurement *r,
                         cJSON *errors, double *max_err, struct timed *m, struct timed *m2, char *err,
                         size_t errlen)
{
    struct ao_job j2;
    int rc;

    memset(&j2, 0, sizeof j2);
    snprintf(j2.dir, sizeof j2.dir, "%s", j->dir);
    rc = run_once(p, pl, &j2, r, errors, max_err, m2, err, errlen);
    j->inputs_ns += j2.inputs_ns;
    j->inputs_copied += j2.inputs_copied;
    j->to_device_ns += j2.to_device_ns;
    j->from_device_ns += j2.from_device_ns;
    ao_job_end(&j2); /* its directory is j's, removed with it */
    if (rc < 0)
        return -1;
    if (j2.status) {
        j->status = j2.status;
        ao_errf(j->reason, sizeof j->reason, "on a second, fresh measurement: %s", j2.reason);
        return 0;
    }
    if (m2->st.median > m->st.median) { /* the slower one, with its own wake-up */
        cJSON *keep = m->profile;
        m->st = m2->st;
        m->device = m2->device;
        m->events = m2->events;
        m->wake_ns = m2->wake_ns;
        m->wake_u_ns = m2->wake_u_ns;
        m->host = m2->host;
        m->views = m2->views;
        m->profiled = m2->profiled;
        m->clock = m2->clock;
        m->raised = m2->raised;
        m->launch_ns = m2->launch_ns;
        m->profile = m2->profile;
        m2->profile = keep;
    }
    m->kernel_ns += m2->kernel_ns;
    return 0;
}

/* What a profile cost, and where (the result's "timing"). */
struct costs {
    long long compile_ns, pool_ns, metrics_ns;
    int ref_starts, rechecked;
};

static cJSON *timing_json(const struct ao_profiler *p, const struct ao_task *t, const struct ao_measurement *r,
                          const struct ao_job *j, const struct pool *pl, const struct timed *m,
                          const struct timed *m2, const struct costs *c)
{
    cJSON *timing = cJSON_CreateObject();

    if (!timing)
        return NULL;
    cJSON_AddNumberToObject(timing, "compile_ns", (double)c->compile_ns);
    cJSON_AddNumberToObject(timing, "kernel_ns", (double)(m->kernel_ns + m2->kernel_ns));
    cJSON_AddNumberToObject(timing, "measurements", m2->st.n > 0 ? 2 : m->st.n > 0 ? 1 : 0);
    cJSON_AddNumberToObject(timing, "wake_ns", (double)m->wake_ns);
    cJSON_AddNumberToObject(timing, "wake_uncertainty_ns", (double)m->wake_u_ns);
    prof_spots_json(&m->spots, t, timing, NULL);
    cJSON_AddNumberToObject(timing, "checks_ns", (double)(m->check_ns + m2->check_ns));
    if (j->checks_known) /* its check sets passed here before: not run again */
        cJSON_AddNumberToObject(timing, "checks_known", 1);
    if (m->voided + m2->voided) /* a busy machine: the profiler was away at their `done` */
        cJSON_AddNumberToObject(timing, "calls_voided", m->voided + m2->voided);
    /* where the rest went: the check sets drawn and their references
     * computed (0 where an earlier profile of the task at that size made
     * them), and the trusted side of every call */
    cJSON_AddNumberToObject(timing, "references_ns", (double)c->pool_ns);
    cJSON_AddNumberToObject(timing, "inputs_ns", (double)j->inputs_ns);
    cJSON_AddNumberToObject(timing, "inputs_copied_calls", j->inputs_copied);
    if (c->metrics_ns > 0) /* the metrics pass: a process of its own, one untimed call */
        cJSON_AddNumberToObject(timing, "metrics_ns", (double)c->metrics_ns);
    if (pl) /* reference processes started for the checks (0: the task's kept one) */
        cJSON_AddNumberToObject(timing, "reference_starts", pl->ref_starts - c->ref_starts);
    if (p->tg->after_call) {
        cJSON_AddNumberToObject(timing, "to_device_ns", (double)j->to_device_ns);
        cJSON_AddNumberToObject(timing, "from_device_ns", (double)j->from_device_ns);
    }
    if (c->rechecked) /* it beat the stored roofline: the fresh machine figures allowed it */
        cJSON_AddNumberToObject(timing, "roofline_rechecked_bw_gbs", p->fresh.bw_gbs);
    if (m->device.median > 0) /* the runner's own figure, as it reported it */
        cJSON_AddNumberToObject(timing, "runner_reported_median_ns", m->device.median);
    if (p->tg->runner_clock && m->st.n > 0)
        runner_clock_json(timing, m);
    if (m->views > 0 || m->clock) /* the profiler's clock, where the device's is the latency */
        cJSON_AddNumberToObject(timing, "host_median_ns", m->host.median);
    cJSON_AddNumberToObject(timing, "overhead_ns",
                            (double)(r->wall_ns - c->compile_ns - m->kernel_ns - m2->kernel_ns));
    return timing;
}

int ao_profiler_run(struct ao_profiler *p, const struct ao_task *t, const char *size,
                    const char *source, double parent_ns, struct ao_measurement *r, char *err,
                    size_t errlen)
{
    struct pool *pl = NULL;
    struct ao_job j;
    struct timed m, m2;
    struct costs c = {0};
    char reason[512], *diag = NULL;
    long long t0 = ao_now_ns();
    double max_err = 0;
    cJSON *errors = cJSON_CreateArray(), *timing;
    int rc = -1;

    memset(&j, 0, sizeof j);
    memset(&m, 0, sizeof m);
    memset(&m2, 0, sizeof m2);
    if (!errors)
        goto fail;
    if (prof_static_check(source, reason, sizeof reason)) {
        j.status = AO_V_REJECTED;
        snprintf(j.reason, sizeof j.reason, "%s", reason);
        goto verdict;
    }
    c.pool_ns = ao_now_ns();
    if (!(pl = prof_pool_get(p, t, size, err, errlen)))
        goto fail;
    c.pool_ns = ao_now_ns() - c.pool_ns;
    c.ref_starts = pl->ref_starts;
    if (prof_prepare_job(p, pl, &j, source, err, errlen) < 0 ||
        prof_start_job(p, &j, &pl->task, pl->dims, p->o.timeout_s, 1, err, errlen) < 0 ||
        prof_compile_job(p, &j, &diag, &c.compile_ns, err, errlen) < 0)
        goto fail;
    if (diag)
        prof_set_str(&r->diagnostics, diag);
    if (j.status)
        goto verdict;
    if (run_once(p, pl, &j, r, errors, &max_err, &m, err, errlen) < 0)
        goto fail;
    prof_spots_json(&m.spots, t, NULL, errors);
    if (j.status)
        goto verdict;
    if (isfinite(parent_ns) && parent_ns / m.st.median > 10 &&
        measure_again(p, pl, &j, r, errors, &max_err, &m, &m2, err, errlen) < 0)
        goto fail;
    if (j.status)
        goto verdict;
    r->latency_ns = m.st.median;
    r->latency_min_ns = m.st.min;
    device_profile_json(r, &m);
    r->spread = m.st.spread;
    r->repeats = m.st.n;
    r->steady = m.st.spread <= p->o.target_spread;
    if (prof_roofline_hold(p, t, pl, m.st.min, m.wake_u_ns, m.st.median, r, &j, &c.rechecked, err, errlen) < 0)
        goto fail;
    if (j.status)
        goto verdict;
    j.status = AO_V_OK;
    c.metrics_ns = prof_metrics_pass(p, pl, &j, r, m.st.median);
verdict:
    prof_set_verdict(r, &j, t, p->o.calib, max_err, &errors, t0);
    failure_json(p, r);
    if ((timing = timing_json(p, t, r, &j, pl, &m, &m2, &c))) {
        cJSON_Delete(r->timing);
        r->timing = timing;
    }
    rc = 0;
    goto out;
fail:
    r->verdict = AO_V_INTERNAL_ERROR;
    prof_set_str(&r->reason, err);
out:
    cJSON_Delete(m.profile);
    cJSON_Delete(m2.profile);
    ao_job_free(&j);
    cJSON_Delete(errors);
    free(diag);
    return rc;
}

int ao_profiler_build(struct ao_profiler *p, const struct ao_task *t, const char *source,
                      struct ao_measurement *r, char *err, size_t errlen)
{
    struct pool *pl = p->built;
    struct ao_job j;
    char reason[512], *diag = NULL;
    long long t0 = ao_now_ns(), compile_ns = 0;
    cJSON *timing;
    int rc = -1;

    memset(&j, 0, sizeof j);
    if (pl && (strcmp(pl->task.name, t->name) != 0 || strcmp(pl->task.sha256, t->sha256) != 0)) {
        prof_pool_free(pl);
        pl = p->built = NULL;
    }
    if (!pl) {
        pl = p->built = ao_calloc(1, sizeof *pl);
        pl->task = *t;
        if (prof_build_harness(p, pl, err, errlen) < 0) {
            prof_pool_free(pl);
            p->built = NULL;
            goto fail;
        }
    }
    if (prof_static_check(source, reason, sizeof reason)) {
        j.status = AO_V_REJECTED;
        snprintf(j.reason, sizeof j.reason, "%s", reason);
    } else if (prof_prepare_job(p, pl, &j, source, err, errlen) < 0 ||
               prof_compile_job(p, &j, &diag, &compile_ns, err, errlen) < 0) {
        goto fail;
    }
    if (diag)
        prof_set_str(&r->diagnostics, diag);
    if (!j.status) {
        j.status = AO_V_OK;
        snprintf(j.reason, sizeof j.reason, "built, and passed the %s target's checks of what was "
                 "built; not run (a build only)", p->tg->name);
    }
    r->verdict = j.status;
    prof_set_str(&r->reason, j.reason);
    failure_json(p, r);
    r->wall_ns = ao_now_ns() - t0;
    if ((timing = cJSON_CreateObject())) {
        cJSON_AddNumberToObject(timing, "compile_ns", (double)compile_ns);
        cJSON_Delete(r->timing);
        r->timing = timing;
    }
    rc = 0;
    goto out;
fail:
    r->verdict = AO_V_INTERNAL_ERROR;
    prof_set_str(&r->reason, err);
out:
    ao_job_free(&j);
    free(diag);
    return rc;
}

/* A process's start time (field 22 of /proc/PID/stat), "" if it is gone
 * or a zombie: with its pid, it names the process even once the pid is
 * reused. */
static void start_time(long pid, char *buf, size_t len)
{
    char path[64], *text, *p, e[AO_ERRLEN];
    int field = 2;

    buf[0] = '\0';
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    if (!(text = ao_read_file_max(path, 4096, NULL, e, sizeof e)))
        return;
    /* after the name in parentheses (which may hold anything): " STATE ..." */
    p = strrchr(text, ')');
    if (p && p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X')) {
        free(text);
        return;
    }
    for (; p && *p && field < 22; p++)
        if (*p == ' ')
            field++;
    if (p && field == 22)
        snprintf(buf, len, "%.*s", (int)strcspn(p, " "), p);
    free(text);
}

/* The work directories of profilers that are gone (killed, crashed: they
 * had no chance to remove theirs) under base: each names its owner in
 * `owner` ("PID STARTTIME"); ours, not a link, and no such process now:
 * removed.  One without an owner file (an older profiler's) is left. */
static void sweep_stale(const char *base)
{
    DIR *d = opendir(base);
    struct dirent *de;
    int n = 0;

    while (d && (de = readdir(d))) {
        char dir[PATH_MAX], path[PATH_MAX + 8], e[AO_ERRLEN], now[32], then[32], *owner;
        struct stat st;
        long pid;
        if (strncmp(de->d_name, "accelopt-prof-", 14) != 0 ||
            ao_name(dir, sizeof dir, "%s/%s", base, de->d_name) < 0 || lstat(dir, &st) < 0 ||
            !S_ISDIR(st.st_mode) || st.st_uid != geteuid())
            continue;
        if (ao_path(path, sizeof path, dir, "owner", e, sizeof e) < 0 ||
            !(owner = ao_read_file_max(path, 128, NULL, e, sizeof e)))
            continue;
        if (sscanf(owner, "%ld %31s", &pid, then) == 2 && pid > 0) {
            start_time(pid, now, sizeof now);
            if (strcmp(now, then) != 0 && ao_rmtree(dir) == 0)
                n++;
        }
        free(owner);
    }
    if (d)
        closedir(d);
    if (n)
        ao_info("removed %d work director%s left in '%s' by profilers that are gone", n,
                n == 1 ? "y" : "ies", base);
}

struct ao_profiler *ao_profiler_new(const struct ao_profiler_opts *o, char *err, size_t errlen)
{
    struct ao_profiler *p = ao_calloc(1, sizeof *p);
    const char *base = o->work_root ? o->work_root : "/tmp";

    p->o = *o;
    p->tg = o->target ? o->target : ao_target_default();
    p->draw_parts = prof_draw_parts(o, p->tg);
    /* every path under it must fit its buffer (the job directories, the
     * sandbox's root in each and the mounts in that): refused here, whole,
     * rather than cut or refused kernel by kernel (issue 70) */
    if (strlen(base) > AO_WORK_ROOT_MAX ||
        ao_name(p->root, sizeof p->root, "%s/accelopt-prof-XXXXXX", base) < 0) {
        snprintf(err, errlen, "the work directory '%.60s...' is %zu bytes long: at most %d, so that the "
                 "paths built under it fit", base, strlen(base), AO_WORK_ROOT_MAX);
        free(p);
        return NULL;
    }
    if (ao_mkdirs(base, 0755) < 0 || !mkdtemp(p->root)) {
        snprintf(err, errlen, "cannot create a work directory in '%s': %s", base, strerror(errno));
        free(p);
        return NULL;
    }
    chmod(p->root, 0755); /* the sandbox user must reach its job directory */
    {
        char path[700], owner[64], st[32];
        start_time((long)getpid(), st, sizeof st);
        snprintf(owner, sizeof owner, "%ld %s\n", (long)getpid(), st);
        if (ao_path(path, sizeof path, p->root, "owner", err, errlen) < 0 ||
            ao_write_file(path, owner, strlen(owner), err, errlen) < 0) {
            ao_rmtree(p->root);
            free(p);
            return NULL;
        }
        sweep_stale(base);
    }
    if (ao_sandbox_check_uids(err, errlen) < 0) {
        ao_rmtree(p->root);
        free(p);
        return NULL;
    }
    if (ao_random_bytes(p->rng.s, sizeof p->rng.s) < 0 || ao_random_bytes(p->choice.s, sizeof p->choice.s) < 0 ||
        p->tg->runner_filter(&p->bpf, &p->bpf_len, err, errlen) < 0) {
        if (!err[0])
            snprintf(err, errlen, "getrandom failed: %s", strerror(errno));
        ao_rmtree(p->root);
        free(p);
        return NULL;
    }
    if (p->bpf_len > AO_RUN_BPF_MAX) {
        snprintf(err, errlen, "the seccomp program is too large");
        ao_profiler_free(p);
        return NULL;
    }
    return p;
}

void ao_profiler_free(struct ao_profiler *p)
{
    if (!p)
        return;
    if (p->built)
        prof_pool_free(p->built);
    while (p->pools) {
        struct pool *pl = p->pools;
        p->pools = pl->next;
        prof_pool_free(pl);
    }
    prof_tensors_release();
    ao_rmtree(p->root);
    ao_sandbox_cleanup();
    free(p->bpf);
    free(p);
}

/* What a verdict depends on beyond the kernel and the task: this code's
 * checks (AO_PROFILER_CHECKS, raised whenever a check changes), the runner
 * protocol, and the target's compiler, flags and trusted runner.  Computed
 * once per target. */
static const char *verdict_basis(const struct ao_target *tg)
{
    static struct {
        const struct ao_target *tg;
        char hex[65];
    } done[8];
    struct ao_buf b = {0};
    char path[700], e[AO_ERRLEN];
    size_t i;

    for (i = 0; i < sizeof done / sizeof done[0] && done[i].tg; i++)
        if (done[i].tg == tg)
            return done[i].hex;
    ao_buf_printf(&b, "checks %d\n", AO_PROFILER_CHECKS);
    tg->basis(&b);
    if (ao_path(path, sizeof path, ao_home(), "lib/runner_proto.h", e, sizeof e) == 0)
        ao_target_basis_file(&b, path);
    if (ao_path(path, sizeof path, ao_home(), "nkibench/harness/runner_side.h", e, sizeof e) == 0)
        ao_target_basis_file(&b, path);
    if (i == sizeof done / sizeof done[0])
        i = 0; /* more targets than slots: recompute from then on */
    ao_sha256_hex(b.data ? b.data : "", b.len, done[i].hex);
    done[i].tg = tg;
    ao_buf_release(&b);
    return done[i].hex;
}

void ao_profile_key(const struct ao_target *tg, const struct ao_task *t, const char *size,
                    const char *source, const struct ao_calib *c, char hex[65])
{
    struct ao_buf b = {0};

    if (!tg)
        tg = ao_target_default();
    char tokens[65];

    /* the same tokens are the same kernel: a copy with new comments gets
     * the first one's measurement, not a new draw from the noise */
    ao_token_hash(source, tokens);
    ao_buf_printf(&b, "%s\n%s\n%s\n%s\n%s\n%s\n%s\n", tg->name, t->name, t->sha256, size,
                  c ? c->id : "uncalibrated", verdict_basis(tg), tokens);
    ao_sha256_hex(b.data, b.len, hex);
    ao_buf_release(&b);
}
