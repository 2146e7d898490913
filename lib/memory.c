/* memory.c - the optimization memory in Redis */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "log.h"
#include "memory.h"

#define MARKER_TTL "2592000" /* 30 days: replays come within minutes */

int ao_memory_key(const char *scope, const char *target, const char *task, char *key,
                  size_t keylen, char *err, size_t errlen)
{
    if (!scope || strcmp(scope, "target") == 0) {
        snprintf(key, keylen, "memory:target:%s", target);
        return 1;
    }
    if (strcmp(scope, "task") == 0) {
        snprintf(key, keylen, "memory:task:%s:%s", target, task);
        return 1;
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
    snprintf(key, keylen, "memory:name:%s", scope);
    return 1;
}

cJSON *ao_memory_read(struct ao_redis *r, const char *key, int max, char *err, size_t errlen)
{
    char k[512], stop[24];
    const char *argv[4] = {"LRANGE", k, "0", stop};
    redisReply *rep;
    cJSON *items;

    ao_redis_key(r, k, sizeof k, "%s", key);
    snprintf(stop, sizeof stop, "%d", max - 1);
    if (!(rep = ao_redis_argv(r, 4, argv, NULL, err, errlen)))
        return NULL;
    if (!(items = cJSON_CreateArray())) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
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
out:
    freeReplyObject(rep);
    return items;
}

int ao_memory_marker(struct ao_redis *r, const char *pair_id, char **ack, char *err,
                     size_t errlen)
{
    char k[512];
    snprintf(k, sizeof k, "pairdone:%s", pair_id); /* ao_redis_get adds the prefix */
    return ao_redis_get(r, k, ack, err, errlen) < 0 ? -1 : *ack != NULL;
}

/* LPUSH + LTRIM + SET marker, all or nothing (a script runs atomically). */
static const char store_script[] =
    "if redis.call('EXISTS', KEYS[2]) == 1 then return 0 end\n"
    "if ARGV[1] ~= '' then\n"
    "  redis.call('LPUSH', KEYS[1], ARGV[1])\n"
    "  redis.call('LTRIM', KEYS[1], 0, tonumber(ARGV[2]) - 1)\n"
    "end\n"
    "redis.call('SET', KEYS[2], ARGV[3], 'EX', ARGV[4])\n"
    "return 1\n";

int ao_memory_store(struct ao_redis *r, const char *key, const char *pair_id, const char *item,
                    const char *ack, int expn, char *err, size_t errlen)
{
    char list[512], marker[512], cap[24];
    const char *argv[9] = {"EVAL", store_script, "2", list, marker, item ? item : "", cap, ack,
                           MARKER_TTL};
    redisReply *rep;
    int rc;

    if (expn < 1) {
        snprintf(err, errlen, "the memory capacity must be at least 1");
        return -1;
    }
    ao_redis_key(r, list, sizeof list, "%s", key);
    ao_redis_key(r, marker, sizeof marker, "pairdone:%s", pair_id);
    snprintf(cap, sizeof cap, "%d", expn);
    if (!(rep = ao_redis_argv(r, 9, argv, NULL, err, errlen)))
        return -1;
    rc = rep->type == REDIS_REPLY_INTEGER ? (int)rep->integer : -1;
    if (rc < 0)
        snprintf(err, errlen, "redis: unexpected reply to the memory script");
    freeReplyObject(rep);
    return rc;
}
