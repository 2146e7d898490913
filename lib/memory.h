/* memory.h - the optimization memory in Redis (DESIGN.md section 6): a
 * capped list per scope, written atomically with the idempotency marker of
 * the pair each item came from */
#ifndef AO_MEMORY_H
#define AO_MEMORY_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "redis.h"

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

/* What a pair left: its marker holds the experience message acked for it.
 * 1 and *ack (malloc'd JSON) if the pair was handled before, 0 if not, -1. */
int ao_memory_marker(struct ao_redis *r, const char *pair_id, char **ack, char *err,
                     size_t errlen);

/* In one atomic step: unless the pair's marker exists, push item (when not
 * NULL) on the list, trim it to expn items, and set the marker to ack.
 * Returns 1 when written, 0 when the marker was already there, -1 + err. */
int ao_memory_store(struct ao_redis *r, const char *key, const char *pair_id, const char *item,
                    const char *ack, int expn, char *err, size_t errlen);

#endif
