/* report_html.c - accelopt report: a run's report.html, one self-contained
 * page (tools/accelopt/report/: the template, its script and styles, and
 * the Vega, Vega-Lite and jsdiff bundles from npm, all inlined) drawn from
 * the files of runs/<id>/ */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/alloc.h"
#include "core/exitcode.h"
#include "core/log.h"
#include "core/redis.h"
#include "core/util.h"
#include "core/version.h"
#include "front.h"
#include "report.h"
#include "state/runstate.h"
#include "state/runstore.h"
#include "targets/target.h"
#include "wire/msg.h"
#include "wire/names.h"
#include "wire/stage.h"

#include <hiredis/hiredis.h>

#define N(a) ((int)(sizeof a / sizeof a[0]))
#define MAX_TASKS 256
#define REPORT_DIR_MAX 600 /* a run's directory: what the paths under it leave room for */
#define LINES_MAX (64u << 20) /* one run file read whole: history with every source */

/* the libraries, as npm installs them under the report directory */
static const char *const libs[] = {
    "node_modules/vega/build/vega.min.js",
    "node_modules/vega-lite/build/vega-lite.min.js",
    "node_modules/diff/dist/diff.min.js",
};

static void report_dir(char *buf, size_t len)
{
    snprintf(buf, len, "%s/tools/accelopt/report", ao_home());
}

int report_html_available(char *err, size_t errlen)
{
    char dir[600], path[900];

    report_dir(dir, sizeof dir);
    for (int i = 0; i < N(libs); i++) {
        if (ao_name(path, sizeof path, "%s/%s", dir, libs[i]) < 0 || access(path, R_OK) != 0)
            return snprintf(err, errlen, "the report's libraries are missing (%s): run `make deps` "
                            "(it fetches them with npm)", path), -1;
    }
    return 0;
}

/* A JSON Lines file as an array (bad lines skipped), or an empty one. */
static cJSON *read_lines(const char *path)
{
    char err[AO_ERRLEN], *text = ao_read_file_max(path, LINES_MAX, NULL, err, sizeof err);
    cJSON *a = cJSON_CreateArray();

    for (char *line = text, *next; a && line && *line; line = next) {
        cJSON *j;
        next = strchr(line, '\n');
        if (next)
            *next++ = 0;
        else
            next = line + strlen(line);
        if (*line && (j = cJSON_Parse(line)) && cJSON_IsObject(j))
            cJSON_AddItemToArray(a, j);
        else if (*line)
            cJSON_Delete(j), ao_warn("%s: a line that is not a JSON object; left out", path);
    }
    free(text);
    return a;
}

static cJSON *read_json(const char *path)
{
    char err[AO_ERRLEN], *text = ao_read_file_max(path, LINES_MAX, NULL, err, sizeof err);
    cJSON *j = text ? cJSON_Parse(text) : NULL;
    free(text);
    return j;
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Everything the page shows, from the run directory. */
static cJSON *run_data(const char *dir, char *err, size_t errlen)
{
    cJSON *d = cJSON_CreateObject(), *tasks, *run = NULL, *mem, *titles;
    char path[1200], now[32], *names[MAX_TASKS];
    int n = 0;
    DIR *dp = opendir(dir);
    struct dirent *e;
    time_t t = time(NULL);

    if (!dp) {
        cJSON_Delete(d);
        return snprintf(err, errlen, "cannot read the run directory '%s': %s", dir,
                        strerror(errno)), NULL;
    }
    while ((e = readdir(dp)) && n < MAX_TASKS) {
        struct stat st;
        if (ao_name(path, sizeof path, "%s/%s/done.json", dir, e->d_name) == 0 && e->d_name[0] != '.' && stat(path, &st) == 0 && S_ISREG(st.st_mode) &&
            (names[n] = ao_strdup(e->d_name)))
            n++;
    }
    closedir(dp);
    qsort(names, (size_t)n, sizeof *names, cmp_name);

    if (ao_name(path, sizeof path, "%s/run.json", dir) < 0 || !(run = read_json(path)) || !cJSON_IsObject(run)) {
        cJSON_Delete(run);
        run = cJSON_CreateObject();
    }
    strftime(now, sizeof now, "%Y-%m-%d %H:%M UTC", gmtime(&t));
    cJSON_DeleteItemFromObjectCaseSensitive(run, "generated_at");
    cJSON_AddStringToObject(run, "generated_at", now);
    cJSON_AddItemToObject(d, "run", run);
    tasks = cJSON_AddArrayToObject(d, "tasks");
    for (int i = 0; i < n; i++) {
        cJSON *o = cJSON_CreateObject(), *done;
        cJSON_AddStringToObject(o, "task", names[i]);
        done = ao_name(path, sizeof path, "%s/%s/done.json", dir, names[i]) == 0 ? read_json(path) : NULL;
        if (cJSON_IsObject(done) && ao_json_str(done, "run", NULL))
            cJSON_AddStringToObject(o, "run", ao_json_str(done, "run", NULL));
        if (!ao_json_str(run, "target", NULL) && ao_json_str(done, "target", NULL))
            cJSON_AddStringToObject(run, "target", ao_json_str(done, "target", NULL));
        cJSON_AddItemToObject(o, "done", done ? done : cJSON_CreateNull());
        /* a name that would not fit is no file (dir is bounded; names[i] a directory's name) */
        cJSON_AddItemToObject(o, "kernels", read_lines(ao_name(path, sizeof path, "%s/%s/history.jsonl", dir,
                                                               names[i]) ? "" : path));
        cJSON_AddItemToObject(o, "experiences", read_lines(ao_name(path, sizeof path, "%s/%s/experiences.jsonl",
                                                                   dir, names[i]) ? "" : path));
        {
            cJSON *u = ao_name(path, sizeof path, "%s/%s/usage.json", dir, names[i]) ? NULL : read_json(path);
            cJSON_AddItemToObject(o, "usage", u ? u : cJSON_CreateNull());
        }
        cJSON_AddItemToArray(tasks, o);
        free(names[i]);
    }
    /* the memory's titles, for the ids a plan saw */
    mem = read_lines(ao_name(path, sizeof path, "%s/memory.jsonl", dir) ? "" : path);
    titles = cJSON_AddArrayToObject(d, "memory");
    for (cJSON *it = mem ? mem->child : NULL; it && titles; it = it->next) {
        cJSON *x = cJSON_CreateObject();
        cJSON_AddStringToObject(x, "id", ao_json_str(it, "id", ""));
        cJSON_AddStringToObject(x, "title", ao_json_str(it, "title", ""));
        cJSON_AddItemToArray(titles, x);
    }
    cJSON_Delete(mem);
    return d;
}

/* JSON for inside <script>: '<' only ever occurs inside JSON strings, so
 * writing it as \u003c keeps the text valid JSON and no string can end
 * the script element or open a comment. */
static void put_json(struct ao_buf *b, const cJSON *j)
{
    char *s = cJSON_PrintUnformatted(j);

    for (const char *p = s; p && *p; p++)
        ao_buf_append(b, *p == '<' ? "\\u003c" : p, *p == '<' ? 6 : 1);
    cJSON_free(s);
}

static void put_html_text(struct ao_buf *b, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '<': ao_buf_append(b, "&lt;", 4); break;
        case '>': ao_buf_append(b, "&gt;", 4); break;
        case '&': ao_buf_append(b, "&amp;", 5); break;
        case '"': ao_buf_append(b, "&quot;", 6); break;
        default: ao_buf_append(b, s, 1);
        }
    }
}

/* A library or our own script, inlined: it must not be able to end its
 * <script> element, and its source map (a fetch) is dropped. */
static int put_script(struct ao_buf *b, const char *path, int tagged, char *err, size_t errlen)
{
    char *text = ao_read_file(path, NULL, err, errlen), *map;

    if (!text)
        return -1;
    for (const char *p = text; (p = strchr(p, '<')); p++)
        if (!strncasecmp(p, "</script", 8) || !strncmp(p, "<!--", 4)) {
            free(text);
            return snprintf(err, errlen, "%s holds '</script' or '<!--': it cannot be inlined",
                            path), -1;
        }
    if ((map = strstr(text, "//# sourceMappingURL=")))
        *map = 0;
    if (tagged)
        ao_buf_printf(b, "<script>\n");
    ao_buf_append(b, text, strlen(text));
    if (tagged)
        ao_buf_printf(b, "\n</script>\n");
    free(text);
    return 0;
}

int report_html(const char *dir, const char *out, char *err, size_t errlen)
{
    char rdir[600], path[1200], *tpl = NULL, title[300];
    struct ao_buf b = {0};
    cJSON *data = NULL;
    const char *p, *id;
    int rc = -1;

    report_dir(rdir, sizeof rdir);
    if (report_html_available(err, errlen) < 0)
        return -1;
    if (ao_name(path, sizeof path, "%s/report.html", rdir) < 0) {
        ao_errf(err, errlen, "the report's directory '%s' is too long", rdir);
        goto out;
    }
    if (!(tpl = ao_read_file(path, NULL, err, errlen)) || !(data = run_data(dir, err, errlen)))
        goto out;
    id = ao_json_str(cJSON_GetObjectItemCaseSensitive(data, "run"), "id", NULL);
    if (!id) { /* a run directory is named by its id */
        id = strrchr(dir, '/') && strrchr(dir, '/')[1] ? strrchr(dir, '/') + 1 : dir;
    }
    snprintf(title, sizeof title, "accelopt run %.200s", id);
    /* the template's markers, in the order they come */
    for (p = tpl; *p;) {
        const char *m = strstr(p, "@@");
        const char *e = m ? strstr(m + 2, "@@") : NULL;
        if (!m || !e) {
            ao_buf_append(&b, p, strlen(p));
            break;
        }
        ao_buf_append(&b, p, (size_t)(m - p));
        p = e + 2;
        if (!strncmp(m, "@@TITLE@@", 9)) {
            put_html_text(&b, title);
        } else if (!strncmp(m, "@@GENERATOR@@", 13)) {
            put_html_text(&b, "accelopt " AO_VERSION);
        } else if (!strncmp(m, "@@DATA@@", 8)) {
            put_json(&b, data);
        } else if (!strncmp(m, "@@STYLE@@", 9)) {
            char *css;
            if (ao_name(path, sizeof path, "%s/report.css", rdir) < 0 || !(css = ao_read_file(path, NULL, err, errlen)))
                goto out;
            ao_buf_append(&b, css, strlen(css));
            free(css);
        } else if (!strncmp(m, "@@LIBS@@", 8)) {
            for (int i = 0; i < N(libs); i++) {
                if (ao_name(path, sizeof path, "%s/%s", rdir, libs[i]) < 0 || put_script(&b, path, 1, err, errlen) < 0)
                    goto out;
            }
        } else if (!strncmp(m, "@@APP@@", 7)) {
            if (ao_name(path, sizeof path, "%s/report.js", rdir) < 0 || put_script(&b, path, 0, err, errlen) < 0)
                goto out;
        } else { /* not a marker: as it was */
            ao_buf_append(&b, m, (size_t)(p - m));
        }
    }
    if (!b.data) {
        snprintf(err, errlen, "the report's template is empty");
        goto out;
    }
    if (strcmp(out, "-") == 0) { /* to stdout */
        rc = fwrite(b.data, 1, b.len, stdout) == b.len && fflush(stdout) == 0
                 ? 0 : ao_errf(err, errlen, "cannot write the page to stdout");
        goto out;
    }
    /* written whole, then renamed: a reader never sees half a page */
    rc = ao_replace_file(out, b.data, b.len, err, errlen);
out:
    ao_buf_release(&b);
    cJSON_Delete(data);
    free(tpl);
    return rc;
}

static const struct ao_option report_opts[] = {
    {"out", 'o', AO_OPT_STR, NULL, "FILE", "where the page goes ('-': stdout; default: RUN-DIR/report.html)"},
    {"redis", 0, AO_OPT_STR, NULL, "URL", "RUN is a run id in this redis: its results are "
     "written to runs/<id>/ (or --dir) first, then the page"},
    {"redis-prefix", 0, AO_OPT_STR, "accelopt:", "PREFIX", "prefix of every redis key"},
    {"dir", 0, AO_OPT_STR, NULL, "DIR", "with --redis: where the run's results go (default: runs/<id>)"},
    AO_COMMON_OPTIONS,
};

/* One task of a run found in redis: the run id k (run:<k> without the
 * prefix) when it has a state naming its task.  1 if t was filled. */
static int task_of(struct ao_runstore *rs, const char *k, struct run_task *t)
{
    struct ao_run_state st;
    char err[AO_ERRLEN];
    const struct ao_target *tg;

    if (strncmp(k, "run:", 4) || strchr(k + 4, ':') || strlen(k + 4) >= sizeof t->run) /* AO_KEY_RUN */
        return 0; /* run:<id>:iter:..., :acks:... */
    snprintf(t->run, sizeof t->run, "%s", k + 4);
    if (ao_run_state_load(rs, t->run, &st, err, sizeof err) <= 0) {
        ao_run_state_release(&st);
        return 0;
    }
    snprintf(t->task, sizeof t->task, "%s", st.task);
    t->done = report_done_of(rs, t->run); /* a finished run's own figures, as its run wrote them */
    tg = ao_target_find(st.target);
    snprintf(t->ext, sizeof t->ext, "%s", (tg ? tg : ao_target_default())->ext);
    ao_run_state_release(&st);
    /* the task's name becomes a directory: a name, never a path */
    return t->task[0] && t->task[0] != '.' && !strchr(t->task, '/');
}

/* --redis: a run's tasks are the run ids RUN (one task) or RUN-<task> (the
 * tasks of accelopt run), found with SCAN (never KEYS on a shared redis). */
static int from_redis(const struct ao_config *c, const char *id, const char *dir, char *err,
                      size_t errlen)
{
    struct ao_redis *r = ao_redis_new(ao_config_str(c, "redis"), ao_config_str(c, "redis-prefix"),
                                      err, errlen);
    struct ao_runstore *rs = r ? ao_runstore_redis(r) : NULL;
    struct run_task *t = ao_calloc(MAX_TASKS, sizeof *t);
    size_t plen = strlen(ao_config_str(c, "redis-prefix"));
    int n = 0, rc = -1;

    if (!rs) /* (err says why there is no Redis) */
        goto out;
    for (int pass = 0; pass < 2 && n == 0; pass++) {
        char pattern[AO_REDIS_KEY_MAX], cursor[32] = "0";
        const char *argv[6] = {"SCAN", cursor, "MATCH", pattern, "COUNT", "1000"};
        if (!(pass ? ao_redis_key(r, pattern, sizeof pattern, AO_KEY_RUN "-*", id)
                   : ao_redis_key(r, pattern, sizeof pattern, AO_KEY_RUN, id))) {
            ao_errf(err, errlen, "run id '%.40s...' is too long", id);
            goto out;
        }
        do {
            struct redisReply *rep = ao_redis_argv(r, 6, argv, NULL, err, errlen);
            if (!rep)
                goto out;
            if (rep->type == REDIS_REPLY_ARRAY && rep->elements == 2) {
                snprintf(cursor, sizeof cursor, "%s", rep->element[0]->str ? rep->element[0]->str : "0");
                for (size_t i = 0; i < rep->element[1]->elements && n < MAX_TASKS; i++) {
                    const char *k = rep->element[1]->element[i]->str;
                    n += k && strlen(k) > plen && task_of(rs, k + plen, &t[n]);
                }
            } else {
                snprintf(cursor, sizeof cursor, "0");
            }
            freeReplyObject(rep);
        } while (strcmp(cursor, "0") != 0);
    }
    if (!n) {
        snprintf(err, errlen, "no run '%s' in that redis (accelopt status lists the runs in flight)",
                 id);
        goto out;
    }
    rc = report_write(dir, rs, t, n, NULL, NULL, err, errlen);
out:
    for (int i = 0; t && i < n; i++)
        cJSON_Delete(t[i].done);
    free(t);
    ao_runstore_free(rs);
    ao_redis_free(r);
    return rc;
}

int cmd_report(int argc, char **argv)
{
    struct ao_config c;
    char dir[REPORT_DIR_MAX], out[800], err[AO_ERRLEN] = "";
    int code;

    if (ao_tool_setup("accelopt", &c, report_opts, N(report_opts), argc, argv,
                      "accelopt report RUN-DIR [--out FILE]\n"
                      "       accelopt report RUN-ID --redis URL [--dir DIR] [--out FILE]",
                      &code) < 0)
        return code;
    code = AO_EXIT_USAGE;
    if (c.nargs != 1) {
        ao_err("report wants one run: its directory (runs/<id>) or, with --redis, its id");
        goto out;
    }
    code = AO_EXIT_FAIL;
    if (report_html_available(err, sizeof err) < 0) {
        ao_err("%s", err);
        goto out;
    }
    if (ao_config_str(&c, "redis")) {
        if (strpbrk(c.args[0], "/*?[]\\") || c.args[0][0] == '.' || !c.args[0][0]) {
            ao_err("with --redis, RUN is a run id (no '/', '*', '?', '[', ']' or '\\')");
            code = AO_EXIT_USAGE;
            goto out;
        }
        if (ao_config_str(&c, "dir") ? ao_name(dir, REPORT_DIR_MAX, "%s", ao_config_str(&c, "dir"))
                                     : ao_name(dir, REPORT_DIR_MAX, "runs/%s", c.args[0])) {
            ao_err("--dir or RUN: a directory of at most %d bytes, please", REPORT_DIR_MAX - 1);
            code = AO_EXIT_USAGE;
            goto out;
        }
        if (ao_mkdirs(dir, 0700) < 0 || from_redis(&c, c.args[0], dir, err, sizeof err) < 0) {
            ao_err("%s", err[0] ? err : "cannot make the run directory");
            goto out;
        }
    } else if (ao_name(dir, REPORT_DIR_MAX, "%s", c.args[0]) < 0) {
        ao_err("RUN-DIR: a directory of at most %d bytes, please", REPORT_DIR_MAX - 1);
        code = AO_EXIT_USAGE;
        goto out;
    } else {
        /* a run id, as accelopt run prints it: its directory under runs/ */
        struct stat st;
        char in_runs[REPORT_DIR_MAX];
        if (stat(dir, &st) != 0 && !strchr(dir, '/') &&
            ao_name(in_runs, sizeof in_runs, "runs/%s", dir) == 0 && stat(in_runs, &st) == 0)
            snprintf(dir, sizeof dir, "%s", in_runs);
        if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) { /* a name the user got wrong: 2 */
            ao_err("no run directory '%s' (nor runs/%s): give a run's directory, or its id with --redis",
                   c.args[0], c.args[0]);
            code = AO_EXIT_USAGE;
            goto out;
        }
    }
    while (strlen(dir) > 1 && dir[strlen(dir) - 1] == '/')
        dir[strlen(dir) - 1] = 0;
    if (ao_config_str(&c, "out") ? ao_name(out, sizeof out, "%s", ao_config_str(&c, "out"))
                                 : ao_name(out, sizeof out, "%s/report.html", dir)) {
        ao_err("--out: a path of at most %zu bytes, please", sizeof out - 1);
        code = AO_EXIT_USAGE;
        goto out;
    }
    if (report_html(dir, out, err, sizeof err) < 0) {
        ao_err("%s", err);
        goto out;
    }
    if (strcmp(out, "-") != 0)
        printf("%s\n", out);
    code = AO_EXIT_OK;
out:
    ao_config_release(&c);
    return code;
}
