/* runstore.c - run state in Redis, or in a JSON file for pipe mode */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

#include "state/runstore.h"
#include "core/alloc.h"
#include "core/util.h"
#include "wire/names.h"

#define PREFETCH_MAX 4
#define KEPT_MAX 64 /* fields kept between messages: a selector's runs' state and beam */

struct kept {
    char *key, *field, *val;
    cJSON *json; /* val parsed, once asked for as JSON */
    unsigned long long used;
};

struct ao_runstore {
    struct ao_redis *redis; /* the Redis store; else: */
    cJSON *root;            /* {key: {field: "value"}}, sets as {member: true} */
    char *path;
    int dirty;
    struct { /* the Redis store's read-ahead (ao_rs_prefetch) */
        char *key;
        int n;
        char *field[PREFETCH_MAX], *val[PREFETCH_MAX]; /* val NULL: absent */
    } pre;
    const char *const *keep; /* the fields ao_rs_keep names */
    int nkeep, nkept;
    struct kept kept[KEPT_MAX];
    unsigned long long clock; /* for the least recently used */
    cJSON *ref;               /* the last ao_runstore_json_ref of a field not kept */
};

struct ao_runstore *ao_runstore_redis(struct ao_redis *r)
{
    struct ao_runstore *s = ao_calloc(1, sizeof *s);

    s->redis = r;
    return s;
}

struct ao_runstore *ao_runstore_file(const char *path, char *err, size_t errlen)
{
    struct ao_runstore *s = ao_calloc(1, sizeof *s);
    char *text = NULL;

    if (path)
        s->path = ao_strdup(path);
    if (path && access(path, F_OK) == 0) {
        if (!(text = ao_read_file(path, NULL, err, errlen)))
            goto fail;
        s->root = cJSON_Parse(text);
        free(text);
        if (!cJSON_IsObject(s->root)) {
            snprintf(err, errlen, "state file '%s' is not a JSON object", path);
            goto fail;
        }
    } else {
        s->root = cJSON_CreateObject();
    }
    return s;
fail:
    ao_runstore_free(s);
    return NULL;
}

int ao_runstore_save(struct ao_runstore *s, char *err, size_t errlen)
{
    char *text;
    int rc;

    if (s->redis || !s->path || !s->dirty)
        return 0;
    text = cJSON_Print(s->root);
    rc = ao_replace_file(s->path, text, strlen(text), err, errlen);
    cJSON_free(text);
    if (rc == 0)
        s->dirty = 0;
    return rc;
}

void ao_runstore_free(struct ao_runstore *s)
{
    if (!s)
        return;
    ao_rs_forget(s);
    ao_rs_keep_clear(s);
    cJSON_Delete(s->ref);
    cJSON_Delete(s->root);
    free(s->path);
    free(s);
}

/* A command on one prefixed key with up to 2 more arguments. */
static redisReply *command(struct ao_runstore *s, const char *cmd, const char *key,
                           const char *a1, const char *a2, char *err, size_t errlen)
{
    char k[AO_REDIS_KEY_MAX];
    const char *argv[4] = {cmd, ao_redis_key(s->redis, k, sizeof k, "%s", key), a1, a2};
    if (!argv[1])
        return ao_errf(err, errlen, "redis key '%.60s...' is too long", key), NULL;
    return ao_redis_argv(s->redis, a2 ? 4 : a1 ? 3 : 2, argv, NULL, err, errlen);
}

/* The file store's object for key, made when `make` is set. */
static cJSON *entry(struct ao_runstore *s, const char *key, int make)
{
    cJSON *e = cJSON_GetObjectItemCaseSensitive(s->root, key);

    if (!e && make)
        cJSON_AddItemToObject(s->root, key, e = cJSON_CreateObject());
    return e;
}

static int keepable(const struct ao_runstore *s, const char *field)
{
    for (int i = 0; s->redis && i < s->nkeep; i++)
        if (strcmp(s->keep[i], field) == 0)
            return 1;
    return 0;
}

static struct kept *kept_find(struct ao_runstore *s, const char *key, const char *field)
{
    for (int i = 0; i < s->nkept; i++)
        if (strcmp(s->kept[i].field, field) == 0 && strcmp(s->kept[i].key, key) == 0) {
            s->kept[i].used = ++s->clock;
            return &s->kept[i];
        }
    return NULL;
}

static void kept_drop(struct ao_runstore *s, struct kept *k)
{
    free(k->key);
    free(k->field);
    free(k->val);
    cJSON_Delete(k->json);
    *k = s->kept[--s->nkept];
}

/* Keep val as key's field (a copy). */
static void kept_put(struct ao_runstore *s, const char *key, const char *field, const char *val)
{
    struct kept *k = kept_find(s, key, field);

    if (k)
        kept_drop(s, k);
    if (s->nkept == KEPT_MAX) { /* the least recently used goes */
        struct kept *old = &s->kept[0];
        for (int i = 1; i < s->nkept; i++)
            if (s->kept[i].used < old->used)
                old = &s->kept[i];
        kept_drop(s, old);
    }
    k = &s->kept[s->nkept];
    memset(k, 0, sizeof *k);
    k->key = ao_strdup(key);
    k->field = ao_strdup(field);
    k->val = ao_strdup(val);
    k->used = ++s->clock;
    s->nkept++;
}

void ao_rs_keep(struct ao_runstore *s, int n, const char *const *fields)
{
    ao_rs_keep_clear(s);
    s->keep = fields;
    s->nkeep = n;
}

void ao_rs_keep_clear(struct ao_runstore *s)
{
    while (s->nkept)
        kept_drop(s, &s->kept[0]);
}

/* The read-ahead's index of key's field, or -1. */
static int prefetched(const struct ao_runstore *s, const char *key, const char *field)
{
    if (!s->pre.key || strcmp(s->pre.key, key) != 0)
        return -1;
    for (int i = 0; i < s->pre.n; i++)
        if (strcmp(s->pre.field[i], field) == 0)
            return i;
    return -1;
}

/* A write to key's field: the read-ahead no longer knows it. */
static void written(struct ao_runstore *s, const char *key, const char *field)
{
    int at = prefetched(s, key, field);
    struct kept *k = kept_find(s, key, field);

    if (k)
        kept_drop(s, k);

    if (at < 0)
        return;
    free(s->pre.field[at]);
    free(s->pre.val[at]);
    s->pre.n--;
    s->pre.field[at] = s->pre.field[s->pre.n];
    s->pre.val[at] = s->pre.val[s->pre.n];
}

void ao_rs_forget(struct ao_runstore *s)
{
    for (int i = 0; i < s->pre.n; i++) {
        free(s->pre.field[i]);
        free(s->pre.val[i]);
    }
    free(s->pre.key);
    s->pre.key = NULL;
    s->pre.n = 0;
}

int ao_rs_prefetch(struct ao_runstore *s, const char *key, int n, const char *const *fields,
                   char *err, size_t errlen)
{
    char k[AO_REDIS_KEY_MAX];
    const char *argv[2 + PREFETCH_MAX] = {"HMGET"};
    const char *want[PREFETCH_MAX];
    redisReply *rep;
    int rc = -1, m = 0;

    ao_rs_forget(s);
    if (!s->redis)
        return 0; /* the file store reads from memory */
    if (n < 1 || n > PREFETCH_MAX)
        return ao_errf(err, errlen, "a read-ahead of %d fields (1 to %d)", n, PREFETCH_MAX);
    for (int i = 0; i < n; i++)
        if (!kept_find(s, key, fields[i])) /* a kept field is known already */
            want[m++] = fields[i];
    if (m == 0)
        return 0;
    if (!(argv[1] = ao_redis_key(s->redis, k, sizeof k, "%s", key)))
        return ao_errf(err, errlen, "redis key '%.60s...' is too long", key);
    for (int i = 0; i < m; i++)
        argv[2 + i] = want[i];
    if (!(rep = ao_redis_argv(s->redis, 2 + m, argv, NULL, err, errlen)))
        return -1;
    if (rep->type != REDIS_REPLY_ARRAY || rep->elements != (size_t)m) {
        snprintf(err, errlen, "redis HMGET: unexpected reply");
        goto out;
    }
    s->pre.key = ao_strdup(key);
    for (int i = 0; i < m; i++) {
        const redisReply *v = rep->element[i];
        s->pre.field[i] = ao_strdup(want[i]);
        s->pre.val[i] = v->type == REDIS_REPLY_STRING ? ao_strndup(v->str, v->len) : NULL;
        s->pre.n++;
        if (s->pre.val[i] && keepable(s, want[i]))
            kept_put(s, key, want[i], s->pre.val[i]);
    }
    rc = 0;
out:
    if (rc < 0)
        ao_rs_forget(s);
    freeReplyObject(rep);
    return rc;
}

int ao_rs_hget(struct ao_runstore *s, const char *key, const char *field, char **val, char *err,
               size_t errlen)
{
    *val = NULL;
    if (s->redis) {
        int at = prefetched(s, key, field);
        struct kept *kp = kept_find(s, key, field);
        if (kp) {
            *val = ao_strdup(kp->val);
            return 1;
        }
        if (at >= 0) {
            if (!s->pre.val[at])
                return 0;
            *val = ao_strdup(s->pre.val[at]);
            return 1;
        }
        redisReply *rep = command(s, "HGET", key, field, NULL, err, errlen);
        int rc = 0;
        if (!rep)
            return -1;
        if (rep->type == REDIS_REPLY_STRING) {
            *val = ao_strndup(rep->str, rep->len);
            rc = 1;
        }
        freeReplyObject(rep);
        if (rc == 1 && keepable(s, field))
            kept_put(s, key, field, *val);
        return rc;
    }
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(entry(s, key, 0), field);
    if (!cJSON_IsString(v))
        return 0;
    *val = ao_strdup(v->valuestring);
    return 1;
}

static int file_hset(struct ao_runstore *s, const char *key, const char *field, const char *val,
                     int only_new, char *err, size_t errlen)
{
    cJSON *e = entry(s, key, 1);

    (void)err, (void)errlen;
    if (cJSON_GetObjectItemCaseSensitive(e, field)) {
        if (only_new)
            return 0;
        cJSON_DeleteItemFromObjectCaseSensitive(e, field);
    }
    cJSON_AddItemToObject(e, field, cJSON_CreateString(val));
    s->dirty = 1;
    return 1;
}

int ao_rs_hset(struct ao_runstore *s, const char *key, const char *field, const char *val,
               char *err, size_t errlen)
{
    if (s->redis) {
        redisReply *rep = command(s, "HSET", key, field, val, err, errlen);
        written(s, key, field);
        freeReplyObject(rep);
        return rep ? 0 : -1;
    }
    return file_hset(s, key, field, val, 0, err, errlen) < 0 ? -1 : 0;
}

int ao_rs_hset_many(struct ao_runstore *s, const char *key, int n, const char *const *fields,
                    const char *const *vals, char *err, size_t errlen)
{
    char k[AO_REDIS_KEY_MAX];
    const char **argv;
    redisReply *rep;

    if (!s->redis) {
        for (int i = 0; i < n; i++)
            if (file_hset(s, key, fields[i], vals[i], 0, err, errlen) < 0)
                return -1;
        return 0;
    }
    if (!ao_redis_key(s->redis, k, sizeof k, "%s", key))
        return ao_errf(err, errlen, "redis key '%.60s...' is too long", key);
    argv = ao_calloc((size_t)(2 + 2 * n), sizeof *argv);
    argv[0] = "HSET";
    argv[1] = k;
    for (int i = 0; i < n; i++) {
        argv[2 + 2 * i] = fields[i];
        argv[3 + 2 * i] = vals[i];
        written(s, key, fields[i]);
    }
    rep = ao_redis_argv(s->redis, 2 + 2 * n, argv, NULL, err, errlen);
    free(argv);
    if (!rep)
        return -1;
    freeReplyObject(rep);
    return 0;
}

int ao_rs_hsetnx(struct ao_runstore *s, const char *key, const char *field, const char *val,
                 char *err, size_t errlen)
{
    if (s->redis) {
        redisReply *rep = command(s, "HSETNX", key, field, val, err, errlen);
        written(s, key, field);
        int rc = rep && rep->type == REDIS_REPLY_INTEGER ? (int)rep->integer : -1;
        if (rep && rc < 0)
            snprintf(err, errlen, "redis HSETNX: unexpected reply");
        freeReplyObject(rep);
        return rc;
    }
    return file_hset(s, key, field, val, 1, err, errlen);
}

int ao_rs_hsetnx_len(struct ao_runstore *s, const char *key, const char *field, const char *val,
                     long *len, char *err, size_t errlen)
{
    char k[AO_REDIS_KEY_MAX];
    const char *set[4] = {"HSETNX", NULL, field, val}, *count[2] = {"HLEN", NULL};
    struct ao_redis_cmd cmds[2] = {{4, set, NULL}, {2, count, NULL}};
    redisReply *rep[2];
    int rc = -1;

    if (!s->redis) {
        if ((rc = file_hset(s, key, field, val, 1, err, errlen)) >= 0)
            *len = cJSON_GetArraySize(entry(s, key, 0));
        return rc;
    }
    if (!(set[1] = count[1] = ao_redis_key(s->redis, k, sizeof k, "%s", key)))
        return ao_errf(err, errlen, "redis key '%.60s...' is too long", key);
    written(s, key, field);
    if (ao_redis_pipeline(s->redis, 2, cmds, rep, err, errlen) < 0)
        return -1;
    if (rep[0]->type == REDIS_REPLY_INTEGER && rep[1]->type == REDIS_REPLY_INTEGER) {
        rc = (int)rep[0]->integer;
        *len = (long)rep[1]->integer;
    } else {
        snprintf(err, errlen, "redis HSETNX, HLEN: unexpected reply");
    }
    freeReplyObject(rep[0]);
    freeReplyObject(rep[1]);
    return rc;
}

long ao_rs_hlen(struct ao_runstore *s, const char *key, char *err, size_t errlen)
{
    if (s->redis) {
        redisReply *rep = command(s, "HLEN", key, NULL, NULL, err, errlen);
        long n = rep && rep->type == REDIS_REPLY_INTEGER ? (long)rep->integer : -1;
        if (rep && n < 0)
            snprintf(err, errlen, "redis HLEN: unexpected reply");
        freeReplyObject(rep);
        return n;
    }
    return cJSON_GetArraySize(entry(s, key, 0));
}

/* Redis replies of alternating names and values (HGETALL), or members
 * (SMEMBERS) into a JSON object or array. */
static cJSON *from_reply(redisReply *rep, int pairs, char *err, size_t errlen)
{
    cJSON *out = pairs ? cJSON_CreateObject() : cJSON_CreateArray();

    if (!rep || rep->type != REDIS_REPLY_ARRAY) {
        if (rep)
            snprintf(err, errlen, "redis: unexpected reply");
        cJSON_Delete(out);
        freeReplyObject(rep);
        return NULL;
    }
    for (size_t i = 0; i < rep->elements; i += pairs ? 2 : 1) {
        const redisReply *n = rep->element[i], *v = pairs && i + 1 < rep->elements ? rep->element[i + 1] : NULL;
        char *name = ao_strndup(n->str ? n->str : "", n->len);
        char *value = v ? ao_strndup(v->str ? v->str : "", v->len) : NULL;
        if (pairs && value)
            cJSON_AddItemToObject(out, name, cJSON_CreateString(value));
        else if (!pairs)
            cJSON_AddItemToArray(out, cJSON_CreateString(name));
        free(name);
        free(value);
    }
    freeReplyObject(rep);
    return out;
}

cJSON *ao_rs_hgetall(struct ao_runstore *s, const char *key, char *err, size_t errlen)
{
    const cJSON *e;
    cJSON *out;

    if (s->redis)
        return from_reply(command(s, "HGETALL", key, NULL, NULL, err, errlen), 1, err, errlen);
    e = entry(s, key, 0);
    out = e ? cJSON_Duplicate(e, 1) : cJSON_CreateObject();
    return out;
}

int ao_rs_sadd(struct ao_runstore *s, const char *key, const char *member, char *err,
               size_t errlen)
{
    if (s->redis) {
        redisReply *rep = command(s, "SADD", key, member, NULL, err, errlen);
        freeReplyObject(rep);
        return rep ? 0 : -1;
    }
    return file_hset(s, key, member, "1", 1, err, errlen) < 0 ? -1 : 0;
}

int ao_rs_del(struct ao_runstore *s, const char *key, char *err, size_t errlen)
{
    if (s->redis) {
        redisReply *rep = command(s, "DEL", key, NULL, NULL, err, errlen);
        freeReplyObject(rep);
        return rep ? 0 : -1;
    }
    if (cJSON_GetObjectItemCaseSensitive(s->root, key)) {
        cJSON_DeleteItemFromObjectCaseSensitive(s->root, key);
        s->dirty = 1;
    }
    return 0;
}

int ao_rs_srem(struct ao_runstore *s, const char *key, const char *member, char *err,
               size_t errlen)
{
    cJSON *e;

    if (s->redis) {
        redisReply *rep = command(s, "SREM", key, member, NULL, err, errlen);
        freeReplyObject(rep);
        return rep ? 0 : -1;
    }
    if ((e = entry(s, key, 0)) && cJSON_GetObjectItemCaseSensitive(e, member)) {
        cJSON_DeleteItemFromObjectCaseSensitive(e, member);
        s->dirty = 1;
    }
    return 0;
}

cJSON *ao_rs_smembers(struct ao_runstore *s, const char *key, char *err, size_t errlen)
{
    const cJSON *e, *it;
    cJSON *out;

    if (s->redis)
        return from_reply(command(s, "SMEMBERS", key, NULL, NULL, err, errlen), 0, err, errlen);
    out = cJSON_CreateArray();
    e = entry(s, key, 0);
    cJSON_ArrayForEach(it, e)
        cJSON_AddItemToArray(out, cJSON_CreateString(it->string));
    return out;
}

int ao_runstore_json(struct ao_runstore *s, const char *run, const char *field, cJSON **out, char *err,
                     size_t errlen)
{
    const cJSON *j;
    int rc = ao_runstore_json_ref(s, run, field, &j, err, errlen);

    *out = rc == 1 && j ? cJSON_Duplicate(j, 1) : NULL;
    return rc;
}

int ao_runstore_json_ref(struct ao_runstore *s, const char *run, const char *field, const cJSON **out,
                         char *err, size_t errlen)
{
    char key[AO_KEY_MAX], *text = NULL;
    struct kept *k;
    int rc;

    *out = NULL;
    cJSON_Delete(s->ref);
    s->ref = NULL;
    if (ao_name(key, sizeof key, AO_KEY_RUN, run) < 0) {
        snprintf(err, errlen, "run id '%.40s...' is too long for a key", run);
        return -1;
    }
    /* a kept field is parsed once while it is kept; another is read (and
     * kept, where it may be) */
    if (!(k = kept_find(s, key, field))) {
        if ((rc = ao_rs_hget(s, key, field, &text, err, errlen)) != 1) {
            free(text);
            return rc;
        }
        k = kept_find(s, key, field);
    }
    if (k) {
        if (!k->json)
            k->json = cJSON_Parse(k->val);
        *out = k->json;
    } else {
        *out = s->ref = cJSON_Parse(text);
    }
    free(text);
    return 1;
}

struct ao_run_usage ao_runstore_usage(struct ao_runstore *s, const char *run)
{
    static const char *const fields[] = {"tokens_prompt", "tokens_completion", "cost_usd"};
    double v[3] = {0, 0, 0};
    char key[AO_KEY_MAX], err[256];

    if (ao_name(key, sizeof key, AO_KEY_RUN, run) < 0)
        return (struct ao_run_usage){0, 0, 0}; /* no run has that id */
    for (int i = 0; i < 3; i++) {
        char *text = NULL;
        if (ao_rs_hget(s, key, fields[i], &text, err, sizeof err) == 1)
            v[i] = atof(text);
        free(text);
    }
    return (struct ao_run_usage){v[0], v[1], v[2]};
}

const char *const ao_role_names[AO_ROLES] = {"planner", "executor", "summarizer"};

/* The members whose lease has not ended, after the server's clock. */
static const char calls_script[] =
    "local t = redis.call('TIME')\n"
    "local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)\n"
    "local m = redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. now, '+inf', 'WITHSCORES')\n"
    "table.insert(m, 1, tostring(now))\n"
    "return m\n";

struct ao_run_calls ao_runstore_calls(struct ao_runstore *s, const char *run)
{
    struct ao_run_calls c = {{0}, {0}};
    char key[AO_REDIS_KEY_MAX], err[256];
    const char *argv[4] = {"EVAL", calls_script, "1", key};
    redisReply *rep;
    double now;

    if (!s->redis || !ao_redis_key(s->redis, key, sizeof key, AO_KEY_INFLIGHT, run) ||
        !(rep = ao_redis_argv(s->redis, 4, argv, NULL, err, sizeof err)))
        return c;
    if (rep->type != REDIS_REPLY_ARRAY || rep->elements < 1 || !rep->element[0]->str) {
        freeReplyObject(rep);
        return c;
    }
    now = atof(rep->element[0]->str);
    for (size_t i = 1; i + 1 < rep->elements; i += 2) {
        const char *m = rep->element[i]->str, *role = m ? strchr(m, '|') : NULL, *lease;
        double begun, age;
        if (!role || !rep->element[i + 1]->str || !(lease = strchr(role + 1, '|')))
            continue; /* an older stage's member: no lease said */
        role++;
        begun = atof(rep->element[i + 1]->str) - atof(lease + 1);
        age = (now - begun) / 1000;
        for (int r = 0; r < AO_ROLES; r++)
            if ((size_t)(lease - role) == strlen(ao_role_names[r]) &&
                strncmp(role, ao_role_names[r], (size_t)(lease - role)) == 0) {
                c.n[r]++;
                if (age > c.oldest_s[r])
                    c.oldest_s[r] = age;
            }
    }
    freeReplyObject(rep);
    return c;
}
