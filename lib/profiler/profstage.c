/* profstage.c - the profiler stage's core: kernel message in, result out */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/alloc.h"
#include "core/log.h"
#include "core/rc.h"
#include "core/redis.h"
#include "core/util.h"
#include "measure/measurement.h"
#include "profiler/profstage.h"
#include "targets/target.h"
#include "wire/names.h"
#include "wire/verdict.h"

struct cached {
    struct cached *next;
    char key[65];
    char *json;
};

/* A kernel's lowest median on this machine, by its profile key: what a
 * parent is held to on its side of a head-to-head (issue 66). */
struct figure {
    struct figure *next;
    char key[65];
    double ns;
};

struct loaded_task {
    struct loaded_task *next;
    struct ao_task task;
};

struct ao_profstage {
    struct ao_profstage_opts o;
    struct ao_calib calib;
    char calib_path[600];
    int have_calib, calib_stored; /* calib came from calib_path, or was stored there */
    struct ao_profiler *prof;
    struct ao_redis *redis;
    struct cached *cache;
    struct figure *figures;
    struct loaded_task *tasks;
};

static int load_calibration(struct ao_profstage *s, char *err, size_t errlen)
{
    char *path = s->calib_path;
    int rc;

    if (s->o.calib_path)
        snprintf(path, sizeof s->calib_path, "%s", s->o.calib_path);
    else
        ao_calib_default_path(s->o.target->name, path, sizeof s->calib_path);
    {
        char model[128], flags[128];
        s->o.target->machine(model, sizeof model, flags, sizeof flags);
        rc = ao_calib_load(path, model, flags, &s->calib, err, errlen);
    }
    if (rc == AO_RC_SETTING) { /* peaks another user could have set judge nothing; none are kept there either */
        ao_warn("%s: not read, and results will carry no %% of peak", err);
        memset(&s->calib, 0, sizeof s->calib);
        return 0;
    }
    if (rc < 0)
        return -1;
    if (rc == 1 && s->o.target->documented_peaks && s->o.target->documented_peaks(&s->calib) == 0) {
        /* a device with documented peaks: those, until they are measured */
        if (ao_calib_store(NULL, s->o.target->name, &s->calib, err, errlen) < 0)
            return -1;
        ao_info("no calibration for this machine at '%s': %% of peak from the %s target's "
                "documented peaks until 'accelopt calibrate --target %s' measures them", path,
                s->o.target->name, s->o.target->name);
        s->have_calib = 1;
        return 0;
    }
    if (rc == 1) {
        if (!s->o.calibrate) {
            ao_warn("no calibration for this machine at '%s': results will carry no %% of "
                    "peak (run 'accelopt calibrate')", path);
            return 0;
        }
        ao_info("no calibration for this machine at '%s': measuring its peaks first", path);
        if (s->o.target->calibrate(path, s->o.bw_mib, &s->calib, err, errlen) < 0)
            return -1;
    }
    s->have_calib = s->calib_stored = 1;
    return 0;
}

struct ao_profstage *ao_profstage_new(const struct ao_profstage_opts *o, char *err, size_t errlen)
{
    struct ao_profstage *s = ao_calloc(1, sizeof *s);

    s->o = *o;
    /* a profiler that cannot run its target's kernels should not start */
    if (s->o.target->available(err, errlen) < 0 || load_calibration(s, err, errlen) < 0)
        goto fail;
    s->o.prof.calib = s->have_calib ? &s->calib : NULL;
    /* a measured one (not documented peaks) takes fresher, higher peaks */
    s->o.prof.calib_path = s->calib_stored ? s->calib_path : NULL;
    if (!(s->prof = ao_profiler_new(&s->o.prof, err, errlen)))
        goto fail;
    if (o->redis_url && !(s->redis = ao_redis_new(o->redis_url, o->redis_prefix, err, errlen)))
        goto fail;
    return s;
fail:
    ao_profstage_free(s);
    return NULL;
}

void ao_profstage_free(struct ao_profstage *s)
{
    if (!s)
        return;
    while (s->cache) {
        struct cached *c = s->cache;
        s->cache = c->next;
        free(c->json);
        free(c);
    }
    while (s->figures) {
        struct figure *f = s->figures;
        s->figures = f->next;
        free(f);
    }
    while (s->tasks) {
        struct loaded_task *t = s->tasks;
        s->tasks = t->next;
        free(t);
    }
    ao_profiler_free(s->prof);
    ao_redis_free(s->redis);
    free(s);
}

const struct ao_target *ao_profstage_target(const struct ao_profstage *s)
{
    return s->o.target;
}

const struct ao_calib *ao_profstage_calib(const struct ao_profstage *s)
{
    return s->have_calib ? &s->calib : NULL;
}

static const struct ao_task *find_task(struct ao_profstage *s, const struct ao_kernel_msg *k,
                                       char *err, size_t errlen)
{
    struct loaded_task *t;
    struct ao_task fresh;

    /* by name in this machine's roots, never the sender's path, and the
     * same task as the sender's when it says which (loaded again first, in
     * case the task here was updated since); only tasks found are kept */
    for (t = s->tasks; t; t = t->next)
        if (strcmp(t->task.name, k->env.task) == 0)
            break;
    if (t && ao_task_same(&t->task, k->task_sha256, err, errlen) == 0)
        return &t->task;
    if (ao_task_named(k->env.task, k->task_sha256, &fresh, err, errlen) < 0)
        return NULL;
    if (!t) {
        t = ao_calloc(1, sizeof *t);
        t->next = s->tasks;
        s->tasks = t;
    }
    t->task = fresh;
    return &t->task;
}

/* The verdicts kept in memory: most recently used first, at most
 * CACHE_MAX; in Redis they expire after CACHE_TTL_S (a verdict is only as
 * good as the checks that gave it, and the key names those). */
#define CACHE_MAX 512
#define CACHE_TTL_S (7 * 24 * 3600L)

static char *cache_get(struct ao_profstage *s, const char *key)
{
    char err[AO_ERRLEN], rkey[AO_KEY_MAX], *val = NULL;

    for (struct cached **cp = &s->cache, *c; (c = *cp); cp = &c->next)
        if (strcmp(c->key, key) == 0) {
            *cp = c->next; /* to the front */
            c->next = s->cache;
            s->cache = c;
            return ao_strdup(c->json);
        }
    if (s->redis) {
        if (ao_name(rkey, sizeof rkey, AO_KEY_PROF, s->o.target->name, key) < 0 ||
            ao_redis_get(s->redis, rkey, &val, err, sizeof err) < 0)
            ao_warn("profile cache lookup failed, measuring: %s", err);
    }
    return val;
}

static void cache_put(struct ao_profstage *s, const char *key, const char *json)
{
    char err[AO_ERRLEN] = "the key is too long", rkey[AO_KEY_MAX];
    struct cached *c = ao_calloc(1, sizeof *c);
    int n = 0;

    if (c && (c->json = ao_strdup(json))) {
        snprintf(c->key, sizeof c->key, "%s", key);
        c->next = s->cache;
        s->cache = c;
    } else {
        free(c);
    }
    for (struct cached **cp = &s->cache; *cp; cp = &(*cp)->next)
        if (++n == CACHE_MAX) { /* drop the least recently used */
            struct cached *old = (*cp)->next;
            (*cp)->next = NULL;
            while (old) {
                struct cached *next = old->next;
                free(old->json);
                free(old);
                old = next;
            }
            break;
        }
    if (s->redis && (ao_name(rkey, sizeof rkey, AO_KEY_PROF, s->o.target->name, key) < 0 ||
                     ao_redis_set_ex(s->redis, rkey, json, CACHE_TTL_S, err, sizeof err) < 0))
        ao_warn("cannot store the profile in the cache: %s", err);
}

/* A cached measurement: decoded by the measurement's field tables; one
 * that does not decode (another version's) is a miss. */
static int from_cache(const char *json, struct ao_measurement *m)
{
    char err[AO_ERRLEN];
    cJSON *j = cJSON_Parse(json);
    int rc = j ? ao_record_decode(&ao_rec_measurement, j, m, err, sizeof err) : -1;

    cJSON_Delete(j);
    return rc;
}

static void to_cache(struct ao_profstage *s, const char *key, const struct ao_measurement *m)
{
    cJSON *j = ao_msg_encode(&ao_rec_measurement, m);
    char *text = j ? cJSON_PrintUnformatted(j) : NULL;

    if (text)
        cache_put(s, key, text);
    cJSON_free(text);
    cJSON_Delete(j);
}

/* The figures kept: at most FIGURES_MAX in memory, most recent first, and
 * in Redis beside the cache, for as long. */
#define FIGURES_MAX 4096
/* Two processes of one kernel differ by a few percent on a quiet machine;
 * between a quiet minute and a busy one on the 2-core VM an honest
 * parent's median, the probe's slowdown taken off, moved 1.7x (the whole
 * suite, three scripts at a time): a parent slowed by more than this is
 * not noise. */
#define PARENT_HELD 2.0

/* The lowest median on record for key: here, else in Redis; NAN: none. */
static double figure_get(struct ao_profstage *s, const char *key)
{
    char err[AO_ERRLEN], rkey[AO_KEY_MAX], *val = NULL;
    double ns = NAN;

    for (struct figure *f = s->figures; f; f = f->next)
        if (strcmp(f->key, key) == 0)
            return f->ns;
    if (s->redis && ao_name(rkey, sizeof rkey, AO_KEY_FIGURE, s->o.target->name, key) == 0 &&
        ao_redis_get(s->redis, rkey, &val, err, sizeof err) > 0 && val) {
        char *end;
        double v = strtod(val, &end);
        if (end != val && *end == '\0' && v > 0 && isfinite(v))
            ns = v;
    }
    free(val);
    return ns;
}

/* One more median of the kernel of key: the lowest is kept. */
static void figure_put(struct ao_profstage *s, const char *key, double ns)
{
    char err[AO_ERRLEN] = "the key is too long", rkey[AO_KEY_MAX], val[40];
    double was = figure_get(s, key);
    struct figure *f, **fp;
    int n = 0;

    if (!(ns > 0) || !isfinite(ns) || (isfinite(was) && was <= ns))
        return;
    for (fp = &s->figures; (f = *fp); fp = &f->next)
        if (strcmp(f->key, key) == 0) {
            *fp = f->next;
            break;
        }
    if (!f && (f = ao_calloc(1, sizeof *f)))
        snprintf(f->key, sizeof f->key, "%s", key);
    if (f) {
        f->ns = ns;
        f->next = s->figures;
        s->figures = f;
    }
    for (fp = &s->figures; *fp; fp = &(*fp)->next)
        if (++n == FIGURES_MAX) { /* the least recently measured go */
            f = (*fp)->next;
            (*fp)->next = NULL;
            while (f) {
                struct figure *next = f->next;
                free(f);
                f = next;
            }
            break;
        }
    snprintf(val, sizeof val, "%.0f", ns);
    if (s->redis && (ao_name(rkey, sizeof rkey, AO_KEY_FIGURE, s->o.target->name, key) < 0 ||
                     ao_redis_set_ex(s->redis, rkey, val, CACHE_TTL_S, err, sizeof err) < 0))
        ao_warn("cannot keep the kernel's figure: %s", err);
}

/* A median as the machine would have given it quiet: over the profiler's
 * own probe's slowdown at the time (trusted code, timed after the kernel),
 * where that was over 1.  Three busy loops on two cores slow the probe and
 * a kernel alike, 1.8-4x (tests/cli/84-aa-under-load.sh). */
static double quiet(double ns, const struct ao_measurement *m)
{
    return isfinite(m->machine_slowdown) && m->machine_slowdown > 1 ? ns / m->machine_slowdown : ns;
}

/* A parent may run slowly on its side to flatter its child (issue 56's
 * open hole): its side's median, as the machine would have given it
 * quiet, is held to the lowest it showed before on this machine, as a
 * child, alone or as a parent, and a pair where it ran more than
 * PARENT_HELD times that is voided (the child is a tie: kept over nobody,
 * teaching nothing), where the pair says the child is faster: a slowed
 * parent only ever flatters its child, so a loss or a tie stands (issue
 * 66: under the suite's load a parent's side ran past the hold by chance,
 * and voided the plain losses a run learns its warnings from).  Then both
 * sides' medians are kept. */
static void hold_parent(struct ao_profstage *s, const char *kernel_key, const char *parent_key,
                        struct ao_measurement *m)
{
    cJSON *h = m->head_to_head;
    double pm = quiet(ao_json_num(h, "baseline_median_ns", NAN), m);
    double km = quiet(ao_json_num(h, "kernel_median_ns", NAN), m);
    double was = parent_key ? figure_get(s, parent_key) : NAN;

    if (m->verdict != AO_V_OK || !h)
        return;
    if (isfinite(was) && pm > PARENT_HELD * was && ao_json_num(h, "speedup_low", NAN) > 1) {
        char why[300];
        snprintf(why, sizeof why, "the parent's side ran at %.0f ns (the machine's slowdown taken off), "
                 "%.2fx the %.0f ns it showed before on this machine (more than %.2fx): a parent slowed on "
                 "its side flatters its child", pm, pm / was, was, PARENT_HELD);
        cJSON_AddStringToObject(h, "voided", why);
        ao_warn("%s", why);
    }
    if (isfinite(was))
        cJSON_AddNumberToObject(h, "parent_earlier_ns", was);
    if (parent_key)
        figure_put(s, parent_key, pm);
    figure_put(s, kernel_key, km);
}

/* A head-to-head's cache key: the kernel's and the other side's, together. */
static void pair_key(const char *kernel_key, const char *other_key, char *out)
{
    char both[130];

    snprintf(both, sizeof both, "%s%s", kernel_key, other_key);
    ao_sha256_hex(both, strlen(both), out);
}

/* A kernel head to head with its parent (a child, issue 66: cached by the
 * pair, the parent held to its figures), or with the task's baseline at a
 * run's end (never cached: the figure quoted is measured then). */
static int head_to_head(struct ao_profstage *s, const struct ao_task *t, const struct ao_kernel_msg *k,
                        struct ao_measurement *m, int *cached)
{
    char key[65], pkey[65], both[65], err[AO_ERRLEN] = "", *hit = NULL;
    int child = k->parent != NULL;

    ao_profile_key(s->o.target, t, k->size, k->source, ao_profstage_calib(s), key);
    ao_profile_key(s->o.target, t, k->size, k->baseline_source, ao_profstage_calib(s), pkey);
    pair_key(key, pkey, both);
    if (child && (hit = cache_get(s, both)) && from_cache(hit, m) == 0) {
        ao_debug("profile cache hit for the pair %.12s", both);
        free(hit);
        *cached = 1;
        return 0;
    }
    free(hit);
    ao_measurement_init(m);
    if (ao_profiler_compare(s->prof, t, k->size, k->source, k->baseline_source, child, m, err, sizeof err) < 0)
        ao_err("the head-to-head of '%s' failed: %s", k->env.id, err);
    if (child)
        hold_parent(s, key, pkey, m);
    if (child && m->verdict != AO_V_INTERNAL_ERROR)
        to_cache(s, both, m);
    return 0;
}

int ao_profstage_kernel(struct ao_profstage *s, const struct ao_kernel_msg *k,
                        struct ao_result_msg *r, char *reason, size_t len)
{
    char key[65], sha[65] = "", err[AO_ERRLEN] = "", *hit = NULL;
    const struct ao_task *t = NULL;
    struct ao_measurement m;
    int cached = 0, rc;

    if (k->source) { /* the hash a result carries is of the source measured, never the sender's */
        ao_sha256_hex(k->source, strlen(k->source), sha);
        if (k->sha256 && strcmp(k->sha256, sha) != 0) {
            snprintf(reason, len, "sha256 %.16s is not the hash of the kernel's source (%.16s)",
                     k->sha256, sha);
            return -1;
        }
    }
    if (strcmp(k->env.target, s->o.target->name) != 0) {
        snprintf(reason, len, "target '%.40s' is not '%s': this profiler runs %s kernels only",
                 k->env.target, s->o.target->name, s->o.target->name);
        return -1;
    }
    ao_measurement_init(&m);
    if (!k->source) {
        /* the executor produced no code, or repeated an earlier plan or
         * kernel: still one result for the slot */
        m.verdict = k->duplicate_of ? AO_V_DUPLICATE : AO_V_NO_CODE;
        m.reason = ao_strdup(k->error ? k->error : "the kernel message carries no source");
    } else if (!(t = find_task(s, k, err, sizeof err))) {
        snprintf(reason, len, "%s", err);
        return -1;
    } else if (k->baseline_source) {
        head_to_head(s, t, k, &m, &cached);
    } else {
        ao_profile_key(s->o.target, t, k->size, k->source, ao_profstage_calib(s), key);
        if ((hit = cache_get(s, key)) && from_cache(hit, &m) == 0) {
            ao_debug("profile cache hit for %.12s", key);
            cached = 1;
        } else {
            ao_measurement_init(&m);
            if (ao_profiler_run(s->prof, t, k->size, k->source, k->parent_latency_ns, &m, err,
                                sizeof err) < 0)
                ao_err("profiling '%s' failed: %s", k->env.id, err);
            if (m.verdict != AO_V_INTERNAL_ERROR)
                to_cache(s, key, &m);
            if (m.verdict == AO_V_OK) /* a lone figure: the baseline's, where a run starts */
                figure_put(s, key, quiet(m.latency_ns, &m));
        }
        free(hit);
    }
    rc = ao_result_of(k, &m, k->source ? sha : NULL, t ? t->sha256 : NULL, k->source ? cached : -1, r,
                      reason, len);
    ao_measurement_release(&m);
    return rc;
}

int ao_profstage_opts_from_config(const struct ao_config *c, struct ao_profstage_opts *o,
                                  char *err, size_t errlen)
{
    struct ao_profiler_opts d = AO_PROFILER_DEFAULTS;

    memset(o, 0, sizeof *o);
    o->redis_url = ao_config_str(c, "redis");
    o->redis_prefix = ao_config_str(c, "redis-prefix");
    o->calib_path = ao_config_str(c, "calibration");
    o->calibrate = !ao_config_bool(c, "no-calibrate");
    o->bw_mib = (int)ao_config_int(c, "bw-mib");
    if (!(o->target = ao_target_get(ao_config_str(c, "target"), err, errlen)))
        return -1;
    o->prof = d;
    o->prof.target = o->target;
    o->prof.timeout_s = ao_config_num(c, "timeout");
    o->prof.compile_timeout_s = ao_config_num(c, "compile-timeout");
    o->prof.budget_s = ao_config_num(c, "budget");
    o->prof.warmup_s = ao_config_num(c, "warmup");
    o->prof.target_spread = ao_config_num(c, "spread");
    o->prof.max_calls = (int)ao_config_int(c, "max-calls");
    o->prof.cpu = (int)ao_config_int(c, "cpu");
    o->prof.work_root = ao_config_str(c, "work-dir");
    o->prof.bw_mib = o->bw_mib;
    if (o->bw_mib < 16 || o->bw_mib > 16384) {
        snprintf(err, errlen, "--bw-mib must be between 16 and 16384");
        return -1;
    }
    if (!(o->prof.timeout_s > 0) || !(o->prof.compile_timeout_s > 0) || !(o->prof.budget_s > 0) || !(o->prof.warmup_s >= 0) ||
        !(o->prof.target_spread > 0) || o->prof.max_calls < 3 || o->prof.max_calls > 240) {
        snprintf(err, errlen, "--timeout, --compile-timeout, --budget and --spread must be "
                 "positive, --max-calls between 3 and 240");
        return -1;
    }
    if (o->prof.work_root && strlen(o->prof.work_root) > AO_WORK_ROOT_MAX) {
        snprintf(err, errlen, "--work-dir is %zu bytes long: at most %d, so that the paths built under it fit",
                 strlen(o->prof.work_root), AO_WORK_ROOT_MAX);
        return -1;
    }
    if (o->prof.cpu >= 0 && o->prof.cpu >= sysconf(_SC_NPROCESSORS_ONLN)) {
        snprintf(err, errlen, "--cpu %d: this machine has %ld CPUs", o->prof.cpu,
                 sysconf(_SC_NPROCESSORS_ONLN));
        return -1;
    }
    return 0;
}
