/* cpu_peaks.c - the cpu target's peaks (cpu_peaks.h): peak.c built with
 * the kernels' own flags and run, the best of each series kept, measured
 * again while noisy */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "core/log.h"
#include "core/util.h"
#include "measure/calib.h"
#include "targets/cpu_peaks.h"
#include "targets/target.h"

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
        if (ao_path(src, sizeof src, ao_home(), "nkibench/harness/cpu/peak.c", err, errlen) < 0 ||
            ao_path(exe, sizeof exe, dir, "peak", err, errlen) < 0)
            goto out;
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
        ao_calib_curve_bound(c);
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
    if (ao_name(peak_bin, sizeof peak_bin, "%s/peak", dir) == 0) /* (dir is /tmp's: it fits) */
        unlink(peak_bin);
    rmdir(dir);
    return rc;
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
            ao_calib_raise(c, &x);
            /* how steady the machine is now: the last try's spreads judge it */
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
    c->stable = stable;
    c->measurements = 1;
    if (ao_calib_keep_best(path, c->cpu_model, c->cflags, c))
        ao_info("each peak the best of this measurement and the %d before it on this machine",
                c->measurements - 1);
    if (!stable)
        ao_warn("no stable calibration after %d tries: each peak the best of them%s (a busy "
                "machine only lowers peaks; a later, higher measurement replaces them)",
                AO_CALIB_TRIES, path ? ", stored" : "");
    return ao_calib_store(path, ao_target_cpu.name, c, err, errlen);
}
