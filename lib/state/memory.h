/* memory.h - the optimization memory in Redis (docs/AGENTS.md): a
 * capped list per scope, written atomically with the idempotency marker of
 * the pair each item came from */
#ifndef AO_MEMORY_H
#define AO_MEMORY_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "core/redis.h"

/* What one memory item may hold, in bytes (schemas/memory_item.json says
 * the same in characters): the summarizer clips to these, import refuses
 * a file with anything over them, and the planner's prompt shows no more. */
#define AO_MEMORY_ID_MAX 200
#define AO_MEMORY_TITLE_MAX 200
#define AO_MEMORY_SUMMARY_MAX 1500
#define AO_MEMORY_SNIPPET_MAX 2000 /* before, after */
#define AO_MEMORY_PLAN_MAX 4000
#define AO_MEMORY_LINE_MAX 16384   /* one exported item, as a line */

/* The list key (without the prefix) of a memory scope: "target" (the
 * default: every task of the target shares one memory), "task" (the
 * paper's behaviour), "none" (no memory), or a name of [A-Za-z0-9._-].
 * Returns 1 with key filled, 0 for "none", -1 + err for a bad name. */
int ao_memory_key(const char *scope, const char *target, const char *task, char *key,
                  size_t keylen, char *err, size_t errlen);

/* The newest items of a memory, at most max, newest first, as a JSON array
 * of item objects (the caller deletes it); unreadable items are skipped.
 * NULL + err when Redis fails. */
cJSON *ao_memory_read(struct ao_redis *r, const char *key, int max, char *err, size_t errlen);

/* Check a stored item (an exported line without its type and v) against
 * the limits and forms of schemas/memory_item.json that the message codec
 * does not check itself: 0, or -1 + err naming the field. */
int ao_memory_item_check(const cJSON *item, char *err, size_t errlen);
/* Cut an item's text fields to the limits above (at a character boundary,
 * ending in "..."), as the summarizer stores it. */
void ao_memory_item_clip(cJSON *item);
/* How sure an item's speedup is, for a reader: " (head to head, 95%
 * interval 1.10-1.30)" where it was learned head to head, " (give or take
 * 5%)" where it has only a spread, "" otherwise; digits after the point as
 * given.  Into out (len). */
void ao_memory_item_sureness(const cJSON *item, int digits, char *out, size_t len);

/* Every item of a memory, newest first (ao_memory_read without a cap). */
cJSON *ao_memory_all(struct ao_redis *r, const char *key, char *err, size_t errlen);

/* In one atomic step, push the items (JSON texts, ids[i] the id of
 * items[i]) whose id the memory does not hold yet, so that items[0] ends
 * up newest.  Returns how many were pushed, or -1 + err. */
long long ao_memory_import(struct ao_redis *r, const char *key, const char *const *ids,
                           const char *const *items, size_t n, char *err, size_t errlen);

/* In one atomic step, remove the items with these ids; returns how many
 * went, or -1 + err. */
long long ao_memory_remove(struct ao_redis *r, const char *key, const char *const *ids, size_t n,
                           char *err, size_t errlen);

/* Fold every group of equal lessons in the memory into one (memfold.h),
 * in one atomic step against what it read: 0 with *folded the items that
 * went, or -1 + err. */
int ao_memory_compact(struct ao_redis *r, const char *key, int *folded, char *err, size_t errlen);

/* Delete the whole memory: 0 or -1 + err. */
int ao_memory_clear(struct ao_redis *r, const char *key, char *err, size_t errlen);

/* What a pair left: its marker holds the experience message acked for it.
 * 1 and *ack (malloc'd JSON) if the pair was handled before, 0 if not, -1. */
int ao_memory_marker(struct ao_redis *r, const char *pair_id, char **ack, char *err,
                     size_t errlen);

/* In one atomic step: unless the pair's marker exists, push item (when not
 * NULL) on the list, trim it to expn items, and set the marker to ack.
 * An item whose lesson the memory holds already is folded with it
 * (memfold.h): the one item that stands for both goes at the head, the
 * other out.  Returns 1 when written, 0 when the marker was already there,
 * -1 + err. */
int ao_memory_store(struct ao_redis *r, const char *key, const char *pair_id, const char *item,
                    const char *ack, int expn, char *err, size_t errlen);

#endif
