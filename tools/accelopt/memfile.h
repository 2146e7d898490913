/* memfile.h - the optimization memory as a file (memfile.c) */
#ifndef AO_MEMFILE_H
#define AO_MEMFILE_H

#include <stdio.h>

struct ao_redis;
struct cJSON;

/* An item (stored form) as an exported line: type and v first, then the
 * item. */
struct cJSON *memory_as_line(const struct cJSON *it);
/* Import FILE ("-": stdin) into the memory at key, all or nothing; counts
 * the items in the file and those new here.  0 or -1 + err. */
int memory_import(struct ao_redis *r, const char *key, const char *path, const char *origin,
                  long long *pushed, int *count, char *err, size_t errlen);
/* Export the memories at keys (distinct: memory_keys in run.c) to FILE (NULL or "-": stdout).
 * 0 with *count, or -1 + err. */
int memory_export(struct ao_redis *r, const char *const *keys, int nkeys, const char *path,
                  int *count, char *err, size_t errlen);
/* Items (stored form) as export lines to f, what import would refuse left
 * out with a warning: the count written. */
int memory_write_items(FILE *f, const struct cJSON *items);
/* Read and check every line of a memory file into items (stored form):
 * the count, or -1 + err naming the line. */
int memory_read_file(const char *path, struct cJSON *items, char *err, size_t errlen);

#endif
