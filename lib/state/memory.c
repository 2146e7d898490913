/* memory.c - the optimization memory in Redis */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "core/alloc.h"
#include "core/log.h"
#include "core/util.h"
#include "state/memfold.h"
#include "state/memory.h"
#include "wire/msg.h"
#include "wire/names.h"

#define MARKER_TTL "2592000" /* 30 days: replays come within minutes */

static long long eval_strings(struct ao_redis *r, const char *script, const char *key,
                              const char *const *args, size_t nargs, char *err, size_t errlen);

int ao_memory_key(const char *scope, const char *target, const char *task, char *key,
                  size_t keylen, char *err, size_t errlen)
{
    if (!scope || strcmp(scope, "target") == 0) {
        return ao_name(key, keylen, AO_KEY_MEMORY_TARGET, target) < 0
                   ? ao_errf(err, errlen, "target '%.40s...' is too long for a key", target) : 1;
    }
    if (strcmp(scope, "task") == 0) {
        return ao_name(key, keylen, AO_KEY_MEMORY_TASK, target, task) < 0
                   ? ao_errf(err, errlen, "task '%.40s...' is too long for a key", task) : 1;
    }
    if (strcmp(scope, "none") == 0)
        return 0;
    if (!scope[0] || strlen(scope) > 64 || strspn(scope, "abcdefghijklmnopqrstuvwxyz"
                                                        "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") !=
                                               strlen(scope)) {
        snprintf(err, errlen, "bad memory scope '%.40s' (target, task, none, or a name of "
                 "letters, digits, '.', '_', '-')", scope);
        return -1;
    }
    return ao_name(key, keylen, AO_KEY_MEMORY_NAME, scope) < 0
               ? ao_errf(err, errlen, "the memory's key is too long") : 1;
}

cJSON *ao_memory_read(struct ao_redis *r, const char *key, int max, char *err, size_t errlen)
{
    char k[AO_REDIS_KEY_MAX], stop[24];
    const char *argv[4] = {"LRANGE", k, "0", stop};
    redisReply *rep;
    cJSON *items;

    if (!ao_redis_key(r, k, sizeof k, "%s", key))
        return ao_errf(err, errlen, "redis key '%.60s...' is too long", key), NULL;
    snprintf(stop, sizeof stop, "%d", max - 1); /* max 0: all of it */
    if (!(rep = ao_redis_argv(r, 4, argv, NULL, err, errlen)))
        return NULL;
    items = cJSON_CreateArray();
    for (size_t i = 0; rep->type == REDIS_REPLY_ARRAY && i < rep->elements; i++) {
        const redisReply *e = rep->element[i];
        cJSON *it = e->type == REDIS_REPLY_STRING ? cJSON_ParseWithLength(e->str, e->len) : NULL;
        if (!cJSON_IsObject(it)) {
            ao_warn("memory '%s': item %zu is not a JSON object; skipped", key, i);
            cJSON_Delete(it);
            continue;
        }
        cJSON_AddItemToArray(items, it);
    }
    freeReplyObject(rep);
    return items;
}

int ao_memory_marker(struct ao_redis *r, const char *pair_id, char **ack, char *err,
                     size_t errlen)
{
    char k[AO_KEY_MAX];
    *ack = NULL;
    if (ao_name(k, sizeof k, AO_KEY_PAIRDONE, pair_id) < 0) /* ao_redis_get adds the prefix */
        return ao_errf(err, errlen, "pair id '%.40s...' is too long for a key", pair_id);
    return ao_redis_get(r, k, ack, err, errlen) < 0 ? -1 : *ack != NULL;
}

/* LREM the equal lesson it folds in (ARGV[5], when not '') + LPUSH +
 * LTRIM + SET marker, all or nothing (a script runs atomically).  0: the
 * marker was there; 2: the equal lesson is gone (another writer folded or
 * trimmed it: read again). */
static const char store_script[] =
    "if redis.call('EXISTS', KEYS[2]) == 1 then return 0 end\n"
    "if ARGV[5] ~= '' and redis.call('LREM', KEYS[1], 1, ARGV[5]) == 0 then return 2 end\n"
    "if ARGV[1] ~= '' then\n"
    "  redis.call('LPUSH', KEYS[1], ARGV[1])\n"
    "  redis.call('LTRIM', KEYS[1], 0, tonumber(ARGV[2]) - 1)\n"
    "end\n"
    "redis.call('SET', KEYS[2], ARGV[3], 'EX', ARGV[4])\n"
    "return 1\n";

/* The memory's items as stored (texts, newest first): the LRANGE reply,
 * or NULL + err. */
static redisReply *read_texts(struct ao_redis *r, const char *key, char *err, size_t errlen)
{
    char k[AO_REDIS_KEY_MAX];
    const char *argv[4] = {"LRANGE", k, "0", "-1"};
    redisReply *rep;

    if (!ao_redis_key(r, k, sizeof k, "%s", key))
        return ao_errf(err, errlen, "redis key '%.60s...' is too long", key), NULL;
    if ((rep = ao_redis_argv(r, 4, argv, NULL, err, errlen)) && rep->type != REDIS_REPLY_ARRAY) {
        freeReplyObject(rep);
        return snprintf(err, errlen, "redis: LRANGE did not answer a list"), NULL;
    }
    return rep;
}

/* The item to store for text: itself, or folded with its equal lesson in
 * the memory (*old its stored text, to be removed): 0 with *out (malloc'd),
 * or -1 + err. */
static int fold_in(struct ao_redis *r, const char *key, const char *text, char **out, char **old, char *err,
                   size_t errlen)
{
    cJSON *it = cJSON_Parse(text), *m = NULL;
    redisReply *rep = NULL;
    int rc = -1;

    *out = *old = NULL;
    if (!it || !(rep = read_texts(r, key, err, errlen))) {
        if (!it)
            snprintf(err, errlen, "the memory item is not JSON");
        goto out;
    }
    for (size_t i = 0; i < rep->elements && !m; i++) {
        const redisReply *e = rep->element[i];
        cJSON *have = e->type == REDIS_REPLY_STRING ? cJSON_ParseWithLength(e->str, e->len) : NULL;
        if (have && ao_memory_same_lesson(it, have)) {
            m = ao_memory_merge(it, have);
            *old = ao_strdup(e->str);
        }
        cJSON_Delete(have);
    }
    *out = m ? cJSON_PrintUnformatted(m) : ao_strdup(text);
    rc = 0;
out:
    if (rc < 0) {
        free(*old);
        *old = NULL;
    }
    cJSON_Delete(it);
    cJSON_Delete(m);
    if (rep)
        freeReplyObject(rep);
    return rc;
}

int ao_memory_store(struct ao_redis *r, const char *key, const char *pair_id, const char *item,
                    const char *ack, int expn, char *err, size_t errlen)
{
    char list[AO_REDIS_KEY_MAX], marker[AO_REDIS_KEY_MAX], cap[24];
    int rc = -1;

    if (expn < 1) {
        snprintf(err, errlen, "the memory capacity must be at least 1");
        return -1;
    }
    if (!ao_redis_key(r, list, sizeof list, "%s", key) ||
        !ao_redis_key(r, marker, sizeof marker, AO_KEY_PAIRDONE, pair_id))
        return ao_errf(err, errlen, "the memory's or pair's key is too long (pair '%.60s...')", pair_id);
    snprintf(cap, sizeof cap, "%d", expn);
    for (int tries = 0; tries < 16; tries++) {
        char *text = NULL, *old = NULL;
        redisReply *rep;
        if (item && fold_in(r, key, item, &text, &old, err, errlen) < 0)
            return -1;
        {
            const char *argv[10] = {"EVAL", store_script, "2", list, marker, text ? text : "", cap, ack,
                                    MARKER_TTL, old ? old : ""};
            rep = ao_redis_argv(r, 10, argv, NULL, err, errlen);
        }
        free(text);
        free(old);
        if (!rep)
            return -1;
        rc = rep->type == REDIS_REPLY_INTEGER ? (int)rep->integer : -1;
        freeReplyObject(rep);
        if (rc != 2)
            break;
    }
    if (rc < 0 || rc == 2)
        snprintf(err, errlen, rc < 0 ? "redis: unexpected reply to the memory script"
                                     : "the memory changed under every one of 16 writes");
    return rc == 2 ? -1 : rc;
}

/* Replace the list by ARGV[n+2..] if it still holds exactly ARGV[2..n+1]
 * (n = ARGV[1]): 1, or 0 when it changed meanwhile. */
static const char replace_script[] =
    "local n = tonumber(ARGV[1])\n"
    "local have = redis.call('LRANGE', KEYS[1], 0, -1)\n"
    "if #have ~= n then return 0 end\n"
    "for i = 1, n do if have[i] ~= ARGV[i + 1] then return 0 end end\n"
    "redis.call('DEL', KEYS[1])\n"
    "for i = n + 2, #ARGV do redis.call('RPUSH', KEYS[1], ARGV[i]) end\n"
    "return 1\n";

/* One try of ao_memory_compact: 1 done, 0 changed meanwhile, -1 + err. */
static int compact_once(struct ao_redis *r, const char *key, int *folded, char *err, size_t errlen)
{
    redisReply *rep = read_texts(r, key, err, errlen);
    cJSON *items = cJSON_CreateArray(), *it;
    const char **args = NULL;
    char **texts = NULL, count[24];
    size_t n = rep ? rep->elements : 0, m = 0;
    int rc = -1;

    *folded = 0;
    if (!rep || !items)
        goto out;
    for (size_t i = 0; i < n; i++) { /* an unreadable item stays where it is: only equals fold */
        const redisReply *e = rep->element[i];
        cJSON *x = e->type == REDIS_REPLY_STRING ? cJSON_ParseWithLength(e->str, e->len) : NULL;
        if (!x)
            x = cJSON_CreateObject();
        cJSON_AddItemToArray(items, x);
    }
    if ((*folded = ao_memory_fold(items)) == 0) {
        rc = 1;
        goto out;
    }
    args = ao_calloc(2 * n + 2, sizeof *args);
    texts = ao_calloc(n + 1, sizeof *texts);
    snprintf(count, sizeof count, "%zu", n);
    args[0] = count;
    for (size_t i = 0; i < n; i++)
        args[1 + i] = rep->element[i]->str ? rep->element[i]->str : "";
    cJSON_ArrayForEach(it, items) {
        texts[m] = cJSON_PrintUnformatted(it);
        args[1 + n + m] = texts[m];
        m++;
    }
    rc = (int)eval_strings(r, replace_script, key, args, 1 + n + m, err, errlen);
out:
    for (size_t i = 0; texts && i < m; i++)
        cJSON_free(texts[i]);
    free(texts);
    free(args);
    cJSON_Delete(items);
    if (rep)
        freeReplyObject(rep);
    return rc;
}

int ao_memory_compact(struct ao_redis *r, const char *key, int *folded, char *err, size_t errlen)
{
    for (int tries = 0; tries < 16; tries++) {
        int rc = compact_once(r, key, folded, err, errlen);
        if (rc != 0)
            return rc < 0 ? -1 : 0;
    }
    return snprintf(err, errlen, "the memory changed under every one of 16 compactions"), -1;
}

cJSON *ao_memory_all(struct ao_redis *r, const char *key, char *err, size_t errlen)
{
    return ao_memory_read(r, key, 0, err, errlen); /* LRANGE 0 -1 */
}

/* Push the items that are new (by id) so that the first ends up newest;
 * ARGV: the items' ids, then the items. */
static const char import_script[] =
    "local have = {}\n"
    "for _, v in ipairs(redis.call('LRANGE', KEYS[1], 0, -1)) do\n"
    "  local ok, it = pcall(cjson.decode, v)\n"
    "  if ok and type(it) == 'table' and type(it.id) == 'string' then have[it.id] = true end\n"
    "end\n"
    "local n, pushed = #ARGV / 2, 0\n"
    "for i = n, 1, -1 do\n"
    "  if not have[ARGV[i]] then\n"
    "    redis.call('LPUSH', KEYS[1], ARGV[n + i])\n"
    "    have[ARGV[i]] = true\n"
    "    pushed = pushed + 1\n"
    "  end\n"
    "end\n"
    "return pushed\n";

/* Remove every item whose id is in ARGV; returns how many went. */
static const char remove_script[] =
    "local gone = {}\n"
    "for _, id in ipairs(ARGV) do gone[id] = true end\n"
    "local n = 0\n"
    "for _, v in ipairs(redis.call('LRANGE', KEYS[1], 0, -1)) do\n"
    "  local ok, it = pcall(cjson.decode, v)\n"
    "  if ok and type(it) == 'table' and gone[it.id] then\n"
    "    n = n + redis.call('LREM', KEYS[1], 1, v)\n"
    "  end\n"
    "end\n"
    "return n\n";

/* EVAL script on key with the strings of args; the integer reply, or -1. */
static long long eval_strings(struct ao_redis *r, const char *script, const char *key,
                              const char *const *args, size_t nargs, char *err, size_t errlen)
{
    char list[AO_REDIS_KEY_MAX];
    const char **argv = ao_calloc(nargs + 4, sizeof *argv);
    redisReply *rep;
    long long n = -1;

    if (!ao_redis_key(r, list, sizeof list, "%s", key)) {
        free(argv);
        return ao_errf(err, errlen, "redis key '%.60s...' is too long", key);
    }
    argv[0] = "EVAL", argv[1] = script, argv[2] = "1", argv[3] = list;
    for (size_t i = 0; i < nargs; i++)
        argv[4 + i] = args[i];
    if ((rep = ao_redis_argv(r, (int)nargs + 4, argv, NULL, err, errlen))) {
        if (rep->type == REDIS_REPLY_INTEGER)
            n = rep->integer;
        else
            snprintf(err, errlen, "redis: unexpected reply to the memory script");
        freeReplyObject(rep);
    }
    free(argv);
    return n;
}

long long ao_memory_import(struct ao_redis *r, const char *key, const char *const *ids,
                           const char *const *items, size_t n, char *err, size_t errlen)
{
    const char **args = ao_calloc(2 * n + 1, sizeof *args);
    long long pushed;

    for (size_t i = 0; i < n; i++)
        args[i] = ids[i], args[n + i] = items[i];
    pushed = eval_strings(r, import_script, key, args, 2 * n, err, errlen);
    free(args);
    return pushed;
}

long long ao_memory_remove(struct ao_redis *r, const char *key, const char *const *ids, size_t n,
                           char *err, size_t errlen)
{
    return n ? eval_strings(r, remove_script, key, ids, n, err, errlen) : 0;
}

int ao_memory_clear(struct ao_redis *r, const char *key, char *err, size_t errlen)
{
    char list[AO_REDIS_KEY_MAX];
    const char *argv[2] = {"DEL", list};
    redisReply *rep;

    if (!ao_redis_key(r, list, sizeof list, "%s", key))
        return ao_errf(err, errlen, "redis key '%.60s...' is too long", key);
    if (!(rep = ao_redis_argv(r, 2, argv, NULL, err, errlen)))
        return -1;
    freeReplyObject(rep);
    return 0;
}

/* the text fields and their limits */
static const struct {
    const char *name;
    size_t max;
} limits[] = {
    {"id", AO_MEMORY_ID_MAX}, {"run", 200}, {"task", 64}, {"target", 16},
    {"title", AO_MEMORY_TITLE_MAX}, {"summary", AO_MEMORY_SUMMARY_MAX},
    {"before", AO_MEMORY_SNIPPET_MAX}, {"after", AO_MEMORY_SNIPPET_MAX},
    {"plan", AO_MEMORY_PLAN_MAX}, {"pair_id", 200}, {"model", 200}, {"created_at", 40},
    {"imported_at", 40}, {"origin", 200},
};

static int all_of(const char *s, const char *set)
{
    return s[0] && strspn(s, set) == strlen(s);
}

#define ALNUM "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

int ao_memory_item_check(const cJSON *item, char *err, size_t errlen)
{
    const char *sha[] = {"slow_sha256", "fast_sha256"};
    double sp = ao_json_num(item, "speedup", NAN), spread = ao_json_num(item, "speedup_spread", 0);

    for (size_t i = 0; i < sizeof limits / sizeof limits[0]; i++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(item, limits[i].name);
        if (cJSON_IsString(v) && strlen(v->valuestring) > limits[i].max)
            return snprintf(err, errlen, "%s is %zu bytes, over the limit of %zu", limits[i].name,
                            strlen(v->valuestring), limits[i].max), -1;
    }
    { /* text a prompt will quote: no control character but newline and tab (issue 56) */
        const cJSON *v;
        cJSON_ArrayForEach(v, item)
            if (cJSON_IsString(v))
                for (const unsigned char *c = (const unsigned char *)v->valuestring; *c; c++)
                    if ((*c < 0x20 && *c != '\n' && *c != '\t') || *c == 0x7f)
                        return snprintf(err, errlen, "%s holds a control character (0x%02x): only newline "
                                        "and tab are text", v->string ? v->string : "a field", *c), -1;
    }
    if (!all_of(ao_json_str(item, "id", ""), ALNUM ":._-"))
        return snprintf(err, errlen, "id must be letters, digits, ':', '.', '_' or '-'"), -1;
    if (!all_of(ao_json_str(item, "task", ""), ALNUM "._-"))
        return snprintf(err, errlen, "task must be letters, digits, '.', '_' or '-'"), -1;
    if (!all_of(ao_json_str(item, "target", ""), "abcdefghijklmnopqrstuvwxyz0123456789"))
        return snprintf(err, errlen, "target must be lower-case letters and digits"), -1;
    if (!ao_json_str(item, "title", "")[0])
        return snprintf(err, errlen, "title is empty"), -1;
    if (!(isfinite(sp) && sp > 0 && sp <= 1e6))
        return snprintf(err, errlen, "speedup must be a number above 0 (and at most 1e6)"), -1;
    if (!(isfinite(spread) && spread >= 0))
        return snprintf(err, errlen, "speedup_spread must be a number of at least 0"), -1;
    {
        const cJSON *lo = cJSON_GetObjectItemCaseSensitive(item, "speedup_low"),
                    *hi = cJSON_GetObjectItemCaseSensitive(item, "speedup_high");
        if ((lo || hi) && !(cJSON_IsNumber(lo) && cJSON_IsNumber(hi) && lo->valuedouble > 0 &&
                            lo->valuedouble <= sp && sp <= hi->valuedouble && hi->valuedouble <= 1e6))
            return snprintf(err, errlen, "speedup_low and speedup_high come together, around the speedup"), -1;
    }
    {
        const cJSON *ev = cJSON_GetObjectItemCaseSensitive(item, "evidence"),
                    *ids = cJSON_GetObjectItemCaseSensitive(item, "evidence_ids"), *v;
        if (ev && !(cJSON_IsNumber(ev) && ev->valuedouble >= 1 && ev->valuedouble < 1e9 &&
                    ev->valuedouble == floor(ev->valuedouble)))
            return snprintf(err, errlen, "evidence must be a whole number of at least 1"), -1;
        if (ids && (!cJSON_IsArray(ids) || cJSON_GetArraySize(ids) > AO_MEMORY_EVIDENCE_IDS))
            return snprintf(err, errlen, "evidence_ids must be a list of at most %d ids",
                            AO_MEMORY_EVIDENCE_IDS), -1;
        cJSON_ArrayForEach(v, ids)
            if (!cJSON_IsString(v) || strlen(v->valuestring) > AO_MEMORY_ID_MAX ||
                !all_of(v->valuestring, ALNUM ":._-"))
                return snprintf(err, errlen, "evidence_ids must hold ids (letters, digits, ':', '.', '_', '-')"),
                       -1;
    }
    for (int i = 0; i < 2; i++) {
        const char *h = ao_json_str(item, sha[i], NULL);
        if (h && (strlen(h) != 64 || !all_of(h, "0123456789abcdef")))
            return snprintf(err, errlen, "%s must be 64 lower-case hex digits", sha[i]), -1;
    }
    return 0;
}

void ao_memory_item_sureness(const cJSON *item, int digits, char *out, size_t len)
{
    double lo = ao_json_num(item, "speedup_low", NAN), hi = ao_json_num(item, "speedup_high", NAN);
    double spread = ao_json_num(item, "speedup_spread", NAN);

    if (isfinite(lo) && isfinite(hi))
        snprintf(out, len, " (head to head, 95%% interval %.*f-%.*f)", digits, lo, digits, hi);
    else if (isfinite(spread))
        snprintf(out, len, " (give or take %.0f%%)", 100 * spread);
    else if (len)
        out[0] = '\0';
}

void ao_memory_item_clip(cJSON *item)
{
    for (size_t i = 0; i < sizeof limits / sizeof limits[0]; i++) {
        cJSON *v = cJSON_GetObjectItemCaseSensitive(item, limits[i].name);
        size_t cut;
        if (!cJSON_IsString(v) || strlen(v->valuestring) <= limits[i].max)
            continue;
        cut = limits[i].max - 3;
        while (cut > 0 && ((unsigned char)v->valuestring[cut] & 0xc0) == 0x80)
            cut--; /* not inside a UTF-8 character */
        memcpy(v->valuestring + cut, "...", 4);
    }
}
