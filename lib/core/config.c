/* config.c - options with layering: defaults < --config FILE < ACCELOPT_* env < flags */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/config.h"
#include "core/util.h"

static int find(const struct ao_config *c, const char *name, size_t n)
{
    for (int i = 0; i < c->nopts; i++)
        if (strlen(c->opts[i].name) == n && strncmp(c->opts[i].name, name, n) == 0)
            return i;
    return -1;
}

static int validate(const struct ao_option *o, const char *v, const char *where,
                    char *err, size_t errlen)
{
    char *end;

    errno = 0;
    switch (o->kind) {
    case AO_OPT_INT:
        strtol(v, &end, 10);
        if (errno || end == v || *end) {
            snprintf(err, errlen, "%s: '%s' wants an integer, got '%s'", where, o->name, v);
            return -1;
        }
        break;
    case AO_OPT_NUM:
        strtod(v, &end);
        if (errno || end == v || *end) {
            snprintf(err, errlen, "%s: '%s' wants a number, got '%s'", where, o->name, v);
            return -1;
        }
        break;
    case AO_OPT_BOOL:
        if (strcmp(v, "1") && strcmp(v, "0") && strcmp(v, "true") && strcmp(v, "false") &&
            strcmp(v, "yes") && strcmp(v, "no")) {
            snprintf(err, errlen, "%s: '%s' wants true or false, got '%s'", where, o->name, v);
            return -1;
        }
        break;
    case AO_OPT_STR:
    case AO_OPT_LIST:
        /* one environment variable holds a whole list, a value a line */
        if (strchr(v, '\n') && !(o->kind == AO_OPT_LIST && strcmp(where, "env") == 0)) {
            snprintf(err, errlen, "%s: '%s' may not hold a newline", where, o->name);
            return -1;
        }
        break;
    }
    return 0;
}

static int set(struct ao_config *c, int i, const char *v, const char *src,
               char *err, size_t errlen)
{
    char *dup;

    if (validate(&c->opts[i], v, src, err, errlen) < 0)
        return -1;
    dup = ao_strdup(v);
    /* a list grows within one layer; a later layer replaces it */
    if (c->opts[i].kind == AO_OPT_LIST && c->values[i] && c->source[i] &&
        strcmp(c->source[i], src) == 0) {
        char *joined = ao_malloc(strlen(c->values[i]) + strlen(v) + 2);
        sprintf(joined, "%s\n%s", c->values[i], v);
        free(dup);
        dup = joined;
    }
    free(c->values[i]);
    c->values[i] = dup;
    c->source[i] = src;
    return 0;
}

static char *trim(char *s)
{
    char *e;
    while (isspace((unsigned char)*s))
        s++;
    e = s + strlen(s);
    while (e > s && isspace((unsigned char)e[-1]))
        *--e = '\0';
    return s;
}

static int load_file(struct ao_config *c, const char *path, char *err, size_t errlen)
{
    char ferr[AO_ERRLEN];
    char *text = ao_read_file(path, NULL, ferr, sizeof ferr);
    char *line, *save = NULL;
    int lineno = 0, rc = -1;

    if (!text) {
        snprintf(err, errlen, "%s", ferr);
        return -1;
    }
    for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *eq, *key, *val;
        int i;
        lineno++;
        line = trim(line);
        if (!*line || *line == '#')
            continue;
        eq = strchr(line, '=');
        if (!eq) {
            snprintf(err, errlen, "config '%s' line %d: expected 'key = value'", path, lineno);
            goto out;
        }
        *eq = '\0';
        key = trim(line);
        val = trim(eq + 1);
        i = find(c, key, strlen(key));
        if (i < 0 || strcmp(key, "config") == 0) {
            snprintf(err, errlen, "config '%s' line %d: unknown key '%s'", path, lineno, key);
            goto out;
        }
        if (set(c, i, val, "file", err, errlen) < 0)
            goto out;
    }
    rc = 0;
out:
    free(text);
    return rc;
}

static int load_env(struct ao_config *c, char *err, size_t errlen)
{
    for (int i = 0; i < c->nopts; i++) {
        char var[128] = "ACCELOPT_";
        size_t n = strlen(var);
        const char *v;
        for (const char *p = c->opts[i].name; *p && n < sizeof var - 1; p++)
            var[n++] = *p == '-' ? '_' : (char)toupper((unsigned char)*p);
        var[n] = '\0';
        if (strcmp(c->opts[i].name, "config") == 0 || strcmp(c->opts[i].name, "help") == 0 ||
            strcmp(c->opts[i].name, "version") == 0)
            continue;
        v = getenv(var);
        if (v && set(c, i, v, "env", err, errlen) < 0)
            return -1;
    }
    return 0;
}

/* The edit distance of a and b (at most 32 characters each; longer: far). */
static int distance(const char *a, size_t na, const char *b)
{
    size_t nb = strlen(b);
    int row[33];

    if (na > 32 || nb > 32)
        return 99;
    for (size_t j = 0; j <= nb; j++)
        row[j] = (int)j;
    for (size_t i = 1; i <= na; i++) {
        int diag = row[0];
        row[0] = (int)i;
        for (size_t j = 1; j <= nb; j++) {
            int up = row[j], best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            diag = up;
            row[j] = best;
        }
    }
    return row[nb];
}

/* The option a mistyped long name most likely meant: one it begins, or one
 * within two edits (git's "did you mean"); NULL when none is close. */
static const char *nearest(const struct ao_config *c, const char *name, size_t n)
{
    const char *best = NULL;
    int bd = 3;

    for (int j = 0; j < c->nopts; j++) {
        const char *o = c->opts[j].name;
        int d = n >= 3 && strncmp(o, name, n) == 0 ? 1 : distance(name, n, o);
        if (d < bd)
            bd = d, best = o;
    }
    return best;
}

/* Parse flags into c; with only_config, look for --config alone. */
static int load_flags(struct ao_config *c, int argc, char **argv, int only_config,
                      char *err, size_t errlen)
{
    int i, ends = 0;

    c->nargs = 0;
    for (i = 1; i < argc; i++) {
        char *a = argv[i];
        const char *val = NULL;
        int k;

        if (ends || a[0] != '-' || a[1] == '\0') {
            c->args[c->nargs++] = a;
            continue;
        }
        if (strcmp(a, "--") == 0) {
            ends = 1;
            continue;
        }
        if (a[1] == '-') {
            char *eq = strchr(a + 2, '=');
            size_t n = eq ? (size_t)(eq - (a + 2)) : strlen(a + 2);
            k = find(c, a + 2, n);
            if (eq)
                val = eq + 1;
            /* --no-NAME turns a boolean NAME off */
            if (k < 0 && !eq && n > 3 && strncmp(a + 2, "no-", 3) == 0 &&
                (k = find(c, a + 5, n - 3)) >= 0) {
                if (c->opts[k].kind != AO_OPT_BOOL)
                    k = -1;
                else
                    val = "false";
            }
        } else {
            k = -1;
            for (int j = 0; j < c->nopts; j++)
                if (c->opts[j].short_name && c->opts[j].short_name == a[1] && a[2] == '\0')
                    k = j;
        }
        if (k < 0) {
            const char *near = a[1] == '-' ? nearest(c, a + 2, strcspn(a + 2, "=")) : NULL;
            if (near)
                snprintf(err, errlen, "unknown option '%s'; did you mean --%s? (see --help)", a, near);
            else
                snprintf(err, errlen, "unknown option '%s' (see --help)", a);
            return -1;
        }
        if (c->opts[k].kind == AO_OPT_BOOL) {
            if (!val)
                val = "true";
        } else if (!val) {
            if (i + 1 >= argc) {
                snprintf(err, errlen, "option '%s' needs a value", a);
                return -1;
            }
            val = argv[++i];
        }
        if (only_config != (strcmp(c->opts[k].name, "config") == 0))
            continue;
        if (set(c, k, val, "flag", err, errlen) < 0)
            return -1;
    }
    return 0;
}

int ao_config_load(struct ao_config *c, const struct ao_option *opts, int nopts,
                   int argc, char **argv, char *err, size_t errlen)
{
    memset(c, 0, sizeof *c);
    c->opts = opts;
    c->nopts = nopts;
    c->values = ao_calloc((size_t)nopts, sizeof *c->values);
    c->source = ao_calloc((size_t)nopts, sizeof *c->source);
    c->args = ao_calloc((size_t)argc + 1, sizeof *c->args);
    for (int i = 0; i < nopts; i++)
        if (opts[i].def && set(c, i, opts[i].def, "default", err, errlen) < 0)
            return -1;
    if (load_flags(c, argc, argv, 1, err, errlen) < 0)
        return -1;
    if (ao_config_str(c, "config") && load_file(c, ao_config_str(c, "config"), err, errlen) < 0)
        return -1;
    if (load_env(c, err, errlen) < 0)
        return -1;
    return load_flags(c, argc, argv, 0, err, errlen);
}

void ao_config_release(struct ao_config *c)
{
    for (int i = 0; c->values && i < c->nopts; i++)
        free(c->values[i]);
    free(c->values);
    free(c->source);
    free(c->args);
    memset(c, 0, sizeof *c);
}

static int must_find(const struct ao_config *c, const char *name)
{
    int i = find(c, name, strlen(name));
    if (i < 0)
        abort(); /* a programming error: the tool asked for an option it lacks */
    return i;
}

const char *ao_config_str(const struct ao_config *c, const char *name)
{
    return c->values[must_find(c, name)];
}

long ao_config_int(const struct ao_config *c, const char *name)
{
    const char *v = ao_config_str(c, name);
    return v ? strtol(v, NULL, 10) : 0;
}

double ao_config_num(const struct ao_config *c, const char *name)
{
    const char *v = ao_config_str(c, name);
    return v ? strtod(v, NULL) : 0.0;
}

int ao_config_bool(const struct ao_config *c, const char *name)
{
    const char *v = ao_config_str(c, name);
    return v && (!strcmp(v, "1") || !strcmp(v, "true") || !strcmp(v, "yes"));
}

const char *ao_config_source(const struct ao_config *c, const char *name)
{
    const char *s = c->source[must_find(c, name)];
    return s ? s : "unset";
}

void ao_config_usage(FILE *out, const char *synopsis, const struct ao_option *opts, int nopts)
{
    fprintf(out, "usage: %s\n\noptions:\n", synopsis);
    for (int i = 0; i < nopts; i++) {
        char left[64];
        if (!opts[i].help)
            continue; /* another tool's key, accepted so one config file serves all */
        snprintf(left, sizeof left, "%c%c%s--%s%s%s", opts[i].short_name ? '-' : ' ',
                 opts[i].short_name ? opts[i].short_name : ' ', opts[i].short_name ? ", " : "  ",
                 opts[i].name, opts[i].metavar ? " " : "", opts[i].metavar ? opts[i].metavar : "");
        fprintf(out, "  %-28s %s", left, opts[i].help);
        if (opts[i].def && opts[i].kind != AO_OPT_BOOL)
            fprintf(out, " (default: %s)", opts[i].def);
        fputc('\n', out);
    }
    fprintf(out, "\nEvery option can also be set as 'name = value' in the --config file or as\n"
                 "ACCELOPT_NAME in the environment; flags win over the environment, which\n"
                 "wins over the file, which wins over the defaults.\n");
}
