/* memory.c - accelopt memory: the optimization memory as something to
 * look at, curate and ship: list, show, export, import, rm, prune, clear */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "core/alloc.h"
#include "core/exitcode.h"
#include "core/log.h"
#include "core/redis.h"
#include "core/util.h"
#include "front.h"
#include "memfile.h"
#include "memstore.h"
#include "state/memfold.h"
#include "state/memory.h"
#include "targets/target.h"
#include "wire/msg.h"
#include "wire/names.h"
#include "wire/stage.h"

#define N(a) ((int)(sizeof a / sizeof a[0]))

static const struct ao_option memory_opts[] = {
    {"redis", 0, AO_OPT_STR, NULL, "URL", "the redis that holds the memory (or --file)"},
    {"file", 'f', AO_OPT_STR, NULL, "FILE", "list, show, export: the memory in FILE (JSON Lines, as a run "
     "leaves in runs/<id>/memory.jsonl; a run's directory means its memory.jsonl), no redis"},
    {"redis-prefix", 0, AO_OPT_STR, "accelopt:", "PREFIX", "prefix of every redis key"},
    {"scope", 0, AO_OPT_STR, "target", "SCOPE", "which memory: target (every task of --target "
     "shares one), task (one per --task), or a name of letters, digits, '.', '_', '-'"},
    {"target", 0, AO_OPT_STR, AO_TARGET_DEFAULT, "NAME", "the target of scope target and task"},
    {"task", 0, AO_OPT_STR, NULL, "NAME", "the task of scope task; forget: the items about task NAME"},
    {"run", 0, AO_OPT_STR, NULL, "ID", "forget: the items run ID learnt (a run's id, or one of its tasks')"},
    {"all", 0, AO_OPT_BOOL, "0", NULL, "forget: every item"},
    {"json", 0, AO_OPT_BOOL, "0", NULL, "list, show: JSON (one item per line) instead of text"},
    {"origin", 0, AO_OPT_STR, NULL, "NAME", "import: record where the items came from"},
    {"older-than", 0, AO_OPT_NUM, NULL, "DAYS", "prune: items created more than DAYS ago"},
    {"regressions", 0, AO_OPT_BOOL, "0", NULL, "prune: items that record a slowdown"},
    {"below", 0, AO_OPT_NUM, NULL, "X", "prune: wins whose speedup is below X"},
    {"keep", 0, AO_OPT_INT, NULL, "N", "prune: everything but the newest N (the filters combine: an item "
     "goes when every one given picks it)"},
    {"dry-run", 0, AO_OPT_BOOL, "0", NULL, "rm, prune, clear: say what would go, change nothing"},
    {"yes", 0, AO_OPT_BOOL, "0", NULL, "clear: really delete the whole memory"},
    AO_COMMON_OPTIONS,
};

static const char memory_usage[] =
    "accelopt memory list   [--scope S] [--target T] [--task X] [--json]\n"
    "       accelopt memory show   ID [--json]\n"
    "       accelopt memory export [FILE]              (JSON Lines, schemas/memory_item.json)\n"
    "       accelopt memory import FILE [--origin NAME] (all of it or nothing)\n"
    "       accelopt memory rm     ID... [--dry-run]\n"
    "       accelopt memory prune  [--older-than DAYS] [--regressions] [--below X] [--keep N] "
    "[--dry-run]\n"
    "       accelopt memory clear  --yes\n"
    "       accelopt memory forget [ID...] [--run ID] [--task X] [--all] [--dry-run]\n"
    "without --redis (or ACCELOPT_REDIS) or --file, list, show, export and forget work on\n"
    "the memory this machine keeps between runs (<state dir>/memory/), which `accelopt run`\n"
    "learns from and adds to; every command takes --redis URL and the scope options;\n"
    "list, show and export take --file FILE instead (a run's memory.jsonl, or its directory)";

/* created_at as seconds since the epoch, or -1 */
static double created(const cJSON *it)
{
    struct tm tm = {0};
    const char *s = ao_json_str(it, "created_at", "");
    const char *end = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
    return end ? (double)timegm(&tm) : -1;
}

static void age_text(double then, char *buf, size_t len)
{
    double s = then < 0 ? -1 : difftime(time(NULL), (time_t)then);
    if (s < 0)
        snprintf(buf, len, "?");
    else if (s < 3600)
        snprintf(buf, len, "%.0fm", s / 60);
    else if (s < 86400 * 2)
        snprintf(buf, len, "%.0fh", s / 3600);
    else
        snprintf(buf, len, "%.0fd", s / 86400);
}

/* Text from an item for a terminal: control characters (escape sequences)
 * shown as spaces, at most width bytes (0: all). */
static void put_plain(const char *s, int width)
{
    int n = 0;
    for (; *s && (width <= 0 || n < width); s++, n++)
        putchar((unsigned char)*s < 0x20 || *s == 0x7f ? ' ' : *s);
}

/* A column: put_plain, then padded to width. */
static void put_col(const char *s, int width)
{
    int n = (int)strlen(s) < width ? (int)strlen(s) : width;
    put_plain(s, width);
    printf("%*s ", width - n, "");
}

static int print_line(const cJSON *j)
{
    char *s = cJSON_PrintUnformatted(j);
    int rc = s && printf("%s\n", s) > 0 ? 0 : -1;
    cJSON_free(s);
    return rc;
}


/* The widest value of field over the items, between min and max: a column
 * as wide as its text, so that run ids are shown whole. */
static int col_width(const cJSON *items, const char *field, int min, int max)
{
    const cJSON *it;
    int w = min;

    cJSON_ArrayForEach(it, items) {
        int n = (int)strlen(ao_json_str(it, field, "?"));
        w = n > w ? n : w;
    }
    return w < max ? w : max;
}

static int cmd_list(const cJSON *items, int json)
{
    const cJSON *it;
    int wid = col_width(items, "id", 2, 64), wtask = col_width(items, "task", 4, 64),
        wrun = col_width(items, "run", 3, AO_RUN_ID_MAX);
    if (!json)
        printf("%-*s %-14s %4s %-*s %-*s %5s  %s\n", wid, "ID", "EFFECT", "SEEN", wtask, "TASK", wrun, "RUN", "AGE",
               "TITLE");
    cJSON_ArrayForEach(it, items) {
        char age[16], effect[40];
        if (json) {
            cJSON *l = memory_as_line(it);
            int rc = l ? print_line(l) : -1;
            cJSON_Delete(l);
            if (rc < 0)
                return AO_EXIT_FAIL;
            continue;
        }
        age_text(created(it), age, sizeof age);
        put_col(ao_json_str(it, "id", "?"), wid);
        /* as the planner's prompt puts it: a regression's figure is its slowdown */
        snprintf(effect, sizeof effect, "%.2fx %s", ao_json_num(it, "speedup", NAN),
                 strcmp(ao_json_str(it, "direction", "+"), "-") ? "faster" : "slower");
        put_col(effect, 14);
        printf("%4d ", ao_memory_evidence(it)); /* pairs that taught it (equal lessons fold) */
        put_col(ao_json_str(it, "task", "?"), wtask);
        put_col(ao_json_str(it, "run", "?"), wrun);
        printf("%5s  ", age);
        put_plain(ao_json_str(it, "title", ""), 100);
        putchar('\n');
    }
    return AO_EXIT_OK;
}

static const cJSON *find(const cJSON *items, const char *id)
{
    const cJSON *it;
    cJSON_ArrayForEach(it, items) {
        if (!strcmp(ao_json_str(it, "id", ""), id))
            return it;
    }
    return NULL;
}

static void show_block(const char *label, const char *text)
{
    if (!text || !*text)
        return;
    printf("%s:\n", label);
    for (const char *s = text; *s; s++) /* no terminal escapes from an item */
        putchar(*s == '\n' || *s == '\t' || ((unsigned char)*s >= 0x20 && *s != 0x7f) ? *s : ' ');
    printf("\n");
}

static int cmd_show(const cJSON *items, const char *id, int json)
{
    const cJSON *it = find(items, id);
    static const char *const meta[] = {"id", "run", "task", "target", "iter", "created_at",
                                       "imported_at", "origin", "model", "pair_id", "slow_sha256",
                                       "fast_sha256"};
    char age[16], sure[96];

    if (!it) {
        ao_err("no item '%s' in this memory (accelopt memory list shows the ids)", id);
        return AO_EXIT_FAIL;
    }
    if (json) {
        cJSON *l = memory_as_line(it);
        int rc = l ? print_line(l) : -1;
        cJSON_Delete(l);
        return rc < 0 ? AO_EXIT_FAIL : AO_EXIT_OK;
    }
    printf("title:       ");
    put_plain(ao_json_str(it, "title", ""), 0);
    age_text(created(it), age, sizeof age);
    printf("\neffect:      %.3fx %s", ao_json_num(it, "speedup", NAN),
           strcmp(ao_json_str(it, "direction", "+"), "-") ? "faster (a win)" : "slower (a regression)");
    ao_memory_item_sureness(it, 3, sure, sizeof sure);
    printf("%s, %s old\n", sure, age);
    if (ao_memory_evidence(it) > 1)
        printf("evidence:    %d pairs of kernels taught it (equal lessons are one item, the "
               "better-supported figure kept)\n", ao_memory_evidence(it));
    for (int i = 0; i < N(meta); i++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(it, meta[i]);
        if (cJSON_IsString(v)) {
            printf("%-12s ", meta[i]);
            put_plain(v->valuestring, 0);
            putchar('\n');
        } else if (cJSON_IsNumber(v)) {
            printf("%-12s %.0f\n", meta[i], v->valuedouble);
        }
    }
    show_block("\nsummary", ao_json_str(it, "summary", NULL));
    show_block("\nplan", ao_json_str(it, "plan", NULL));
    show_block("\nbefore", ao_json_str(it, "before", NULL));
    show_block("\nafter", ao_json_str(it, "after", NULL));
    return AO_EXIT_OK;
}


/* Remove these ids (or say what would go). */
static int remove_ids(struct ao_redis *r, const char *key, const cJSON *items, const char **ids,
                      int n, int dry)
{
    char err[AO_ERRLEN];
    long long gone;

    for (int i = 0; i < n; i++) {
        const cJSON *it = find(items, ids[i]);
        printf("%s %s  ", dry ? "would remove" : "remove", ids[i]);
        put_plain(it ? ao_json_str(it, "title", "") : "(not in this memory)", 80);
        putchar('\n');
    }
    if (dry)
        return AO_EXIT_OK;
    if ((gone = ao_memory_remove(r, key, ids, (size_t)n, err, sizeof err)) < 0) {
        ao_err("%s", err);
        return AO_EXIT_FAIL;
    }
    ao_info("removed %lld item%s from %s", gone, gone == 1 ? "" : "s", key);
    return AO_EXIT_OK;
}

static int chosen(const cJSON *it, const struct ao_config *c);

/* forget's item IDs (args[1..]): seen[i] set for each one an item of the
 * memory bears */
static void note_named(const struct ao_config *c, const char *id, unsigned char *seen)
{
    for (int i = 1; i < c->nargs; i++)
        seen[i] |= !strcmp(id, c->args[i]);
}

/* The IDs named that no item bore, said each: like rm of a missing file,
 * the others are forgotten and the command fails (show's status).  How
 * many. */
static int ids_missing(const struct ao_config *c, const unsigned char *seen, const char *key)
{
    int missing = 0;

    for (int i = 1; i < c->nargs; i++)
        if (!seen[i]) {
            ao_err("no item %s in %s", c->args[i], key);
            missing++;
        }
    return missing;
}

/* forget, on a memory in a redis: the chosen items, removed at once. */
static int forget_in_redis(struct ao_redis *r, const char *key, const cJSON *items,
                           const struct ao_config *c)
{
    const char **ids = ao_calloc((size_t)cJSON_GetArraySize(items) + 1, sizeof *ids);
    unsigned char *seen = ao_calloc((size_t)c->nargs + 1, 1);
    const cJSON *it;
    int n = 0, code;

    cJSON_ArrayForEach(it, items) {
        note_named(c, ao_json_str(it, "id", ""), seen);
        if (chosen(it, c))
            ids[n++] = ao_json_str(it, "id", "");
    }
    code = n ? remove_ids(r, key, items, ids, n, ao_config_bool(c, "dry-run"))
             : (ao_info("nothing in %s to forget", key), AO_EXIT_OK);
    if (ids_missing(c, seen, key) && code == AO_EXIT_OK)
        code = AO_EXIT_FAIL;
    free(ids);
    free(seen);
    return code;
}

static int cmd_prune(struct ao_redis *r, const char *key, const cJSON *items,
                     const struct ao_config *c)
{
    const char *older = ao_config_str(c, "older-than"), *below = ao_config_str(c, "below"),
               *keep = ao_config_str(c, "keep");
    int regr = ao_config_bool(c, "regressions"), n = 0, i = 0, code;
    const char **ids = ao_calloc((size_t)cJSON_GetArraySize(items) + 1, sizeof *ids);
    const cJSON *it;

    if (!older && !below && !keep && !regr) {
        ao_err("prune needs at least one of --older-than, --regressions, --below, --keep");
        free(ids);
        return AO_EXIT_USAGE;
    }
    if (!ids)
        return AO_EXIT_FAIL;
    cJSON_ArrayForEach(it, items) { /* newest first */
        double when = created(it), sp = ao_json_num(it, "speedup", NAN);
        int win = strcmp(ao_json_str(it, "direction", "+"), "-") != 0;
        /* an item goes when every filter given picks it, as find(1)'s
         * tests combine: `--regressions --older-than 30` is the old
         * regressions, not every regression and every old item */
        int go = (!keep || i >= ao_config_int(c, "keep")) && (!regr || !win) &&
                 (!below || (win && !(sp >= ao_config_num(c, "below")))) &&
                 (!older || (when >= 0 && difftime(time(NULL), (time_t)when) > 86400 * ao_config_num(c, "older-than")));
        if (go && ao_json_str(it, "id", NULL))
            ids[n++] = ao_json_str(it, "id", NULL);
        i++;
    }
    code = n ? remove_ids(r, key, items, ids, n, ao_config_bool(c, "dry-run")) : AO_EXIT_OK;
    if (!n)
        ao_info("nothing to prune in %s", key);
    free(ids);
    return code;
}

static int is_verb(const char *v)
{
    static const char *const verbs[] = {"list", "show", "export", "import", "rm", "prune", "clear",
                                        "forget"};
    for (int i = 0; i < N(verbs); i++)
        if (!strcmp(v, verbs[i]))
            return 1;
    return 0;
}

/* list, show or export the memory of a file (a run's memory.jsonl, or the
 * run's directory), with no redis: every line checked as import checks it. */
/* Does forget's choice take this item: its id named, learnt by --run
 * (the run's id, or one of its tasks' "<run>-<task>"), about --task, or
 * --all? */
static int chosen(const cJSON *it, const struct ao_config *c)
{
    const char *run = ao_config_str(c, "run"), *task = ao_config_str(c, "task");
    const char *r = ao_json_str(it, "run", ""), *t = ao_json_str(it, "task", "");
    size_t n = run ? strlen(run) : 0;
    int take = ao_config_bool(c, "all");

    for (int i = 1; i < c->nargs; i++)
        take |= !strcmp(ao_json_str(it, "id", ""), c->args[i]);
    if (run)
        take |= !strcmp(r, run) || (!strncmp(r, run, n) && r[n] == '-' && !strcmp(r + n + 1, t));
    if (task)
        take |= !strcmp(t, task);
    return take;
}

/* memstore_forget's choice on this machine's memory: chosen, and said;
 * the IDs named noted as seen (note_named) */
struct forget_pass {
    const struct ao_config *c;
    unsigned char *seen;
};

static int forget_here(const cJSON *it, void *ctx)
{
    struct forget_pass *f = ctx;
    const struct ao_config *c = f->c;

    note_named(c, ao_json_str(it, "id", ""), f->seen);
    if (!chosen(it, c))
        return 0;
    printf("%s %s  ", ao_config_bool(c, "dry-run") ? "would forget" : "forget", ao_json_str(it, "id", "?"));
    put_plain(ao_json_str(it, "title", ""), 80);
    putchar('\n');
    return 1;
}

static int forget_wants(const struct ao_config *c)
{
    if (c->nargs > 1 || ao_config_str(c, "run") || ao_config_bool(c, "all") ||
        (ao_config_str(c, "task") && strcmp(ao_config_str(c, "scope"), "task") != 0))
        return 1;
    ao_err("forget wants what: item IDs, --run ID, --task NAME or --all");
    return 0;
}

static int from_file(const struct ao_config *c, const char *verb, const char *file);

/* list, show, export and forget on the memory this machine keeps. */
static int from_machine(struct ao_config *c, const char *verb, const char *key)
{
    char path[1000], err[AO_ERRLEN];
    int removed = 0, left = 0;
    struct stat st;

    if (strcmp(verb, "list") && strcmp(verb, "show") && strcmp(verb, "export") && strcmp(verb, "forget")) {
        ao_err("%s changes a memory in a redis (--redis URL or ACCELOPT_REDIS); this machine's "
               "memory takes list, show, export and forget%s", verb,
               strcmp(verb, "import") ? "" : " (a run learns from a file with `accelopt run TASK --memory FILE`, "
                                             "and adds what it learns to this machine's memory)");
        return AO_EXIT_USAGE;
    }
    if (memstore_path(key, path, sizeof path, err, sizeof err) < 0) {
        ao_err("%s", err);
        return AO_EXIT_FAIL;
    }
    if (strcmp(verb, "forget") != 0) {
        if (lstat(path, &st) < 0) { /* nothing learnt yet: an empty memory */
            if (!strcmp(verb, "list"))
                ao_info("this machine's memory %s is empty (%s)", key, path);
            return !strcmp(verb, "show") ? (ao_err("no item %s in %s", c->args[1], key), AO_EXIT_FAIL)
                                         : AO_EXIT_OK;
        }
        return from_file(c, verb, path);
    }
    if (!forget_wants(c))
        return AO_EXIT_USAGE;
    {
        struct forget_pass f = {c, ao_calloc((size_t)c->nargs + 1, 1)};
        int missing;
        if (memstore_forget(key, forget_here, &f, ao_config_bool(c, "dry-run"), &removed, &left, err,
                            sizeof err) < 0) {
            ao_err("%s", err);
            free(f.seen);
            return AO_EXIT_FAIL;
        }
        ao_info("%s %d item%s of this machine's memory %s; %d left", ao_config_bool(c, "dry-run")
                ? "would forget" : "forgot", removed, removed == 1 ? "" : "s", key, left);
        missing = ids_missing(c, f.seen, key);
        free(f.seen);
        return missing ? AO_EXIT_FAIL : AO_EXIT_OK;
    }
}

static int from_file(const struct ao_config *c, const char *verb, const char *file)
{
    char path[PATH_MAX], err[AO_ERRLEN];
    struct stat st;
    cJSON *items;
    int code = AO_EXIT_FAIL;

    if (strcmp(verb, "list") && strcmp(verb, "show") && strcmp(verb, "export")) {
        ao_err("--file is for list, show and export: %s changes a memory, which lives in a redis", verb);
        return AO_EXIT_USAGE;
    }
    if (ao_name(path, sizeof path, stat(file, &st) == 0 && S_ISDIR(st.st_mode) ? "%s/memory.jsonl" : "%s",
                file) < 0) {
        ao_err("--file: '%.100s...' is too long", file);
        return AO_EXIT_USAGE;
    }
    if (memory_read_file(path, items = cJSON_CreateArray(), err, sizeof err) < 0) {
        ao_err("%s", err);
    } else if (!strcmp(verb, "list")) {
        code = cmd_list(items, ao_config_bool(c, "json"));
    } else if (!strcmp(verb, "show")) {
        code = cmd_show(items, c->args[1], ao_config_bool(c, "json"));
    } else {
        const char *to = c->nargs > 1 ? c->args[1] : NULL;
        FILE *f = to && strcmp(to, "-") ? fopen(to, "w") : stdout;
        int n = f ? memory_write_items(f, items) : 0;
        if (!f || (f != stdout ? fclose(f) : fflush(f)) != 0)
            ao_err("cannot write '%s'", to ? to : "stdout");
        else
            code = (ao_info("exported %d item%s of %s", n, n == 1 ? "" : "s", path), AO_EXIT_OK);
    }
    cJSON_Delete(items);
    return code;
}

int cmd_memory(int argc, char **argv)
{
    struct ao_config c;
    struct ao_redis *r = NULL;
    cJSON *items = NULL;
    char key[AO_KEY_MAX], err[AO_ERRLEN];
    const char *verb;
    int code, has;

    if (ao_tool_setup("accelopt", &c, memory_opts, N(memory_opts), argc, argv, memory_usage,
                      &code) < 0)
        return code;
    code = AO_EXIT_USAGE;
    verb = c.nargs ? c.args[0] : "";
    if (!is_verb(verb)) {
        ao_err("memory wants a command: list, show, export, import, rm, prune, clear or forget "
               "(see --help)");
        goto out;
    }
    if (((!strcmp(verb, "show") || !strcmp(verb, "import")) && c.nargs != 2) ||
        (!strcmp(verb, "rm") && c.nargs < 2) || (!strcmp(verb, "export") && c.nargs > 2) ||
        ((!strcmp(verb, "list") || !strcmp(verb, "prune") || !strcmp(verb, "clear")) &&
         c.nargs != 1)) {
        ao_err("usage: %s", memory_usage);
        goto out;
    }
    if (ao_config_str(&c, "file")) {
        code = from_file(&c, verb, ao_config_str(&c, "file"));
        goto out;
    }
    has = ao_memory_key(ao_config_str(&c, "scope"), ao_config_str(&c, "target"),
                        ao_config_str(&c, "task") ? ao_config_str(&c, "task") : "", key, sizeof key,
                        err, sizeof err);
    if (has <= 0 || (!strcmp(ao_config_str(&c, "scope"), "task") && !ao_config_str(&c, "task"))) {
        ao_err("--scope: %s", has < 0 ? err : has == 0 ? "scope none holds no memory"
                                                       : "scope task needs --task");
        goto out;
    }
    if (!ao_config_str(&c, "redis")) {
        code = from_machine(&c, verb, key);
        goto out;
    }
    if (!strcmp(verb, "forget") && !forget_wants(&c))
        goto out;
    if (!strcmp(verb, "clear") && !ao_config_bool(&c, "yes") && !ao_config_bool(&c, "dry-run")) {
        ao_err("clear deletes the whole memory %s: say --yes (or --dry-run to see it)", key);
        goto out;
    }
    code = AO_EXIT_FAIL;
    if (!(r = ao_redis_new(ao_config_str(&c, "redis"), ao_config_str(&c, "redis-prefix"), err,
                           sizeof err))) {
        ao_err("%s", err);
        goto out;
    }
    if (!strcmp(verb, "import")) {
        long long pushed;
        int n;
        if (memory_import(r, key, c.args[1], ao_config_str(&c, "origin"), &pushed, &n, err,
                          sizeof err) < 0) {
            ao_err("%s", err);
            goto out;
        }
        ao_info("imported %lld of %d item%s into %s (%lld already there)", pushed, n,
                n == 1 ? "" : "s", key, n - pushed);
        printf("{\"imported\":%lld,\"present\":%lld,\"memory\":\"%s\"}\n", pushed, n - pushed, key);
        code = AO_EXIT_OK;
        goto out;
    }
    if (!(items = ao_memory_all(r, key, err, sizeof err))) {
        ao_err("%s", err);
        goto out;
    }
    if (!strcmp(verb, "list")) {
        code = cmd_list(items, ao_config_bool(&c, "json"));
    } else if (!strcmp(verb, "show")) {
        code = cmd_show(items, c.args[1], ao_config_bool(&c, "json"));
    } else if (!strcmp(verb, "export")) {
        const char *keys[1] = {key};
        int n;
        if (memory_export(r, keys, 1, c.nargs > 1 ? c.args[1] : NULL, &n, err, sizeof err) < 0) {
            ao_err("%s", err);
        } else {
            ao_info("exported %d item%s of %s", n, n == 1 ? "" : "s", key);
            code = AO_EXIT_OK;
        }
    } else if (!strcmp(verb, "rm")) {
        code = remove_ids(r, key, items, (const char **)c.args + 1, c.nargs - 1,
                          ao_config_bool(&c, "dry-run"));
    } else if (!strcmp(verb, "forget")) {
        code = forget_in_redis(r, key, items, &c);
    } else if (!strcmp(verb, "prune")) {
        code = cmd_prune(r, key, items, &c);
    } else { /* clear */
        int n = cJSON_GetArraySize(items);
        if (ao_config_bool(&c, "dry-run")) {
            printf("would remove all %d item%s of %s\n", n, n == 1 ? "" : "s", key);
            code = AO_EXIT_OK;
        } else if (ao_memory_clear(r, key, err, sizeof err) < 0) {
            ao_err("%s", err);
        } else {
            ao_info("removed all %d item%s of %s", n, n == 1 ? "" : "s", key);
            code = AO_EXIT_OK;
        }
    }
out:
    cJSON_Delete(items);
    ao_redis_free(r);
    ao_config_release(&c);
    return code;
}
