/* calib.c - a target's measured peaks, stored on disk and read back, and the
 * machine probe taken with them (the cpu target measures its own in
 * targets/cpu_peaks.c) */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "measure/calib.h"
#include "measure/probe.h"
#include "core/rc.h"
#include "core/util.h"

void ao_calib_default_path(const char *target, char *buf, size_t len)
{
    if (ao_name(buf, len, "%s/calibration-%s.json", ao_state_dir(), target) < 0)
        buf[0] = '\0'; /* refused, not cut: no calibration is read or kept */
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
    cJSON_AddNumberToObject(j, "measurements", c->measurements > 0 ? c->measurements : 1);
    cJSON_AddBoolToObject(j, "stable", c->stable);
    s = cJSON_Print(j);
    ao_sha256_hex(s, strlen(s), hex);
    snprintf(c->id, sizeof c->id, "%.16s", hex);
    if (!path) { /* only the id: a measurement kept in memory */
        rc = 0;
        goto out;
    }
    snprintf(dir, sizeof dir, "%s", path);
    if ((slash = strrchr(dir, '/'))) {
        *slash = '\0';
        if (dir[0] && ao_mkdirs(dir, 0700) < 0) {
            snprintf(err, errlen, "cannot create '%s': %s", dir, strerror(errno));
            goto out;
        }
    }
    /* like the signing key (issue 56): into a directory of ours alone,
     * through a new file that follows no link */
    if (ao_calib_place_ok(path, err, errlen) < 0) {
        rc = AO_RC_SETTING;
        goto out;
    }
    rc = ao_replace_file(path, s, strlen(s), err, errlen); /* read by profilers beside us */
out:
    cJSON_free(s);
    cJSON_Delete(j);
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
    if (!cJSON_IsNumber(v) || !(v->valuedouble >= 0) || !isfinite(v->valuedouble))
        return -1; /* 1e999 reads as infinity: no peak */
    *dst = v->valuedouble;
    return 0;
}

int ao_calib_place_ok(const char *path, char *err, size_t errlen)
{
    char dir[PATH_MAX], *slash;

    if (ao_name(dir, sizeof dir, "%s", path) < 0)
        return ao_errf(err, errlen, "the calibration's path '%.200s...' is too long", path);
    if ((slash = strrchr(dir, '/')))
        *slash = '\0';
    return ao_dir_ours_alone(slash ? (dir[0] ? dir : "/") : ".", "the calibration's directory", err, errlen);
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
    { /* peaks judge every kernel: only our own file, in a directory of ours alone (issue 56) */
        struct stat st;
        if (ao_calib_place_ok(path, err, errlen) < 0)
            return AO_RC_SETTING;
        if (lstat(path, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 022)) {
            snprintf(err, errlen, "calibration '%s' is not safe to read (it must be a file of yours that "
                     "only you can write)", path);
            return AO_RC_SETTING;
        }
    }
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
        ao_calib_curve_bound(c); /* a file stored before the merges kept it */
    }
    /* the probe came later than the peaks: an older calibration has none */
    if (cJSON_GetObjectItemCaseSensitive(j, "probe_mean_ns") &&
        (get_num(j, "probe_mean_ns", &c->probe_mean_ns) < 0 || get_num(j, "probe_spread", &c->probe_spread) < 0 ||
         !(c->probe_mean_ns > 0)))
        goto bad;
    {
        /* how sure (later than the probe): an older one was one stable measurement */
        const cJSON *m = cJSON_GetObjectItemCaseSensitive(j, "measurements"),
                    *st = cJSON_GetObjectItemCaseSensitive(j, "stable");
        c->measurements = 1, c->stable = 1;
        if (m && (!cJSON_IsNumber(m) || m->valuedouble < 1 || m->valuedouble > 1e9))
            goto bad;
        if (m)
            c->measurements = m->valueint;
        if (st && !cJSON_IsBool(st))
            goto bad;
        if (st)
            c->stable = cJSON_IsTrue(st);
    }
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

void ao_calib_curve_bound(struct ao_calib *c)
{
    for (int i = c->ncurve - 1; i >= 0; i--) {
        double below = i + 1 < c->ncurve ? c->curve_gbs[i + 1] : c->bw_gbs;
        if (c->curve_gbs[i] < below)
            c->curve_gbs[i] = below;
    }
}

void ao_calib_raise(struct ao_calib *c, const struct ao_calib *x)
{
    if (x->bw_gbs > c->bw_gbs) {
        c->bw_gbs = x->bw_gbs;
        c->bw_spread = x->bw_spread;
        snprintf(c->bw_method, sizeof c->bw_method, "%s", x->bw_method);
    }
    if (x->fma_gflops > c->fma_gflops)
        c->fma_gflops = x->fma_gflops, c->fma_spread = x->fma_spread;
    if (x->vec_gflops > c->vec_gflops)
        c->vec_gflops = x->vec_gflops, c->vec_spread = x->vec_spread;
    /* the in-cache curve point by point, where both measured the same sizes */
    for (int i = 0; i < c->ncurve; i++)
        for (int k = 0; k < x->ncurve; k++)
            if (x->curve_bytes[k] == c->curve_bytes[i] && x->curve_gbs[k] > c->curve_gbs[i])
                c->curve_gbs[i] = x->curve_gbs[k];
    ao_calib_curve_bound(c); /* a higher bandwidth of x's raises c's curve */
}

int ao_calib_keep_best(const char *path, const char *model, const char *flags, struct ao_calib *c)
{
    struct ao_calib old;
    char e[AO_ERRLEN];

    if (c->measurements < 1)
        c->measurements = 1;
    if (!path || ao_calib_load(path, model, flags, &old, e, sizeof e) != 0)
        return 0;
    ao_calib_raise(c, &old);
    if (old.probe_mean_ns > 0 && (!(c->probe_mean_ns > 0) || old.probe_mean_ns < c->probe_mean_ns)) {
        c->probe_mean_ns = old.probe_mean_ns;
        c->probe_spread = old.probe_spread;
    }
    c->measurements += old.measurements;
    c->stable = c->stable || old.stable;
    return 1;
}
