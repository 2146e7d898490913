/* vendor.c - time OpenBLAS sgemm with the harness in nkibench/harness/cpu */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "calib.h"
#include "util.h"
#include "vendor.h"

int ao_vendor_sgemm(int M, int K, int N, int cpu, const char *core, struct ao_vendor_result *r,
                    char *err, size_t errlen)
{
    char dir[] = "/tmp/accelopt-sgemm-XXXXXX", cmd[2048], *out = NULL;
    double *lat = NULL;
    cJSON *j = NULL, *v;
    FILE *p;
    size_t n = 0, cap = 1 << 16;
    int rc = -1, st, k = 0;

    memset(r, 0, sizeof *r);
    if (!mkdtemp(dir)) {
        snprintf(err, errlen, "cannot create a temporary directory: %s", strerror(errno));
        return -1;
    }
    if (core && strspn(core, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") !=
                    strlen(core)) {
        snprintf(err, errlen, "'%.40s' is not an OpenBLAS core name", core);
        goto out;
    }
    /* an inherited OPENBLAS_CORETYPE is dropped: the kernels are chosen here */
    snprintf(cmd, sizeof cmd,
             "%s -O2 -std=gnu11 '%s/nkibench/harness/cpu/sgemm.c' -o %s/sgemm "
             "$(pkg-config --cflags --libs openblas 2>/dev/null || echo -lopenblas) -lm 2>&1 && "
             "env -u OPENBLAS_CORETYPE OPENBLAS_NUM_THREADS=1 %s%s %s/sgemm %d %d %d %d 2>&1",
             AO_CPU_CC, ao_home(), dir, core ? "OPENBLAS_CORETYPE=" : "", core ? core : "", dir,
             M, K, N, cpu);
    if (!(out = malloc(cap)) || !(p = popen(cmd, "r"))) {
        snprintf(err, errlen, "cannot run the sgemm harness: %s", strerror(errno));
        goto out;
    }
    n = fread(out, 1, cap - 1, p);
    out[n] = '\0';
    st = pclose(p);
    if (st != 0 || !(j = cJSON_Parse(out))) {
        snprintf(err, errlen, "the OpenBLAS sgemm harness failed (is libopenblas-dev "
                 "installed?): %.300s", out);
        goto out;
    }
    v = cJSON_GetObjectItemCaseSensitive(j, "core");
    snprintf(r->core, sizeof r->core, "%s", cJSON_IsString(v) ? v->valuestring : "?");
    v = cJSON_GetObjectItemCaseSensitive(j, "max_rel_err");
    r->max_rel_err = cJSON_IsNumber(v) ? v->valuedouble : INFINITY;
    v = cJSON_GetObjectItemCaseSensitive(j, "latencies_ns");
    if (!(lat = malloc(sizeof *lat * (size_t)(cJSON_GetArraySize(v) + 1)))) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    for (cJSON *x = v ? v->child : NULL; x; x = x->next)
        if (cJSON_IsNumber(x) && x->valuedouble > 0)
            lat[k++] = x->valuedouble;
    if (k < 3) {
        snprintf(err, errlen, "the sgemm harness printed no latencies: %.300s", out);
        goto out;
    }
    /* the harness checks 256 sampled outputs; float sgemm errs ~1e-6 there */
    if (!(r->max_rel_err < 1e-4)) {
        snprintf(err, errlen, "OpenBLAS sgemm gave wrong products (error %.3g): not a reference",
                 r->max_rel_err);
        goto out;
    }
    qsort(lat, (size_t)k, sizeof *lat, ao_cmp_double);
    r->M = M, r->K = K, r->N = N;
    r->repeats = k;
    r->min_ns = lat[0];
    r->median_ns = k % 2 ? lat[k / 2] : 0.5 * (lat[k / 2 - 1] + lat[k / 2]);
    r->spread = (lat[(3 * k) / 4] - lat[k / 4]) / r->median_ns;
    r->gflops = 2.0 * M * N * K / r->median_ns;
    rc = 0;
out:
    cJSON_Delete(j);
    free(lat);
    free(out);
    snprintf(cmd, sizeof cmd, "%s/sgemm", dir);
    unlink(cmd);
    rmdir(dir);
    return rc;
}
