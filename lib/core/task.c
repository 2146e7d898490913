/* task.c - load nkibench task.json files and compute their work counts */
#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "core/task.h"
#include "core/util.h"

/* --- a small recursive-descent evaluator for the work formulas --- */

struct parser {
    const char *p;
    char (*names)[16];
    const long long *vals;
    int n;
    char *err;
    size_t errlen;
    int failed;
};

static double expr(struct parser *ps);

static void skip(struct parser *ps)
{
    while (isspace((unsigned char)*ps->p))
        ps->p++;
}

static double primary(struct parser *ps)
{
    skip(ps);
    if (*ps->p == '(') {
        double v;
        ps->p++;
        v = expr(ps);
        skip(ps);
        if (*ps->p != ')') {
            if (!ps->failed)
                snprintf(ps->err, ps->errlen, "missing ')' in formula");
            ps->failed = 1;
            return 0;
        }
        ps->p++;
        return v;
    }
    if (*ps->p == '-') {
        ps->p++;
        return -primary(ps);
    }
    if (isdigit((unsigned char)*ps->p) || *ps->p == '.') {
        char *end;
        double v = strtod(ps->p, &end);
        ps->p = end;
        return v;
    }
    if (isalpha((unsigned char)*ps->p) || *ps->p == '_') {
        const char *s = ps->p;
        while (isalnum((unsigned char)*ps->p) || *ps->p == '_')
            ps->p++;
        for (int i = 0; i < ps->n; i++)
            if (strlen(ps->names[i]) == (size_t)(ps->p - s) &&
                strncmp(ps->names[i], s, (size_t)(ps->p - s)) == 0)
                return (double)ps->vals[i];
        if (!ps->failed)
            snprintf(ps->err, ps->errlen, "unknown name '%.*s' in formula", (int)(ps->p - s), s);
        ps->failed = 1;
        return 0;
    }
    if (!ps->failed)
        snprintf(ps->err, ps->errlen, "unexpected '%c' in formula", *ps->p ? *ps->p : '?');
    ps->failed = 1;
    return 0;
}

static double term(struct parser *ps)
{
    double v = primary(ps);
    for (;;) {
        skip(ps);
        if (*ps->p == '*') {
            ps->p++;
            v *= primary(ps);
        } else if (*ps->p == '/') {
            ps->p++;
            v /= primary(ps);
        } else {
            return v;
        }
    }
}

static double expr(struct parser *ps)
{
    double v = term(ps);
    for (;;) {
        skip(ps);
        if (*ps->p == '+') {
            ps->p++;
            v += term(ps);
        } else if (*ps->p == '-') {
            ps->p++;
            v -= term(ps);
        } else {
            return v;
        }
    }
}

int ao_formula_eval(const char *e, char names[][16], const long long *vals, int n,
                    double *out, char *err, size_t errlen)
{
    struct parser ps = {e, names, vals, n, err, errlen, 0};
    double v = expr(&ps);

    skip(&ps);
    if (!ps.failed && *ps.p) {
        snprintf(err, errlen, "unexpected '%c' in formula '%s'", *ps.p, e);
        return -1;
    }
    if (ps.failed)
        return -1;
    *out = v;
    return 0;
}

/* --- task.json --- */

static int dim_index(struct ao_task *t, const char *name, int add)
{
    for (int i = 0; i < t->ndims; i++)
        if (strcmp(t->dims[i], name) == 0)
            return i;
    if (!add || t->ndims == AO_MAX_DIMS || !ao_is_identifier(name, sizeof t->dims[0] - 1))
        return -1;
    snprintf(t->dims[t->ndims], sizeof t->dims[0], "%s", name);
    return t->ndims++;
}

static int load_dist(const cJSON *dist, struct ao_dist *d, const char *tname, char *err,
                     size_t errlen)
{
    const cJSON *kind = cJSON_GetObjectItemCaseSensitive(dist, "kind");
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(dist, "mean");
    const cJSON *b = cJSON_GetObjectItemCaseSensitive(dist, "std");

    d->kind = AO_DIST_NORMAL;
    d->a = 0;
    d->b = 1;
    if (!cJSON_IsString(kind)) {
        snprintf(err, errlen, "tensor '%s': a distribution needs a kind", tname);
        return -1;
    }
    if (strcmp(kind->valuestring, "normal") == 0)
        d->kind = AO_DIST_NORMAL;
    else if (strcmp(kind->valuestring, "abs_normal") == 0)
        d->kind = AO_DIST_ABS_NORMAL;
    else if (strcmp(kind->valuestring, "uniform") == 0) {
        d->kind = AO_DIST_UNIFORM;
        a = cJSON_GetObjectItemCaseSensitive(dist, "low");
        b = cJSON_GetObjectItemCaseSensitive(dist, "high");
    } else {
        snprintf(err, errlen, "tensor '%s': unknown distribution '%s'", tname, kind->valuestring);
        return -1;
    }
    if (cJSON_IsNumber(a))
        d->a = a->valuedouble;
    if (cJSON_IsNumber(b))
        d->b = b->valuedouble;
    if (!(d->kind == AO_DIST_UNIFORM ? d->b > d->a : d->b > 0)) {
        snprintf(err, errlen, "tensor '%s': the distribution has no spread", tname);
        return -1;
    }
    return 0;
}

static int load_tensor(struct ao_task *t, const cJSON *j, struct ao_tensor *x, int is_input,
                       char *err, size_t errlen)
{
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(j, "name");
    const cJSON *shape = cJSON_GetObjectItemCaseSensitive(j, "shape");
    const cJSON *dist = cJSON_GetObjectItemCaseSensitive(j, "dist");
    const cJSON *stress = cJSON_GetObjectItemCaseSensitive(j, "stress");
    const cJSON *d;

    if (!cJSON_IsString(name) || !ao_is_identifier(name->valuestring, sizeof x->name - 1) ||
        !cJSON_IsArray(shape) || cJSON_GetArraySize(shape) < 1 ||
        cJSON_GetArraySize(shape) > AO_MAX_RANK) {
        snprintf(err, errlen, "a tensor needs a name (a C identifier) and a shape of 1 to %d sizes",
                 AO_MAX_RANK);
        return -1;
    }
    snprintf(x->name, sizeof x->name, "%s", name->valuestring);
    cJSON_ArrayForEach(d, shape) {
        int k;
        if (!cJSON_IsString(d) || (k = dim_index(t, d->valuestring, 1)) < 0) {
            snprintf(err, errlen, "tensor '%s': shape entries are size names (C identifiers)",
                     x->name);
            return -1;
        }
        x->dim[x->rank++] = k;
    }
    x->dist = (struct ao_dist){AO_DIST_NORMAL, 0, 1};
    if (!is_input && (dist || stress)) {
        snprintf(err, errlen, "output '%s' cannot have a distribution", x->name);
        return -1;
    }
    if (dist && load_dist(dist, &x->dist, x->name, err, errlen) < 0)
        return -1;
    x->stress = x->dist;
    if (stress) {
        if (load_dist(stress, &x->stress, x->name, err, errlen) < 0)
            return -1;
        t->has_stress = 1;
    }
    return 0;
}

/* An independent size is in some output, and at most once in any tensor
 * (a square of it would be two indices at once). */
static int check_independent(const struct ao_task *t, char *err, size_t errlen)
{
    for (int d = 0; d < t->ndims; d++) {
        int in_output = 0;
        if (!t->dim_independent[d])
            continue;
        for (int i = 0; i < t->ninputs + t->noutputs; i++) {
            int times = 0;
            for (int a = 0; a < t->t[i].rank; a++)
                times += t->t[i].dim[a] == d;
            if (times > 1) {
                snprintf(err, errlen, "size '%s' is independent but appears twice in '%s'", t->dims[d],
                         t->t[i].name);
                return -1;
            }
            in_output |= times && i >= t->ninputs;
        }
        if (!in_output) {
            snprintf(err, errlen, "size '%s' is independent but no output has it", t->dims[d]);
            return -1;
        }
    }
    return 0;
}

static int load_constraints(struct ao_task *t, const cJSON *c, char *err, size_t errlen)
{
    const cJSON *pair;

    if (!c)
        return 0;
    if (!cJSON_IsArray(c) || cJSON_GetArraySize(c) > AO_MAX_CONSTRAINTS) {
        snprintf(err, errlen, "'constraints' must be at most %d pairs of formulas",
                 AO_MAX_CONSTRAINTS);
        return -1;
    }
    cJSON_ArrayForEach(pair, c) {
        for (int k = 0; k < 2; k++) {
            const cJSON *f = cJSON_GetArrayItem(pair, k);
            if (!cJSON_IsArray(pair) || cJSON_GetArraySize(pair) != 2 || !cJSON_IsString(f) ||
                strlen(f->valuestring) >= sizeof t->constraints[0][0]) {
                snprintf(err, errlen, "a constraint is a pair of formulas, e.g. [\"H\", \"2*KH\"]");
                return -1;
            }
            snprintf(t->constraints[t->nconstraints][k], sizeof t->constraints[0][0], "%s",
                     f->valuestring);
        }
        t->nconstraints++;
    }
    return 0;
}

static int copy_str(const cJSON *j, const char *key, char *dst, size_t n, int required,
                    char *err, size_t errlen)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, key);
    if (!v && !required) {
        dst[0] = '\0';
        return 0;
    }
    if (!cJSON_IsString(v) || strlen(v->valuestring) >= n) {
        snprintf(err, errlen, "'%s' must be a string shorter than %zu", key, n);
        return -1;
    }
    snprintf(dst, n, "%s", v->valuestring);
    return 0;
}

static void derive_signature(const struct ao_task *t, char *buf, size_t n)
{
    size_t len = (size_t)snprintf(buf, n, "void kernel(");
    for (int i = 0; i < t->ninputs + t->noutputs && len < n; i++)
        len += (size_t)snprintf(buf + len, n - len, "%s%sfloat *%s", i ? ", " : "",
                                i < t->ninputs ? "const " : "", t->t[i].name);
    for (int i = 0; i < t->ndims && len < n; i++)
        len += (size_t)snprintf(buf + len, n - len, ", int %s", t->dims[i]);
    if (len < n)
        snprintf(buf + len, n - len, ")");
}

/* A task's identity: the hashes of the files that decide what is measured
 * and what is correct (its spec and its references: reference.c, and the
 * other targets' trusted references where it has them), so two machines
 * can show they hold the same task. */
static void task_hash(struct ao_task *t, const char *spec)
{
    static const char *const refs[] = {"reference.c", "reference.cu", NULL};
    char path[600], e[AO_ERRLEN], hex[65], *ref;
    struct ao_buf b = {0};

    ao_sha256_hex(spec, strlen(spec), hex);
    ao_buf_printf(&b, "task.json %s\n", hex);
    for (int i = 0; refs[i]; i++) {
        if (ao_name(path, sizeof path, "%s/%s", t->dir, refs[i]) == 0 &&
            (ref = ao_read_file(path, NULL, e, sizeof e))) {
            ao_sha256_hex(ref, strlen(ref), hex);
            ao_buf_printf(&b, "%s %s\n", refs[i], hex);
            free(ref);
        }
    }
    ao_sha256_hex(b.data ? b.data : "", b.len, t->sha256);
    ao_buf_release(&b);
}

int ao_task_load(const char *path, struct ao_task *t, char *err, size_t errlen)
{
    char file[600], ferr[AO_ERRLEN], derived[512];
    struct stat st;
    char *text = NULL;
    cJSON *j = NULL, *x;
    const cJSON *ins, *outs, *sizes, *dims, *tol;
    int rc = -1;

    memset(t, 0, sizeof *t);
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)
            ? ao_name(t->dir, sizeof t->dir, "%s", path) < 0 || ao_name(file, sizeof file, "%s/task.json", path) < 0
            : ao_name(file, sizeof file, "%s", path) < 0 ||
                  ao_name(t->dir, sizeof t->dir, "%.*s", strrchr(path, '/') ? (int)(strrchr(path, '/') - path) : 1,
                          strrchr(path, '/') ? path : ".") < 0) {
        snprintf(err, errlen, "task path of %zu bytes is too long", strlen(path));
        goto out;
    }
    if (!(text = ao_read_file_max(file, 1 << 20, NULL, ferr, sizeof ferr))) {
        snprintf(err, errlen, "%s", ferr);
        goto out;
    }
    if (!(j = cJSON_Parse(text))) {
        snprintf(err, errlen, "'%s' is not valid JSON", file);
        goto out;
    }
    if (copy_str(j, "name", t->name, sizeof t->name, 1, err, errlen) < 0 ||
        copy_str(j, "signature", t->signature, sizeof t->signature, 1, err, errlen) < 0)
        goto bad;
    /* the name reaches file names, keys and prompts: an identifier only */
    if (!ao_is_identifier(t->name, sizeof t->name - 1)) {
        snprintf(err, errlen, "the task name '%.40s' is not an identifier ([A-Za-z_][A-Za-z0-9_]*)",
                 t->name);
        goto bad;
    }
    ins = cJSON_GetObjectItemCaseSensitive(j, "inputs");
    outs = cJSON_GetObjectItemCaseSensitive(j, "outputs");
    if (!cJSON_IsArray(ins) || !cJSON_IsArray(outs) || cJSON_GetArraySize(outs) < 1 ||
        cJSON_GetArraySize(ins) + cJSON_GetArraySize(outs) > AO_MAX_TENSORS) {
        snprintf(err, errlen, "inputs and outputs must be arrays, with at most %d tensors",
                 AO_MAX_TENSORS);
        goto bad;
    }
    cJSON_ArrayForEach(x, ins)
        if (load_tensor(t, x, &t->t[t->ninputs++], 1, err, errlen) < 0)
            goto bad;
    cJSON_ArrayForEach(x, outs)
        if (load_tensor(t, x, &t->t[t->ninputs + t->noutputs++], 0, err, errlen) < 0)
            goto bad;
    tol = cJSON_GetObjectItemCaseSensitive(j, "tolerance");
    if (!cJSON_IsNumber(tol) || tol->valuedouble <= 0 || tol->valuedouble > 0.1) {
        snprintf(err, errlen, "'tolerance' must be a relative L2 bound in (0, 0.1]");
        goto bad;
    }
    t->tolerance = tol->valuedouble;
    x = cJSON_GetObjectItemCaseSensitive(j, "work");
    if (copy_str(x, "mm_flops", t->mm_flops, sizeof t->mm_flops, 1, err, errlen) < 0 ||
        copy_str(x, "vec_flops", t->vec_flops, sizeof t->vec_flops, 1, err, errlen) < 0 ||
        copy_str(x, "bytes", t->bytes, sizeof t->bytes, 1, err, errlen) < 0)
        goto bad;
    if (load_constraints(t, cJSON_GetObjectItemCaseSensitive(j, "constraints"), err, errlen) < 0)
        goto bad;
    dims = cJSON_GetObjectItemCaseSensitive(j, "dims");
    for (int i = 0; i < t->ndims; i++) {
        const cJSON *d = cJSON_GetObjectItemCaseSensitive(dims, t->dims[i]);
        const cJSON *m = cJSON_GetObjectItemCaseSensitive(d, "multiple_of");
        t->dim_fixed[i] = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(d, "fixed"));
        t->dim_multiple[i] = cJSON_IsNumber(m) && m->valueint > 0 ? m->valueint : 1;
        t->dim_independent[i] = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(d, "independent"));
    }
    if (check_independent(t, err, errlen) < 0)
        goto bad;
    sizes = cJSON_GetObjectItemCaseSensitive(j, "sizes");
    if (!cJSON_IsObject(sizes)) {
        snprintf(err, errlen, "'sizes' must map size classes to their dims");
        goto bad;
    }
    {
        char *s = cJSON_PrintUnformatted(sizes);
        if (!s || strlen(s) >= sizeof t->sizes_json) {
            cJSON_free(s);
            snprintf(err, errlen, "'sizes' is too large");
            goto bad;
        }
        snprintf(t->sizes_json, sizeof t->sizes_json, "%s", s);
        cJSON_free(s);
    }
    derive_signature(t, derived, sizeof derived);
    if (strcmp(derived, t->signature) != 0) {
        snprintf(err, errlen, "signature '%s' breaks the convention, which gives '%s'",
                 t->signature, derived);
        goto bad;
    }
    /* every size class must give every dim and valid work */
    cJSON_ArrayForEach(x, sizes) {
        long long dv[AO_MAX_DIMS];
        double a, b, c;
        if (ao_task_size(t, x->string, dv, err, errlen) < 0 ||
            ao_task_work(t, dv, &a, &b, &c, err, errlen) < 0)
            goto bad;
    }
    task_hash(t, text);
    rc = 0;
    goto out;
bad:
    {
        char tmp[AO_ERRLEN];
        snprintf(tmp, sizeof tmp, "%s", err);
        snprintf(err, errlen, "task '%s': %s", file, tmp);
    }
out:
    cJSON_Delete(j);
    free(text);
    return rc;
}

int ao_task_size(const struct ao_task *t, const char *size, long long dims[AO_MAX_DIMS],
                 char *err, size_t errlen)
{
    cJSON *sizes = cJSON_Parse(t->sizes_json);
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(sizes, size);
    int rc = -1;

    if (!cJSON_IsObject(s)) {
        snprintf(err, errlen, "task '%s' has no size class '%s'", t->name, size);
        goto out;
    }
    for (int i = 0; i < t->ndims; i++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(s, t->dims[i]);
        if (!cJSON_IsNumber(v) || v->valuedouble < 1 || v->valuedouble > 1e9 ||
            v->valuedouble != (double)(long long)v->valuedouble) {
            snprintf(err, errlen, "size class '%s' needs a positive integer '%s'", size,
                     t->dims[i]);
            goto out;
        }
        dims[i] = (long long)v->valuedouble;
    }
    if (ao_task_check_dims(t, dims, err, errlen) < 0) {
        char tmp[AO_ERRLEN];
        snprintf(tmp, sizeof tmp, "%s", err);
        snprintf(err, errlen, "size class '%s': %s", size, tmp);
        goto out;
    }
    rc = 0;
out:
    cJSON_Delete(sizes);
    return rc;
}

int ao_task_check_dims(const struct ao_task *t, const long long *dims, char *err, size_t errlen)
{
    char (*names)[16] = (char (*)[16])t->dims;

    for (int i = 0; i < t->nconstraints; i++) {
        double l, r;
        if (ao_formula_eval(t->constraints[i][0], names, dims, t->ndims, &l, err, errlen) < 0 ||
            ao_formula_eval(t->constraints[i][1], names, dims, t->ndims, &r, err, errlen) < 0)
            return -1;
        if (l != r) {
            snprintf(err, errlen, "breaks the constraint %s = %s (%g != %g)",
                     t->constraints[i][0], t->constraints[i][1], l, r);
            return -1;
        }
    }
    return 0;
}

int ao_task_work(const struct ao_task *t, const long long *dims, double *mm, double *vec,
                 double *bytes, char *err, size_t errlen)
{
    char (*names)[16] = (char (*)[16])t->dims;
    if (ao_formula_eval(t->mm_flops, names, dims, t->ndims, mm, err, errlen) < 0 ||
        ao_formula_eval(t->vec_flops, names, dims, t->ndims, vec, err, errlen) < 0 ||
        ao_formula_eval(t->bytes, names, dims, t->ndims, bytes, err, errlen) < 0)
        return -1;
    if (*mm < 0 || *vec < 0 || *bytes <= 0) {
        snprintf(err, errlen, "work formulas must give mm, vec >= 0 and bytes > 0");
        return -1;
    }
    return 0;
}

size_t ao_task_elems(const struct ao_task *t, int i, const long long *dims)
{
    size_t n = 1;
    for (int k = 0; k < t->t[i].rank; k++)
        n *= (size_t)dims[t->t[i].dim[k]];
    return n;
}

/* --- finding tasks --- */

const char *ao_task_roots(void)
{
    static char def[PATH_MAX + 16];
    const char *r = getenv("ACCELOPT_TASK_ROOTS");
    if (r && *r)
        return r;
    if (ao_name(def, sizeof def, "%s/nkibench", ao_home()) < 0)
        def[0] = '\0'; /* no root: every task refused, none found elsewhere */
    return def;
}

int ao_task_allow(const char *dir, char *err, size_t errlen)
{
    char real[PATH_MAX];
    struct ao_buf b = {0};
    int rc = -1;

    if (!realpath(dir, real)) {
        snprintf(err, errlen, "cannot resolve '%s': %s", dir, strerror(errno));
        return -1;
    }
    if (strchr(real, ':')) {
        snprintf(err, errlen, "a task directory may not have ':' in its path: '%s'", real);
        return -1;
    }
    /* first: the task the user named wins over a built-in one of its name */
    ao_buf_printf(&b, "%s:%s", real, ao_task_roots());
    if (setenv("ACCELOPT_TASK_ROOTS", b.data, 1) == 0)
        rc = 0;
    else
        snprintf(err, errlen, "cannot set the task roots: %s", strerror(errno));
    ao_buf_release(&b);
    return rc;
}

/* The next entry of the task roots list at *r into out; 0 at its end. */
static int next_root(const char **r, char *out, size_t n)
{
    while (**r) {
        size_t k = strcspn(*r, ":");
        int fits = k > 0 && k < n;
        if (fits)
            snprintf(out, n, "%.*s", (int)k, *r);
        *r += k + ((*r)[k] == ':');
        if (fits)
            return 1;
    }
    return 0;
}

/* Is the resolved directory `real` a root, or directly inside one? */
static int under_roots(const char *real)
{
    const char *r = ao_task_roots();
    char entry[PATH_MAX], rr[PATH_MAX];

    while (next_root(&r, entry, sizeof entry)) {
        size_t m;
        if (!realpath(entry, rr))
            continue;
        m = strlen(rr);
        if (strcmp(real, rr) == 0 ||
            (strncmp(real, rr, m) == 0 && real[m] == '/' && !strchr(real + m + 1, '/')))
            return 1;
    }
    return 0;
}

int ao_task_find(const char *ref, struct ao_task *t, char *err, size_t errlen)
{
    char entry[PATH_MAX], path[PATH_MAX + 80];
    const char *r = ao_task_roots();
    struct stat st;

    if (!ao_is_identifier(ref, sizeof t->name - 1))
        return ao_task_find_dir(ref, t, err, errlen);
    /* a name: the first root that has it, or is it (a task directory the
     * user named, whose task.json carries the name) */
    while (next_root(&r, entry, sizeof entry)) {
        char e2[AO_ERRLEN];
        if (ao_name(path, sizeof path, "%s/%s", entry, ref) == 0 && stat(path, &st) == 0 &&
            S_ISDIR(st.st_mode))
            return ao_task_find_dir(path, t, err, errlen);
        if (ao_name(path, sizeof path, "%s/task.json", entry) == 0 && stat(path, &st) == 0 && ao_task_find_dir(entry, t, e2, sizeof e2) == 0 &&
            strcmp(t->name, ref) == 0)
            return 0;
    }
    snprintf(err, errlen, "no task '%s' in the task roots (%.300s)", ref, ao_task_roots());
    return -1;
}

int ao_task_named(const char *name, const char *sha256, struct ao_task *t, char *err, size_t errlen)
{
    if (!ao_is_identifier(name, sizeof t->name - 1)) {
        snprintf(err, errlen, "task '%.60s' is not a task name (an identifier)", name);
        return -1;
    }
    return ao_task_find(name, t, err, errlen) < 0 ? -1 : ao_task_same(t, sha256, err, errlen);
}

int ao_task_same(const struct ao_task *t, const char *sha256, char *err, size_t errlen)
{
    if (!sha256 || strcmp(sha256, t->sha256) == 0)
        return 0;
    snprintf(err, errlen, "task %s differs: the sender has %.64s, this machine has %s in %s "
             "(the hash of task.json and its references); install the same task on both",
             t->name, sha256, t->sha256, t->dir);
    return -1;
}

int ao_task_find_dir(const char *dir, struct ao_task *t, char *err, size_t errlen)
{
    struct stat st;
    char real[PATH_MAX];

    if (!realpath(dir, real) || stat(real, &st) < 0 || !S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "task '%.200s' is not a task directory", dir);
        return -1;
    }
    if (!under_roots(real)) {
        snprintf(err, errlen, "task '%.200s' is outside the task roots (ACCELOPT_TASK_ROOTS: "
                 "%.300s)", dir, ao_task_roots());
        return -1;
    }
    return ao_task_load(real, t, err, errlen);
}

int ao_task_from_user(const char *arg, struct ao_task *t, char *err, size_t errlen)
{
    char dir[PATH_MAX];
    struct stat st;

    if (!strchr(arg, '/')) {
        /* a bare name is looked up in the roots, never in the working
         * directory: where the user has a task of that name here, say how
         * to name it */
        size_t n;
        if (ao_task_find(arg, t, err, errlen) == 0)
            return 0;
        if (ao_name(dir, sizeof dir, "%s/task.json", arg) == 0 && stat(dir, &st) == 0 &&
            S_ISREG(st.st_mode) && (n = strlen(err)) < errlen)
            snprintf(err + n, errlen - n, "; did you mean ./%s? (a task directory is named by a path)", arg);
        return -1;
    }
    if (ao_name(dir, sizeof dir, "%s", arg) < 0)
        return ao_errf(err, errlen, "task path of %zu bytes is too long", strlen(arg));
    if (stat(dir, &st) == 0 && !S_ISDIR(st.st_mode)) { /* .../task.json */
        char *slash = strrchr(dir, '/');
        *slash = '\0';
    }
    if (ao_task_allow(dir, err, errlen) < 0)
        return -1;
    return ao_task_find_dir(dir, t, err, errlen);
}
