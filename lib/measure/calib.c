/* calib.c - measured single-core peaks of the cpu target, stored on disk */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "measure/calib.h"
#include "measure/probe.h"
#include "core/log.h"
#include "core/util.h"
#include "targets/target.h"

void ao_calib_default_path(const char *target, char *buf, size_t len)
{
    snprintf(buf, len, "%s/calibration-%s.json", ao_state_dir(), target);
}

void ao_cpu_model(char *buf, size_t len)
{
    char e[AO_ERRLEN], *t = ao_read_file("/proc/cpuinfo", NULL, e, sizeof e), *p;
    snprintf(buf, len, "unknown");
    if (t && (p = strstr(t, "model name")) && (p = strchr(p, ':'))) {
        size_t n = strcspn(p + 2, "\n");
        snprintf(buf, len, "%.*s", (int)n, p + 2);
    }
    free(t);
}

/* best (the ceiling) and spread = (max - min) / median of a series */
static int series(const cJSON *j, const char *name, double *best, double *spread)
{
    const cJSON *arr = cJSON_GetObjectItemCaseSensitive(j, name), *v;
    double x[64];
    int n = 0;

    cJSON_ArrayForEach(v, arr)
        if (cJSON_IsNumber(v) && n < 64 && v->valuedouble > 0)
            x[n++] = v->valuedouble;
    if (n < 3)
        return -1;
    qsort(x, (size_t)n, sizeof x[0], ao_cmp_double);
    *best = x[n - 1];
    *spread = (x[n - 1] - x[0]) / x[n / 2];
    return 0;
}

int ao_calib_store(const char *path, const char *target, struct ao_calib *c, char *err, size_t errlen)
{
    cJSON *j = cJSON_CreateObject();
    char *s = NULL, dir[600], *slash, hex[65];
    int rc = -1;

    cJSON_AddStringToObject(j, "target", target);
    cJSON_AddNumberToObject(j, "peak_version", AO_PEAK_VERSION);
    cJSON_AddStringToObject(j, "cpu_model", c->cpu_model);
    cJSON_AddStringToObject(j, "cflags", c->cflags);
    cJSON_AddStringToObject(j, "created_at", c->created_at);
    cJSON_AddNumberToObject(j, "bandwidth_gbs", c->bw_gbs);
    cJSON_AddNumberToObject(j, "bandwidth_spread", c->bw_spread);
    cJSON_AddStringToObject(j, "bandwidth_method", c->bw_method);
    {
        cJSON *curve = cJSON_AddArrayToObject(j, "bandwidth_in_cache");
        for (int i = 0; i < c->ncurve; i++) {
            cJSON *pt = cJSON_CreateObject();
            cJSON_AddNumberToObject(pt, "bytes", c->curve_bytes[i]);
            cJSON_AddNumberToObject(pt, "gbs", c->curve_gbs[i]);
            cJSON_AddItemToArray(curve, pt);
        }
    }
    cJSON_AddNumberToObject(j, "fma_gflops", c->fma_gflops);
    cJSON_AddNumberToObject(j, "fma_spread", c->fma_spread);
    cJSON_AddNumberToObject(j, "vec_gflops", c->vec_gflops);
    cJSON_AddNumberToObject(j, "vec_spread", c->vec_spread);
    if (c->probe_mean_ns > 0) {
        cJSON_AddNumberToObject(j, "probe_mean_ns", c->probe_mean_ns);
        cJSON_AddNumberToObject(j, "probe_spread", c->probe_spread);
    }
    if (!(s = cJSON_Print(j))) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    ao_sha256_hex(s, strlen(s), hex);
    snprintf(c->id, sizeof c->id, "%.16s", hex);
    if (!path) { /* only the id: a measurement kept in memory */
        rc = 0;
        goto out;
    }
    snprintf(dir, sizeof dir, "%s", path);
    if ((slash = strrchr(dir, '/'))) {
        *slash = '\0';
        if (dir[0] && ao_mkdirs(dir, 0755) < 0) {
            snprintf(err, errlen, "cannot create '%s': %s", dir, strerror(errno));
            goto out;
        }
    }
    rc = ao_replace_file(path, s, strlen(s), err, errlen); /* read by profilers beside us */
out:
    cJSON_free(s);
    cJSON_Delete(j);
    return rc;
}

/* One run of peak.c: c filled, not stored. */
static int calib_once(int bw_mib, struct ao_calib *c, char *err, size_t errlen)
{
    char dir[] = "/tmp/accelopt-calib-XXXXXX", peak_bin[2048], *out = NULL;
    cJSON *j = NULL;
    int rc = -1, st;
    struct { const char *name; double best, spread; } bw[] = {
        {"bw_read", 0, 0}, {"bw_copy", 0, 0}, {"bw_stream", 0, 0}, {"bw_triad", 0, 0},
        {"bw_mostly", 0, 0}};

    memset(c, 0, sizeof *c);
    if (!mkdtemp(dir)) {
        snprintf(err, errlen, "cannot create a temporary directory: %s", strerror(errno));
        return -1;
    }
    {
        /* argv, never a shell; the flags split as the compiler expects */
        char src[700], exe[700], mib[32], flags[] = AO_CPU_CFLAGS, *argv[32];
        int n = 0;
        argv[n++] = (char *)AO_CPU_CC;
        for (char *f = strtok(flags, " "); f && n < 26; f = strtok(NULL, " "))
            argv[n++] = f;
        snprintf(src, sizeof src, "%s/nkibench/harness/cpu/peak.c", ao_home());
        snprintf(exe, sizeof exe, "%s/peak", dir);
        argv[n++] = src;
        argv[n++] = (char *)"-o";
        argv[n++] = exe;
        argv[n] = NULL;
        if (ao_spawn(argv, NULL, &out, 4096, &st, err, errlen) < 0)
            goto out;
        if (st == 0) {
            char *run[] = {exe, mib, (char *)"7", NULL};
            free(out);
            out = NULL;
            snprintf(mib, sizeof mib, "%d", bw_mib);
            if (ao_spawn(run, NULL, &out, 4096, &st, err, errlen) < 0)
                goto out;
        }
    }
    if (st != 0 || !(j = cJSON_Parse(out))) {
        snprintf(err, errlen, "the peak benchmark failed: %.300s", out);
        goto out;
    }
    for (size_t i = 0; i < sizeof bw / sizeof bw[0]; i++) {
        if (series(j, bw[i].name, &bw[i].best, &bw[i].spread) < 0)
            goto bad;
        if (bw[i].best > c->bw_gbs) {
            c->bw_gbs = bw[i].best;
            c->bw_spread = bw[i].spread;
            snprintf(c->bw_method, sizeof c->bw_method, "%s", bw[i].name + 3);
        }
    }
    if (series(j, "fma", &c->fma_gflops, &c->fma_spread) < 0 ||
        series(j, "vec", &c->vec_gflops, &c->vec_spread) < 0)
        goto bad;
    {
        const cJSON *pt, *curve = cJSON_GetObjectItemCaseSensitive(j, "bw_curve");
        cJSON_ArrayForEach(pt, curve) {
            const cJSON *b = cJSON_GetArrayItem(pt, 0), *g = cJSON_GetArrayItem(pt, 1);
            if (!cJSON_IsNumber(b) || !cJSON_IsNumber(g) || c->ncurve == 8)
                goto bad;
            c->curve_bytes[c->ncurve] = b->valuedouble;
            c->curve_gbs[c->ncurve++] = g->valuedouble;
        }
        if (c->ncurve == 0)
            goto bad;
        /* never below what a larger working set reached: the bound stays an
         * upper bound even where one measurement came out low */
        for (int i = c->ncurve - 1; i >= 0; i--)
            c->curve_gbs[i] = fmax(c->curve_gbs[i], i + 1 < c->ncurve ? c->curve_gbs[i + 1] :
                                   c->bw_gbs);
    }
    ao_cpu_model(c->cpu_model, sizeof c->cpu_model);
    snprintf(c->cflags, sizeof c->cflags, "%s", AO_CPU_CFLAGS);
    ao_utc_now(c->created_at, sizeof c->created_at);
    rc = 0;
    goto out;
bad:
    snprintf(err, errlen, "the peak benchmark printed no usable series: %.300s", out);
out:
    cJSON_Delete(j);
    free(out);
    snprintf(peak_bin, sizeof peak_bin, "%s/peak", dir);
    unlink(peak_bin);
    rmdir(dir);
    return rc;
}

void ao_calib_probe(struct ao_calib *c)
{
    struct ao_probe pr;
    if (ao_probe_run(&pr) == 0 && (!(c->probe_mean_ns > 0) || pr.mean_ns < c->probe_mean_ns)) {
        c->probe_mean_ns = pr.mean_ns;
        c->probe_spread = pr.spread;
    }
}

static int keep_noisy;

void ao_calib_keep_noisy(int on)
{
    keep_noisy = on;
}

int ao_calib_measure(const char *path, int bw_mib, struct ao_calib *c, char *err, size_t errlen)
{
    struct ao_calib x;
    int stable = 0;

    for (int try = 0; try < AO_CALIB_TRIES && !stable; try++) {
        if (calib_once(bw_mib, try ? &x : c, err, errlen) < 0)
            return -1;
        ao_calib_probe(c);
        if (try) { /* each peak is the best any try reached: a busy core only lowers them */
            if (x.bw_gbs > c->bw_gbs) {
                c->bw_gbs = x.bw_gbs;
                snprintf(c->bw_method, sizeof c->bw_method, "%s", x.bw_method);
            }
            c->fma_gflops = fmax(c->fma_gflops, x.fma_gflops);
            c->vec_gflops = fmax(c->vec_gflops, x.vec_gflops);
            for (int i = 0; i < c->ncurve && i < x.ncurve; i++)
                c->curve_gbs[i] = fmax(c->curve_gbs[i], x.curve_gbs[i]);
            c->bw_spread = x.bw_spread;
            c->fma_spread = x.fma_spread;
            c->vec_spread = x.vec_spread;
        }
        stable = c->bw_spread <= AO_CALIB_STABLE && c->fma_spread <= AO_CALIB_STABLE &&
                 c->vec_spread <= AO_CALIB_STABLE;
        if (!stable)
            ao_warn("the machine is busy: the peaks vary by %.0f%% (bandwidth), %.0f%% (FMA), "
                    "%.0f%% (elementwise); measuring again", 100 * c->bw_spread,
                    100 * c->fma_spread, 100 * c->vec_spread);
    }
    if (!stable && keep_noisy) {
        ao_warn("no stable calibration after %d tries: stored as asked, each peak the best of "
                "them (run accelopt calibrate again on a quiet machine)", AO_CALIB_TRIES);
    } else if (!stable) {
        ao_warn("no stable calibration after %d tries: used for now, not saved (the next start "
                "measures again)", AO_CALIB_TRIES);
        path = NULL;
    }
    return ao_calib_store(path, ao_target_cpu.name, c, err, errlen);
}

double ao_calib_bw_for(const struct ao_calib *c, double bytes)
{
    double bw = c->ncurve ? c->curve_gbs[0] : c->bw_gbs;
    for (int i = 1; i < c->ncurve; i++)
        if (c->curve_bytes[i] <= bytes)
            bw = c->curve_gbs[i];
    if (c->ncurve && bytes > c->curve_bytes[c->ncurve - 1] * 2)
        bw = c->bw_gbs;
    return bw;
}

static int get_str(const cJSON *j, const char *key, char *dst, size_t n)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, key);
    if (!cJSON_IsString(v))
        return -1;
    snprintf(dst, n, "%s", v->valuestring);
    return 0;
}

static int get_num(const cJSON *j, const char *key, double *dst)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, key);
    if (!cJSON_IsNumber(v) || !(v->valuedouble >= 0))
        return -1;
    *dst = v->valuedouble;
    return 0;
}

int ao_calib_load(const char *path, const char *model, const char *flags, struct ao_calib *c,
                  char *err, size_t errlen)
{
    char e[AO_ERRLEN], hex[65];
    char *text;
    cJSON *j;
    int rc = -1;

    memset(c, 0, sizeof *c);
    if (access(path, F_OK) < 0)
        return 1;
    if (!(text = ao_read_file(path, NULL, e, sizeof e))) {
        snprintf(err, errlen, "%s", e);
        return -1;
    }
    if (!(j = cJSON_Parse(text))) {
        snprintf(err, errlen, "calibration '%s' is not valid JSON", path);
        goto out;
    }
    {
        /* measured by an older peak.c: measure again */
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, "peak_version");
        if (!cJSON_IsNumber(v) || v->valueint != AO_PEAK_VERSION) {
            rc = 1;
            goto out;
        }
    }
    if (get_str(j, "cpu_model", c->cpu_model, sizeof c->cpu_model) < 0 ||
        get_str(j, "cflags", c->cflags, sizeof c->cflags) < 0 ||
        get_str(j, "created_at", c->created_at, sizeof c->created_at) < 0 ||
        get_str(j, "bandwidth_method", c->bw_method, sizeof c->bw_method) < 0 ||
        get_num(j, "bandwidth_gbs", &c->bw_gbs) < 0 ||
        get_num(j, "bandwidth_spread", &c->bw_spread) < 0 ||
        get_num(j, "fma_gflops", &c->fma_gflops) < 0 ||
        get_num(j, "fma_spread", &c->fma_spread) < 0 ||
        get_num(j, "vec_gflops", &c->vec_gflops) < 0 ||
        get_num(j, "vec_spread", &c->vec_spread) < 0)
        goto bad;
    if (c->bw_gbs <= 0 || c->fma_gflops <= 0 || c->vec_gflops <= 0)
        goto bad;
    {
        const cJSON *pt, *curve = cJSON_GetObjectItemCaseSensitive(j, "bandwidth_in_cache");
        cJSON_ArrayForEach(pt, curve) {
            double b, g;
            if (c->ncurve == 8 || get_num(pt, "bytes", &b) < 0 || get_num(pt, "gbs", &g) < 0 ||
                g <= 0 || (c->ncurve && b <= c->curve_bytes[c->ncurve - 1]))
                goto bad;
            c->curve_bytes[c->ncurve] = b;
            c->curve_gbs[c->ncurve++] = g;
        }
        if (c->ncurve == 0)
            goto bad;
    }
    /* the probe came later than the peaks: an older calibration has none */
    if (cJSON_GetObjectItemCaseSensitive(j, "probe_mean_ns") &&
        (get_num(j, "probe_mean_ns", &c->probe_mean_ns) < 0 || get_num(j, "probe_spread", &c->probe_spread) < 0 ||
         !(c->probe_mean_ns > 0)))
        goto bad;
    ao_sha256_hex(text, strlen(text), hex);
    snprintf(c->id, sizeof c->id, "%.16s", hex);
    rc = strcmp(model, c->cpu_model) || strcmp(flags, c->cflags) ? 1 : 0;
    goto out;
bad:
    snprintf(err, errlen, "calibration '%s' lacks a field or has a bad value", path);
out:
    cJSON_Delete(j);
    free(text);
    return rc;
}
