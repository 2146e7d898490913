/* vendor.c - time OpenBLAS sgemm with the harness in nkibench/harness/cpu */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "core/alloc.h"
#include "core/util.h"
#include "measure/calib.h"
#include "measure/vendor.h"

extern char **environ;

int ao_vendor_sgemm(int M, int K, int N, int cpu, const char *core, struct ao_vendor_result *r,
                    char *err, size_t errlen)
{
    char dir[] = "/tmp/accelopt-sgemm-XXXXXX", sgemm_bin[2048], *out = NULL;
    double *lat = NULL;
    cJSON *j = NULL, *v;
    size_t cap = 1 << 16;
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
    {
        /* argv, never a shell: pkg-config's words become arguments */
        char src[700], exe[700], *pc = NULL, *argv[64], ms[16], ks[16], ns[16], cs[16];
        char *pcargv[] = {(char *)"pkg-config", (char *)"--cflags", (char *)"--libs",
                          (char *)"openblas", NULL};
        char *run[] = {exe, ms, ks, ns, cs, NULL}, *envp[256], coretype[80];
        int a = 0, e = 0;

        if (ao_path(src, sizeof src, ao_home(), "nkibench/harness/cpu/sgemm.c", err, errlen) < 0 ||
            ao_path(exe, sizeof exe, dir, "sgemm", err, errlen) < 0)
            goto out;
        argv[a++] = (char *)AO_CPU_CC;
        argv[a++] = (char *)"-O2";
        argv[a++] = (char *)"-std=gnu11";
        argv[a++] = src;
        argv[a++] = (char *)"-o";
        argv[a++] = exe;
        if (ao_spawn(pcargv, NULL, &pc, 4000, &st, err, errlen) == 0 && st == 0) {
            for (char *w = strtok(pc, " \t\n"); w && a < 60; w = strtok(NULL, " \t\n"))
                argv[a++] = w;
        } else {
            argv[a++] = (char *)"-lopenblas";
        }
        argv[a++] = (char *)"-lm";
        argv[a] = NULL;
        int built = ao_spawn(argv, NULL, &out, cap, &st, err, errlen);
        free(pc);
        if (built < 0)
            goto out;
        if (st == 0) {
            /* an inherited OPENBLAS_CORETYPE is dropped: the kernels are chosen here */
            for (char **ev = environ; *ev && e < 250; ev++)
                if (strncmp(*ev, "OPENBLAS_CORETYPE=", 18) != 0 &&
                    strncmp(*ev, "OPENBLAS_NUM_THREADS=", 21) != 0)
                    envp[e++] = *ev;
            envp[e++] = (char *)"OPENBLAS_NUM_THREADS=1";
            if (core) {
                snprintf(coretype, sizeof coretype, "OPENBLAS_CORETYPE=%s", core);
                envp[e++] = coretype;
            }
            envp[e] = NULL;
            snprintf(ms, sizeof ms, "%d", M);
            snprintf(ks, sizeof ks, "%d", K);
            snprintf(ns, sizeof ns, "%d", N);
            snprintf(cs, sizeof cs, "%d", cpu);
            free(out);
            out = NULL;
            if (ao_spawn(run, envp, &out, cap, &st, err, errlen) < 0)
                goto out;
        }
    }
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
    lat = ao_malloc(sizeof *lat * (size_t)(cJSON_GetArraySize(v) + 1));
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
    if (ao_name(sgemm_bin, sizeof sgemm_bin, "%s/sgemm", dir) == 0) /* (dir is /tmp's: it fits) */
        unlink(sgemm_bin);
    rmdir(dir);
    return rc;
}
