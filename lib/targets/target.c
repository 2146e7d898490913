/* target.c - the registry of built-in targets, and what their drivers share */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cJSON.h"
#include "targets/target.h"
#include "wire/names.h"
#include "core/task.h"
#include "core/util.h"
#include "measure/calib.h"
#include "measure/job.h"
#include "runner_proto.h"

#define TARGET_REF(t) &ao_target_##t,
static const struct ao_target *const targets[] = {AO_TARGET_LIST(TARGET_REF, ) NULL};
_Static_assert(sizeof targets / sizeof *targets - 1 <= AO_MAX_TARGETS, "raise AO_MAX_TARGETS");

const struct ao_target *ao_target_find(const char *name)
{
    for (int i = 0; name && targets[i]; i++)
        if (strcmp(targets[i]->name, name) == 0)
            return targets[i];
    return NULL;
}

const struct ao_target *ao_target_at(int i)
{
    return i >= 0 && i < (int)(sizeof targets / sizeof *targets) ? targets[i] : NULL;
}

const struct ao_target *ao_target_default(void)
{
    return targets[0];
}

void ao_target_names(char *buf, size_t len)
{
    size_t n = 0;

    if (len)
        buf[0] = '\0';
    for (int i = 0; targets[i] && n < len; i++) {
        int w = snprintf(buf + n, len - n, "%s%s", i ? ", " : "", targets[i]->name);
        if (w < 0)
            break;
        n += (size_t)w;
    }
}

const struct ao_target *ao_target_get(const char *name, char *err, size_t errlen)
{
    const struct ao_target *t = ao_target_find(name);
    char names[200];

    if (!t) {
        ao_target_names(names, sizeof names);
        snprintf(err, errlen, "target '%.40s' is not built into this accelopt (built in: %s)",
                 name ? name : "", names);
    }
    return t;
}

int ao_target_run_host(char *const argv[], char *err, size_t errlen)
{
    char *out = NULL;
    int st = 0;

    if (ao_spawn(argv, NULL, &out, 2000, &st, err, errlen) < 0)
        return -1;
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        snprintf(err, errlen, "'%s' failed (status %d): %.400s", argv[0], st, out);
        free(out);
        return -1;
    }
    free(out);
    return 0;
}

void ao_target_stub(const struct ao_task *t, const char *decl, struct ao_buf *b)
{
    ao_buf_printf(b, "/* generated: calls kernel() with the signature of task '%s' */\n"
                     "#include \"proto.h\"\n%svoid ao_call(float *const *p, const int *d);\n"
                     "%svoid ao_call(float *const *p, const int *d)\n{\n    kernel(", t->name,
                  decl, decl);
    for (int i = 0; i < t->ninputs + t->noutputs; i++)
        ao_buf_printf(b, "%sp[%d]", i ? ", " : "", i);
    for (int i = 0; i < t->ndims; i++)
        ao_buf_printf(b, ", d[%d]", i);
    ao_buf_printf(b, ");\n}\n");
}

/* A directory only we can write to (made so if it is not there). */
/* The whole way to dir, as for the signing key: a kept object in a
 * directory another user can reach into could be swapped under us. */
static int private_dir(const char *dir)
{
    char e[AO_ERRLEN];
    return ao_mkdirs(dir, 0700) == 0 && ao_dir_ours_alone(dir, "the kept objects' directory", e, sizeof e) == 0;
}

/* Where a kept file of this name and basis lives; -1 where nothing may
 * be kept (the state directory is not ours alone, or the name too long). */
static int kept_path(const char *name, const struct ao_buf *basis, char *kept, size_t len)
{
    char hex[65];

    ao_sha256_hex(basis->data ? basis->data : "", basis->len, hex);
    if (ao_name(kept, len, "%s/%s-%.32s.o", ao_state_dir(), name, hex) < 0 ||
        !private_dir(ao_state_dir())) /* another user could swap what is kept there */
        return -1;
    return 0;
}

int ao_target_kept_get(const char *name, const struct ao_buf *basis, const char *path, int mode)
{
    char kept[PATH_MAX], e[AO_ERRLEN], *data;
    size_t n;
    struct stat st;
    int rc = -1;

    if (kept_path(name, basis, kept, sizeof kept) < 0)
        return -1;
    if (stat(kept, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
        !(st.st_mode & 022) && (data = ao_read_file(kept, &n, e, sizeof e))) {
        rc = ao_write_file(path, data, n, e, sizeof e) == 0 && chmod(path, (mode_t)mode) == 0 ? 0 : -1;
        free(data);
    }
    return rc;
}

void ao_target_kept_put(const char *name, const struct ao_buf *basis, const char *path)
{
    char kept[PATH_MAX], tmp[PATH_MAX + 32], e[AO_ERRLEN], *data;
    size_t n;

    if (kept_path(name, basis, kept, sizeof kept) < 0)
        return;
    /* whole under a name of its own, then renamed: never half of one */
    if ((data = ao_read_file(path, &n, e, sizeof e))) {
        if (ao_name(tmp, sizeof tmp, "%s.%ld.tmp", kept, (long)getpid()) == 0 &&
            ao_write_file(tmp, data, n, e, sizeof e) == 0 && chmod(tmp, 0644) == 0 && rename(tmp, kept) != 0)
            unlink(tmp);
        free(data);
    }
}

int ao_target_kept_object(const char *name, const struct ao_buf *basis,
                          int (*compile)(char *const argv[], char *err, size_t errlen),
                          char *const argv[], const char *obj, char *err, size_t errlen)
{
    if (ao_target_kept_get(name, basis, obj, 0644) == 0)
        return 0;
    if (compile(argv, err, errlen) < 0)
        return -1;
    ao_target_kept_put(name, basis, obj);
    return 0;
}

void ao_target_basis_file(struct ao_buf *b, const char *path)
{
    char e[AO_ERRLEN], *text = ao_read_file(path, NULL, e, sizeof e);
    if (text) {
        ao_buf_append(b, text, strlen(text));
        free(text);
    }
}

void ao_target_basis_runner_side(struct ao_buf *b)
{
    char path[700];

    char e[AO_ERRLEN];

    /* (a path refused: the runner cannot be built, nothing is kept) */
    if (ao_path(path, sizeof path, ao_home(), "nkibench/harness/runner_side.h", e, sizeof e) == 0)
        ao_target_basis_file(b, path);
    if (ao_path(path, sizeof path, ao_home(), "lib/runner_proto.h", e, sizeof e) == 0)
        ao_target_basis_file(b, path);
}

void ao_target_basis_version(struct ao_buf *b, const char *compiler, int last_line)
{
    char e[AO_ERRLEN], *ver = NULL;
    char *argv[] = {(char *)compiler, (char *)"--version", NULL};
    int st = 0;

    if (ao_spawn(argv, NULL, &ver, 400, &st, e, sizeof e) == 0 && ver) {
        const char *line = ver;
        for (const char *q = ver; last_line && *q; q++)
            if (q[0] == '\n' && q[1])
                line = q + 1;
        ao_buf_printf(b, "compiler %.*s\n", (int)strcspn(line, "\n"), line);
    }
    free(ver);
}

/* "lhs [M, K]" */
static void tensor_text(struct ao_buf *b, const struct ao_task *t, int i)
{
    ao_buf_printf(b, "%s [", t->t[i].name);
    for (int d = 0; d < t->t[i].rank; d++)
        ao_buf_printf(b, "%s%s", d ? ", " : "", t->dims[t->t[i].dim[d]]);
    ao_buf_printf(b, "]");
}

void ao_target_tensors_text(const struct ao_task *t, const char *size, const long long *dims,
                            const char *tolerance_note, struct ao_buf *b)
{
    ao_buf_printf(b, "Inputs (row-major float32, in this order): ");
    for (int i = 0; i < t->ninputs; i++) {
        ao_buf_printf(b, "%s", i ? ", " : "");
        tensor_text(b, t, i);
    }
    ao_buf_printf(b, ".\nOutputs (row-major float32, written by the kernel): ");
    for (int i = t->ninputs; i < t->ninputs + t->noutputs; i++) {
        ao_buf_printf(b, "%s", i > t->ninputs ? ", " : "");
        tensor_text(b, t, i);
    }
    ao_buf_printf(b, ".\nSizes it is timed at (%s):", size);
    for (int d = 0; d < t->ndims; d++)
        ao_buf_printf(b, " %s=%lld", t->dims[d], dims[d]);
    /* the rule of the unannounced shape (pools.c, extra_shape), so that a
     * kernel knows which sizes to handle: never zero, never past the timed */
    ao_buf_printf(b, "; correctness is also checked at one more shape it does not announce: each size ");
    for (int d = 0, k = 0; d < t->ndims; d++)
        if (t->dim_fixed[d])
            ao_buf_printf(b, "%s %s", k++ ? "," : "but", t->dims[d]);
    for (int d = 0; d < t->ndims; d++)
        if (t->dim_fixed[d]) {
            ao_buf_printf(b, " (fixed) ");
            break;
        }
    ao_buf_printf(b, "that can shrink is drawn between half the timed size and one less");
    for (int d = 0, k = 0; d < t->ndims; d++)
        if (!t->dim_fixed[d] && t->dim_multiple[d] > 1)
            ao_buf_printf(b, "%s %s a multiple of %d", k++ ? "," : ", with", t->dims[d], t->dim_multiple[d]);
    ao_buf_printf(b, "; no size is ever zero, so handle remainders, not empty tensors");
    for (int i = 0; i < t->nconstraints; i++)
        ao_buf_printf(b, "%s %s = %s", i ? "," : "; always", t->constraints[i][0], t->constraints[i][1]);
    ao_buf_printf(b, ". Tolerance: relative L2 error below %g%s.\n", t->tolerance, tolerance_note);
}

int ao_target_write_stub(const struct ao_task *t, const char *dir, const char *decl,
                         const char *stub_name, char *err, size_t errlen)
{
    struct ao_buf b = {0};
    char path[800];
    int rc = -1;

    ao_buf_printf(&b, "%s%s;\n", decl, t->signature);
    if (ao_path(path, sizeof path, dir, "proto.h", err, errlen) < 0 ||
        ao_write_file(path, b.data, b.len, err, errlen) < 0)
        goto out;
    b.len = 0;
    ao_target_stub(t, decl, &b);
    if (ao_path(path, sizeof path, dir, stub_name, err, errlen) == 0)
        rc = ao_write_file(path, b.data, b.len, err, errlen);
out:
    ao_buf_release(&b);
    return rc;
}

int ao_target_load(struct ao_job *j, const char *phase)
{
    return ao_job_run(j, AO_RUN_CMD_LOAD, 1, phase) < 0 ? -1 : 0;
}

int ao_target_fetch(struct ao_job *j, const char *phase)
{
    return ao_job_run(j, AO_RUN_CMD_FETCH, 1, phase) < 0 ? -1 : 0;
}

int ao_target_peaks(const struct ao_target *tg, const cJSON *j, const char *vec_key,
                    const char *vec_spread_key, const char *bw_method, const char *path,
                    struct ao_calib *c, char *err, size_t errlen)
{
    const struct {
        const char *key;
        double *dst;
    } nums[] = {{"bw_gbs", &c->bw_gbs},     {"bw_spread", &c->bw_spread},
                {"mm_gflops", &c->fma_gflops}, {"mm_spread", &c->fma_spread},
                {vec_key, &c->vec_gflops},   {vec_spread_key, &c->vec_spread}};
    const cJSON *v;
    char flags[128];

    memset(c, 0, sizeof *c);
    for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++) {
        if (!cJSON_IsNumber(v = cJSON_GetObjectItemCaseSensitive(j, nums[i].key)) ||
            !(v->valuedouble > 0)) {
            snprintf(err, errlen, "the peak benchmark printed no usable '%s'", nums[i].key);
            return -1;
        }
        *nums[i].dst = v->valuedouble;
    }
    v = cJSON_GetObjectItemCaseSensitive(j, "bw_method");
    snprintf(c->bw_method, sizeof c->bw_method, "%s", cJSON_IsString(v) ? v->valuestring : bw_method);
    /* no in-cache curve: HBM's bandwidth at every size */
    c->ncurve = 1;
    c->curve_bytes[0] = 1;
    c->curve_gbs[0] = c->bw_gbs;
    tg->machine(c->cpu_model, sizeof c->cpu_model, flags, sizeof flags);
    snprintf(c->cflags, sizeof c->cflags, "%s", flags);
    ao_utc_now(c->created_at, sizeof c->created_at);
    ao_calib_probe(c); /* the host's, beside the device's peaks */
    c->stable = c->bw_spread <= AO_CALIB_STABLE && c->fma_spread <= AO_CALIB_STABLE &&
                c->vec_spread <= AO_CALIB_STABLE;
    c->measurements = 1;
    ao_calib_keep_best(path, c->cpu_model, c->cflags, c); /* peaks are maxima */
    return ao_calib_store(path, tg->name, c, err, errlen);
}

const char *const *ao_topics(void)
{
    static char kernels[AO_MAX_TARGETS][AO_TOPIC_MAX];
    static const char *list[AO_MAX_TARGETS + 16];
    int n = 0;

    if (list[0])
        return list;
    list[n++] = AO_TOPIC_TASKS;
    list[n++] = AO_TOPIC_CANDIDATES;
    list[n++] = AO_TOPIC_PLANS;
    for (int i = 0; i < AO_MAX_TARGETS && ao_target_at(i); i++)
        if (ao_name(kernels[i], sizeof kernels[i], AO_TOPIC_KERNELS, ao_target_at(i)->name) == 0)
            list[n++] = kernels[i];
    list[n++] = AO_TOPIC_RESULTS;
    list[n++] = AO_TOPIC_PAIRS;
    list[n++] = AO_TOPIC_EXPERIENCES;
    list[n++] = AO_TOPIC_RUNS;
    list[n++] = AO_TOPIC_DLQ;
    list[n] = NULL;
    return list;
}
