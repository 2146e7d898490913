/* runstore.h - where the selector keeps run state: Redis hashes (shared,
 * survives a restart) or, in pipe mode, a JSON file of the same shape */
#ifndef AO_RUNSTORE_H
#define AO_RUNSTORE_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "core/redis.h"

struct ao_runstore;

/* Keys are given unprefixed ("run:r1"); the Redis store adds its prefix. */
struct ao_runstore *ao_runstore_redis(struct ao_redis *r);
/* The file store: loaded from path when it exists, written back by
 * ao_runstore_save (path NULL: kept in memory only).  NULL + err. */
struct ao_runstore *ao_runstore_file(const char *path, char *err, size_t errlen);
/* Write the file store out (atomically: temp file + rename) if it changed;
 * a no-op for Redis.  0 or -1 + err. */
int ao_runstore_save(struct ao_runstore *s, char *err, size_t errlen);
void ao_runstore_free(struct ao_runstore *s);

/* Hash fields.  hget: 1 + *val (malloc'd), 0 absent, -1 + err. */
int ao_rs_hget(struct ao_runstore *s, const char *key, const char *field, char **val, char *err,
               size_t errlen);
/* hset: 0 or -1.  hsetnx: 1 set, 0 it was there, -1 + err. */
int ao_rs_hset(struct ao_runstore *s, const char *key, const char *field, const char *val,
               char *err, size_t errlen);
int ao_rs_hsetnx(struct ao_runstore *s, const char *key, const char *field, const char *val,
                 char *err, size_t errlen);
/* Several fields of key set at once (one HSET: atomic, one round trip);
 * 0 or -1 + err. */
int ao_rs_hset_many(struct ao_runstore *s, const char *key, int n, const char *const *fields,
                    const char *const *vals, char *err, size_t errlen);
/* hsetnx, then the number of fields in *len, in one round trip. */
int ao_rs_hsetnx_len(struct ao_runstore *s, const char *key, const char *field, const char *val,
                     long *len, char *err, size_t errlen);
/* Read ahead: these fields of key in one round trip, for the ao_rs_hget
 * calls that follow (a message's handling) until ao_rs_forget; a write to
 * one of them through this store drops it.  For a store that nothing else
 * writes meanwhile (the selector owns its runs).  0 or -1 + err. */
int ao_rs_prefetch(struct ao_runstore *s, const char *key, int n, const char *const *fields,
                   char *err, size_t errlen);
void ao_rs_forget(struct ao_runstore *s);
/* Keep these fields (the caller's array, for the store's life) between
 * messages once read or read ahead, until a write through this store or
 * ao_rs_keep_clear: for fields no other process writes while this one owns
 * them (a selector's runs' state and beam, between rebalances).  At most
 * 64 are kept, the least recently used going first.  The Redis store only. */
void ao_rs_keep(struct ao_runstore *s, int n, const char *const *fields);
void ao_rs_keep_clear(struct ao_runstore *s);
/* Number of fields, or -1 + err. */
long ao_rs_hlen(struct ao_runstore *s, const char *key, char *err, size_t errlen);
/* All fields as a JSON object of strings (the caller deletes it); NULL + err. */
cJSON *ao_rs_hgetall(struct ao_runstore *s, const char *key, char *err, size_t errlen);
/* The key gone, whatever it held: 0 or -1 + err. */
int ao_rs_del(struct ao_runstore *s, const char *key, char *err, size_t errlen);
/* Set members: add/remove (0 or -1), list as a JSON array of strings. */
int ao_rs_sadd(struct ao_runstore *s, const char *key, const char *member, char *err,
               size_t errlen);
int ao_rs_srem(struct ao_runstore *s, const char *key, const char *member, char *err,
               size_t errlen);
cJSON *ao_rs_smembers(struct ao_runstore *s, const char *key, char *err, size_t errlen);

/* A field of the run's hash (run:<id>) as JSON: 1 with *out (NULL where
 * the text is not JSON), 0 absent, -1 + err. */
int ao_runstore_json(struct ao_runstore *s, const char *run, const char *field, cJSON **out, char *err,
                     size_t errlen);
/* The same, owned by the store: valid until the next call of this, a write
 * through the store, or ao_rs_keep_clear (a kept field is parsed once). */
int ao_runstore_json_ref(struct ao_runstore *s, const char *run, const char *field, const cJSON **out,
                         char *err, size_t errlen);

/* A run's model usage so far: the counters lib/budget keeps in run:<id>
 * (0 where absent or unreadable). */
struct ao_run_usage {
    double prompt, completion, usd;
};
struct ao_run_usage ao_runstore_usage(struct ao_runstore *s, const char *run);

/* A run's model calls in flight now (the set lib/agents/budget keeps),
 * by role, and how long the oldest has been out; all 0 for a store that
 * is not redis, or when it cannot be read. */
enum { AO_ROLE_PLANNER, AO_ROLE_EXECUTOR, AO_ROLE_SUMMARIZER, AO_ROLES };
extern const char *const ao_role_names[AO_ROLES];
struct ao_run_calls {
    int n[AO_ROLES];
    double oldest_s[AO_ROLES];
};
struct ao_run_calls ao_runstore_calls(struct ao_runstore *s, const char *run);

#endif
