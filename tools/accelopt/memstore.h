/* memstore.h - the memory this machine keeps between runs: one file per
 * memory key under <state dir>/memory (memstore.c). */
#ifndef AO_MEMSTORE_H
#define AO_MEMSTORE_H

#include <stddef.h>

struct ao_redis;

/* The file of a memory key: 0 or -1 + err. */
int memstore_path(const char *key, char *path, size_t len, char *err, size_t errlen);
/* The file's items into the key at r (those it lacks): 0 with *count the
 * items added (a file that is no memory is moved aside and said), -1 + err. */
int memstore_load(struct ao_redis *r, const char *key, int *count, char *err, size_t errlen);
/* Under the key's lock: what the file holds now merged into r, then the
 * newest expn items of the key written as the file: 0 with *count, -1 + err. */
int memstore_save(struct ao_redis *r, const char *key, int expn, int *count, char *err,
                  size_t errlen);

/* Under the key's lock: the file's items that drop(item, ctx) takes
 * removed (unless dry), *removed and *left counted: 0 or -1 + err.  No
 * file: an empty memory. */
struct cJSON;
int memstore_forget(const char *key, int (*drop)(const struct cJSON *item, void *ctx), void *ctx,
                    int dry, int *removed, int *left, char *err, size_t errlen);

#endif
