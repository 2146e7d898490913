/* task.c - accelopt task new: a task directory scaffolded from a reference
 * function (its signature gives the inputs, outputs and sizes; the flags
 * give the shapes and the size classes), checked by the loader the stages
 * use, so that "optimize this file" is two commands */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "core/exitcode.h"
#include "core/log.h"
#include "core/rc.h"
#include "core/task.h"
#include "core/util.h"
#include "front.h"
#include "measure/measurement.h"
#include "profiler/profile.h"
#include "wire/verdict.h"
#include "wire/stage.h"

#define N(a) ((int)(sizeof a / sizeof a[0]))
#define MAX_PARAMS 24

static const struct ao_option task_opts[] = {
    {"reference", 'r', AO_OPT_STR, NULL, "FILE", "the trusted reference: C11 defining `void kernel(...)` "
     "(inputs `const float *`, then outputs `float *`, then the sizes `int`), plain loops, accumulating in double"},
    {"shape", 0, AO_OPT_LIST, NULL, "TENSOR=D1,D2", "a tensor's shape in size names, e.g. x=M,N (each tensor once)"},
    {"size", 0, AO_OPT_LIST, NULL, "CLASS:D=V,...", "a size class, e.g. tiny:M=64,N=256 (tiny at least; cpu, paper)"},
    {"math", 0, AO_OPT_STR, NULL, "TEXT", "what the kernel computes, for the prompts (e.g. \"out = x / (1 + exp(-x))\")"},
    {"mm-flops", 0, AO_OPT_STR, "0", "FORMULA", "matrix-multiply flops of one call, over the size names"},
    {"vec-flops", 0, AO_OPT_STR, NULL, "FORMULA", "elementwise flops of one call (default: one per output element)"},
    {"tolerance", 0, AO_OPT_NUM, "2e-5", "X", "the relative L2 error a kernel may have against the reference"},
    {"dist", 0, AO_OPT_LIST, NULL, "TENSOR=KIND:A,B", "an input's values: normal:MEAN,STD (the default, "
     "normal:0,1), abs_normal:MEAN,STD or uniform:LOW,HIGH"},
    {"stress", 0, AO_OPT_LIST, NULL, "TENSOR=KIND:A,B", "an input's values in the stress check set, which "
     "every kernel must also pass (e.g. x=normal:0,50: a softmax that skips the max subtraction overflows)"},
    {"ref-limit", 0, AO_OPT_NUM, "30", "SEC", "the reference is timed once here, at each size class but "
     "paper, and refused if a call takes longer"},
    {"dir", 0, AO_OPT_STR, NULL, "DIR", "where the task goes (default: ./NAME)"},
    AO_COMMON_OPTIONS,
};

struct param {
    char name[64];
    int kind; /* 0 input, 1 output, 2 size */
};

/* The parameters of `kernel(` in src, classified.  The count, or -1 + err. */
static int parse_signature(const char *src, struct param *p, int max, char *err, size_t errlen)
{
    const char *open = NULL, *close;
    int n = 0;

    /* the word `kernel` followed by its parameter list */
    for (const char *k = src; !open && (k = strstr(k, "kernel")); k += 6) {
        const char *after = k + 6 + strspn(k + 6, " \t\n");
        int word = (k == src || !(isalnum((unsigned char)k[-1]) || k[-1] == '_'));
        if (word && *after == '(')
            open = after;
    }
    if (!open || !(close = strchr(open, ')')))
        return ao_errf(err, errlen, "the reference defines no `kernel(...)` function");
    for (const char *a = open + 1; a < close && n < max;) {
        const char *e = memchr(a, ',', (size_t)(close - a));
        char decl[160], *name;
        size_t len;
        if (!e)
            e = close;
        len = (size_t)(e - a) < sizeof decl - 1 ? (size_t)(e - a) : sizeof decl - 1;
        memcpy(decl, a, len);
        decl[len] = '\0';
        /* the name: the last identifier */
        for (name = decl + strlen(decl); name > decl && (isspace((unsigned char)name[-1])); name--)
            name[-1] = '\0';
        while (name > decl && (isalnum((unsigned char)name[-1]) || name[-1] == '_'))
            name--;
        if (!*name || strlen(name) >= sizeof p[n].name)
            return ao_errf(err, errlen, "cannot read parameter %d of kernel(): '%s'", n + 1, decl);
        snprintf(p[n].name, sizeof p[n].name, "%s", name);
        *name = '\0';
        p[n].kind = strstr(decl, "const") && strstr(decl, "float") && strchr(decl, '*') ? 0
                    : strstr(decl, "float") && strchr(decl, '*')                         ? 1
                    : strstr(decl, "int") && !strchr(decl, '*')                          ? 2
                                                                                           : -1;
        if (p[n].kind < 0)
            return ao_errf(err, errlen, "parameter '%s' is none of `const float *` (an input), `float *` "
                           "(an output) or `int` (a size)", p[n].name);
        n++;
        a = e + 1;
    }
    return n;
}

/* "M,N" -> ["M", "N"] */
static cJSON *name_list(const char *s)
{
    cJSON *a = cJSON_CreateArray();
    char buf[200];

    snprintf(buf, sizeof buf, "%s", s);
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); a && t; t = strtok_r(NULL, ",", &save))
        cJSON_AddItemToArray(a, cJSON_CreateString(t));
    return a;
}

/* The value of the first line of a list option "KEY=..." (or "KEY:..."). */
static const char *list_value(const char *list, const char *key, char sep, char *out, size_t len)
{
    size_t k = strlen(key);

    for (const char *l = list; l && *l;) {
        size_t n = strcspn(l, "\n");
        if (n > k && strncmp(l, key, k) == 0 && l[k] == sep) {
            snprintf(out, len, "%.*s", (int)(n - k - 1), l + k + 1);
            return out;
        }
        l += n + (l[n] == '\n');
    }
    return NULL;
}

/* A distribution from "KIND:A,B" as task.json spells it; NULL + err. */
static cJSON *dist_json(const char *tensor, const char *spec, char *err, size_t errlen)
{
    char kind[32], *end;
    const char *colon = strchr(spec, ':');
    double a, b;
    cJSON *d;

    if (!colon || (size_t)(colon - spec) >= sizeof kind)
        return ao_errf(err, errlen, "tensor '%s': '%s' is not KIND:A,B (e.g. normal:0,1)", tensor, spec), NULL;
    snprintf(kind, sizeof kind, "%.*s", (int)(colon - spec), spec);
    a = strtod(colon + 1, &end);
    if (end == colon + 1 || *end != ',' || (b = strtod(end + 1, &end), *end != '\0'))
        return ao_errf(err, errlen, "tensor '%s': '%s' is not KIND:A,B (two numbers)", tensor, spec), NULL;
    if (strcmp(kind, "normal") && strcmp(kind, "abs_normal") && strcmp(kind, "uniform"))
        return ao_errf(err, errlen, "tensor '%s': no distribution '%s' (normal, abs_normal, uniform)", tensor,
                       kind), NULL;
    d = cJSON_CreateObject();
    cJSON_AddStringToObject(d, "kind", kind);
    cJSON_AddNumberToObject(d, strcmp(kind, "uniform") ? "mean" : "low", a);
    cJSON_AddNumberToObject(d, strcmp(kind, "uniform") ? "std" : "high", b);
    return d;
}

/* Every TENSOR of a list option ("TENSOR=..." lines) is one of the inputs;
 * 0, or -1 + err. */
static int names_inputs(const char *list, const char *opt, const struct param *p, int n, char *err, size_t errlen)
{
    for (const char *l = list; l && *l;) {
        size_t len = strcspn(l, "\n"), k = strcspn(l, "=");
        int found = 0;
        for (int i = 0; i < n; i++)
            found |= p[i].kind == 0 && k < len && strlen(p[i].name) == k && strncmp(p[i].name, l, k) == 0;
        if (!found)
            return ao_errf(err, errlen, "--%s %.*s: not one of the reference's inputs", opt, (int)len, l);
        l += len + (l[len] == '\n');
    }
    return 0;
}

/* --size's classes into task.json's "sizes": tiny:M=64,N=256, one a
 * line; tiny is needed.  0, or -1 + err (a usage error). */
static int sizes_json(const char *classes, cJSON *sizes, char *err, size_t errlen)
{
    for (const char *l = classes; l && *l;) {
        size_t len = strcspn(l, "\n");
        char line[300], *colon;
        cJSON *sz;
        snprintf(line, sizeof line, "%.*s", (int)len, l);
        l += len + (l[len] == '\n');
        if (!(colon = strchr(line, ':')))
            return ao_errf(err, errlen, "--size '%s' is not CLASS:D=V,... (e.g. tiny:M=64,N=256)", line);
        *colon = '\0';
        sz = cJSON_AddObjectToObject(sizes, line);
        for (char *save = NULL, *kv = strtok_r(colon + 1, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
            char *eq = strchr(kv, '=');
            if (!eq)
                return ao_errf(err, errlen, "--size %s: '%s' is not D=V", line, kv);
            *eq = '\0';
            cJSON_AddNumberToObject(sz, kv, strtod(eq + 1, NULL));
        }
    }
    if (!cJSON_GetObjectItemCaseSensitive(sizes, "tiny"))
        return ao_errf(err, errlen, "--size tiny:D=V,... is needed (runs and tests start at tiny)");
    return 0;
}

/* An input's "dist" (--dist, else normal:0,1) and "stress" (--stress),
 * added to its tensor t.  0, or -1 + err (a usage error). */
static int input_dists(const struct ao_config *c, const char *name, cJSON *t, char *err, size_t errlen)
{
    char spec[100];
    cJSON *d = dist_json(name, list_value(ao_config_str(c, "dist"), name, '=', spec, sizeof spec) ? spec
                                                                                                 : "normal:0,1",
                         err, errlen);

    if (!d)
        return -1;
    cJSON_AddItemToObject(t, "dist", d);
    if (list_value(ao_config_str(c, "stress"), name, '=', spec, sizeof spec)) {
        if (!(d = dist_json(name, spec, err, errlen)))
            return -1;
        cJSON_AddItemToObject(t, "stress", d);
    }
    return 0;
}

/* The task directory from the flags: 0, or AO_RC_SETTING + err (the flags are wrong:
 * a usage error) or -1 + err (it could not be written). */
static int write_task(const struct ao_config *c, const char *name, const char *dir, const char *ref,
                      const struct param *p, int n, char *err, size_t errlen)
{
    cJSON *j = cJSON_CreateObject(), *ins = cJSON_CreateArray(), *outs = cJSON_CreateArray(),
          *dims = cJSON_CreateObject(), *sizes = cJSON_CreateObject(), *work = cJSON_CreateObject();
    struct ao_buf sig = {0}, bytes = {0}, vec = {0};
    const char *shapes = ao_config_str(c, "shape"), *classes = ao_config_str(c, "size");
    char shape[200], path[PATH_MAX], *text = NULL;
    int rc = -1;

    if (names_inputs(ao_config_str(c, "dist"), "dist", p, n, err, errlen) < 0 ||
        names_inputs(ao_config_str(c, "stress"), "stress", p, n, err, errlen) < 0) {
        rc = AO_RC_SETTING;
        goto out;
    }
    ao_buf_printf(&sig, "void kernel(");
    ao_buf_printf(&bytes, "4*(");
    for (int i = 0; i < n; i++) {
        cJSON *t;
        ao_buf_printf(&sig, "%s%s%s", i ? ", " : "", p[i].kind == 0 ? "const float *" : p[i].kind == 1 ? "float *" : "int ",
                      p[i].name);
        if (p[i].kind == 2) {
            cJSON_AddItemToObject(dims, p[i].name, cJSON_CreateObject());
            continue;
        }
        if (!list_value(shapes, p[i].name, '=', shape, sizeof shape)) {
            ao_errf(err, errlen, "no --shape for tensor '%s' (e.g. --shape %s=M,N)", p[i].name, p[i].name);
            rc = AO_RC_SETTING;
            goto out;
        }
        t = cJSON_CreateObject();
        cJSON_AddStringToObject(t, "name", p[i].name);
        cJSON_AddItemToObject(t, "shape", name_list(shape));
        if (p[i].kind == 0 && input_dists(c, p[i].name, t, err, errlen) < 0) {
            cJSON_Delete(t);
            rc = AO_RC_SETTING;
            goto out;
        }
        cJSON_AddItemToArray(p[i].kind == 0 ? ins : outs, t);
        /* bytes moved: every tensor once; elementwise flops: one per output element */
        for (char *s = shape; *s; s++)
            if (*s == ',')
                *s = '*';
        ao_buf_printf(&bytes, "%s%s", bytes.len > 3 ? " + " : "", shape);
        if (p[i].kind == 1)
            ao_buf_printf(&vec, "%s%s", vec.len ? " + " : "", shape);
    }
    ao_buf_printf(&sig, ")");
    ao_buf_printf(&bytes, ")");
    if (sizes_json(classes, sizes, err, errlen) < 0) {
        rc = AO_RC_SETTING;
        goto out;
    }
    cJSON_AddStringToObject(work, "mm_flops", ao_config_str(c, "mm-flops"));
    cJSON_AddStringToObject(work, "vec_flops", ao_config_str(c, "vec-flops") ? ao_config_str(c, "vec-flops")
                                                                            : vec.data ? vec.data : "0");
    cJSON_AddStringToObject(work, "bytes", bytes.data);
    cJSON_AddStringToObject(j, "name", name);
    cJSON_AddStringToObject(j, "workload", "scaffolded by accelopt task new");
    cJSON_AddStringToObject(j, "math", ao_config_str(c, "math") ? ao_config_str(c, "math") : "as the reference computes");
    cJSON_AddItemToObject(j, "inputs", ins);
    cJSON_AddItemToObject(j, "outputs", outs);
    cJSON_AddItemToObject(j, "dims", dims);
    cJSON_AddItemToObject(j, "sizes", sizes);
    cJSON_AddItemToObject(j, "work", work);
    ins = outs = dims = sizes = work = NULL;
    cJSON_AddNumberToObject(j, "tolerance", ao_config_num(c, "tolerance"));
    cJSON_AddStringToObject(j, "signature", sig.data);
    text = cJSON_Print(j);
    if (mkdir(dir, 0755) < 0) {
        rc = ao_errf(err, errlen, "cannot make '%s': %s", dir, strerror(errno));
        goto out;
    }
    if (ao_name(path, sizeof path, "%s/task.json", dir) < 0 || ao_write_file(path, text, strlen(text), err, errlen) < 0 ||
        ao_name(path, sizeof path, "%s/reference.c", dir) < 0 || ao_write_file(path, ref, strlen(ref), err, errlen) < 0 ||
        ao_name(path, sizeof path, "%s/baseline.c", dir) < 0 || ao_write_file(path, ref, strlen(ref), err, errlen) < 0)
        goto out;
    rc = 0;
out:
    cJSON_Delete(j);
    cJSON_Delete(ins);
    cJSON_Delete(outs);
    cJSON_Delete(dims);
    cJSON_Delete(sizes);
    cJSON_Delete(work);
    cJSON_free(text);
    ao_buf_release(&sig);
    ao_buf_release(&bytes);
    ao_buf_release(&vec);
    return rc;
}

/* The files task new made, and its directory, gone again. */
static void remove_task(const char *dir)
{
    char path[PATH_MAX];
    static const char *const files[] = {"task.json", "reference.c", "baseline.c"};

    for (int i = 0; i < 3; i++)
        if (ao_name(path, sizeof path, "%s/%s", dir, files[i]) == 0)
            unlink(path);
    rmdir(dir);
}

/* The reference timed once on the task's own inputs, at each size class
 * but paper (which may rightly take long), through the profiler a run
 * uses: its check sets run the reference, then the baseline (a copy of it)
 * is timed.  A reference that does not finish a call in limit_s, or does
 * not pass its own checks, is refused here, not at a run's first profile.
 * 0 (the calls said), or -1 + err. */
static int time_reference(const char *dir, const struct ao_task *t, double limit_s, char *err, size_t errlen)
{
    struct ao_profiler_opts o = AO_PROFILER_DEFAULTS;
    struct ao_profiler *p;
    char path[PATH_MAX], *src = NULL;
    int rc = -1;

    cJSON *sizes = cJSON_Parse(t->sizes_json), *sz;

    o.timeout_s = o.ref_timeout_s = limit_s;
    o.budget_s = 0.05, o.warmup_s = 0.01, o.max_calls = 5;
    if (ao_name(path, sizeof path, "%s/baseline.c", dir) < 0 || !(src = ao_read_file(path, NULL, err, errlen))) {
        cJSON_Delete(sizes);
        return ao_errf(err, errlen, "cannot read the task's baseline.c");
    }
    if (!(p = ao_profiler_new(&o, err, errlen))) {
        free(src);
        cJSON_Delete(sizes);
        return -1;
    }
    cJSON_ArrayForEach(sz, sizes) {
        struct ao_measurement m;
        const char *size = sz->string;
        char e[AO_ERRLEN] = "";
        if (strcmp(size, "paper") == 0)
            continue;
        ao_measurement_init(&m);
        if (ao_profiler_run(p, t, size, src, NAN, &m, e, sizeof e) < 0 || m.verdict != AO_V_OK) {
            ao_errf(err, errlen, "the reference at size %s: %s (a reference must finish a call within "
                    "--ref-limit, %.0f s)", size, m.reason && m.reason[0] ? m.reason : e, limit_s);
            ao_measurement_release(&m);
            goto out;
        }
        ao_info("the reference at %s: %.3g ms a call", size, m.latency_ns / 1e6);
        ao_measurement_release(&m);
    }
    rc = 0;
out:
    ao_profiler_free(p);
    free(src);
    cJSON_Delete(sizes);
    return rc;
}

int cmd_task(int argc, char **argv)
{
    struct ao_config c;
    struct param p[MAX_PARAMS];
    struct ao_task t;
    char err[AO_ERRLEN], dir[PATH_MAX], *ref = NULL;
    int code, n, rc;

    if (ao_tool_setup("accelopt", &c, task_opts, N(task_opts), argc, argv,
                      "accelopt task new NAME --reference FILE --shape T=D,... --size tiny:D=V,... [options]",
                      &code) < 0)
        return code;
    code = AO_EXIT_USAGE;
    if (c.nargs != 2 || strcmp(c.args[0], "new") != 0 || !ao_config_str(&c, "reference")) {
        ao_err("usage: accelopt task new NAME --reference FILE --shape T=D,... --size tiny:D=V,... (see --help)");
        goto out;
    }
    if (!ao_is_identifier(c.args[1], 63)) {
        ao_err("the task's name must be a C identifier, not '%s'", c.args[1]);
        goto out;
    }
    /* a path (with a '/'): what accelopt run and profile take as a directory */
    if (ao_name(dir, sizeof dir, "%s%s", ao_config_str(&c, "dir") && strchr(ao_config_str(&c, "dir"), '/') ? "" : "./",
                ao_config_str(&c, "dir") ? ao_config_str(&c, "dir") : c.args[1]) < 0) {
        ao_err("--dir is too long");
        goto out;
    }
    /* a reference that cannot be read or parsed, a directory that is there
     * and flags that do not fit the reference: usage errors (2), as the
     * README's exit codes say; only writing the task can fail otherwise */
    if (!(ref = ao_read_file_max(ao_config_str(&c, "reference"), 1u << 20, NULL, err, sizeof err)) ||
        (n = parse_signature(ref, p, MAX_PARAMS, err, sizeof err)) < 0) {
        ao_err("%s", err);
        goto out;
    }
    if (access(dir, F_OK) == 0) {
        ao_err("'%s' is there already: give another --dir, or remove it", dir);
        goto out;
    }
    if ((rc = write_task(&c, c.args[1], dir, ref, p, n, err, sizeof err)) < 0) {
        ao_err("%s", err);
        code = ao_exit_for(rc);
        goto out;
    }
    code = AO_EXIT_FAIL;
    /* what the stages will check: checked now, or the directory goes */
    if (ao_task_load(dir, &t, err, sizeof err) < 0 || ao_task_size(&t, "tiny", (long long[AO_MAX_DIMS]){0}, err, sizeof err) < 0) {
        remove_task(dir);
        ao_err("the task does not load: %s", err); /* the flags' shapes and sizes do not fit */
        code = AO_EXIT_USAGE;
        goto out;
    }
    if (time_reference(dir, &t, ao_config_num(&c, "ref-limit"), err, sizeof err) < 0) {
        remove_task(dir);
        ao_err("%s; nothing made", err);
        code = AO_EXIT_USAGE;
        goto out;
    }
    printf("%s\n", dir);
    ao_info("made %s/: task.json, reference.c, and baseline.c (the reference again: replace it with your "
            "kernel, or give yours to `accelopt run %s --baseline FILE`; knobs `#define NAME v /* knob: v1 v2 */` "
            "let the builtin model move them). Check: accelopt profile --task %s %s/baseline.c",
            dir, dir, dir, dir);
    code = AO_EXIT_OK;
out:
    free(ref);
    ao_config_release(&c);
    return code;
}
