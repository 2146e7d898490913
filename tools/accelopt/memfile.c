/* memfile.c - the optimization memory as a file: JSON Lines of memory
 * items (what `accelopt memory export` writes, `import` and `--memory FILE`
 * read, and the machine's own memory keeps on disk), each line checked
 * as the memory's items are */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "core/alloc.h"
#include "core/log.h"
#include "core/redis.h"
#include "core/util.h"
#include "memfile.h"
#include "state/memory.h"
#include "wire/msg.h"

#define MAX_IMPORT 10000 /* items in one file */

cJSON *memory_as_line(const cJSON *it)
{
    cJSON *o = cJSON_CreateObject(), *c;

    cJSON_AddStringToObject(o, "type", "memory_item");
    cJSON_AddNumberToObject(o, "v", AO_MSG_VERSION);
    cJSON_ArrayForEach(c, it) {
        if (strcmp(c->string, "type") && strcmp(c->string, "v"))
            cJSON_AddItemToObject(o, c->string, cJSON_Duplicate(c, 1));
    }
    return o;
}

int memory_write_items(FILE *f, const cJSON *items)
{
    const cJSON *it;
    int n = 0, i = 0;

    cJSON_ArrayForEach(it, items) {
        char err[AO_ERRLEN], *s;
        cJSON *l = memory_as_line(it);
        struct ao_memory_item_msg m;
        i++;
        if (ao_msg_decode(&ao_msg_memory_item, l, &m, err, sizeof err) < 0 ||
            (ao_msg_release(&ao_msg_memory_item, &m), ao_memory_item_check(it, err, sizeof err) < 0)) {
            ao_warn("item %d (%s) left out: %s", i, ao_json_str(it, "id", "?"), err);
            cJSON_Delete(l);
            continue;
        }
        if ((s = cJSON_PrintUnformatted(l)))
            fprintf(f, "%s\n", s);
        cJSON_free(s);
        cJSON_Delete(l);
        n++;
    }
    return n;
}

int memory_export(struct ao_redis *r, const char *const *keys, int nkeys, const char *path,
                  int *count, char *err, size_t errlen)
{
    FILE *f = path && strcmp(path, "-") ? fopen(path, "w") : stdout;
    int rc = 0;

    *count = 0;
    if (!f)
        return snprintf(err, errlen, "cannot write '%s': %s", path, strerror(errno)), -1;
    for (int k = 0; k < nkeys && rc == 0; k++) {
        cJSON *items;
        if (!(items = ao_memory_all(r, keys[k], err, errlen)))
            rc = -1;
        else
            *count += memory_write_items(f, items);
        cJSON_Delete(items);
    }
    if ((f != stdout ? fclose(f) : fflush(f)) != 0 && rc == 0)
        rc = -1, snprintf(err, errlen, "cannot write '%s'", path ? path : "stdout");
    return rc;
}

/* One line of f into buf (cap bytes), without its newline: its length,
 * -1 at the end of the file, or -2 for a line over cap - 1 bytes (read no
 * further: an endless line costs no memory). */
static ssize_t bounded_line(FILE *f, char *buf, size_t cap)
{
    size_t n = 0;
    int c;

    while ((c = getc(f)) != EOF && c != '\n') {
        if (n + 1 >= cap)
            return -2;
        buf[n++] = (char)c;
    }
    buf[n] = 0;
    return c == EOF && n == 0 ? -1 : (ssize_t)n;
}

/* Read and check every line of FILE; nothing is imported unless all are
 * good.  Fills items (stored form, with the provenance import adds); the
 * count, or -1 + err naming the file and line. */
static int read_import(const char *path, const char *origin, int stamp, cJSON *items, char *err,
                       size_t errlen)
{
    char why[AO_ERRLEN], now[32], *line = ao_malloc(AO_MEMORY_LINE_MAX + 2);
    ssize_t len;
    FILE *f = strcmp(path, "-") ? fopen(path, "r") : stdin;
    long lineno = 0;
    int n = 0, rc = 0;
    time_t t = time(NULL);

    if (!f) {
        snprintf(err, errlen, "cannot read '%s': %s", path, strerror(errno));
        if (f && f != stdin)
            fclose(f);
        free(line);
        return -1;
    }
    strftime(now, sizeof now, "%Y-%m-%dT%H:%M:%SZ", gmtime(&t));
    while (rc == 0 && (len = bounded_line(f, line, AO_MEMORY_LINE_MAX + 2)) != -1) {
        struct ao_memory_item_msg m;
        cJSON *j = NULL;
        lineno++;
        why[0] = 0;
        while (len > 0 && line[len - 1] == '\r')
            line[--len] = 0;
        if (len == 0)
            continue;
        if (len < 0 || (size_t)len > AO_MEMORY_LINE_MAX)
            snprintf(why, sizeof why, "the line is over the limit of %d bytes",
                     AO_MEMORY_LINE_MAX);
        else if (memchr(line, 0, (size_t)len))
            snprintf(why, sizeof why, "a NUL byte");
        else if (!(j = cJSON_ParseWithLength(line, (size_t)len)))
            snprintf(why, sizeof why, "not JSON");
        else if (ao_msg_decode(&ao_msg_memory_item, j, &m, why, sizeof why) == 0) {
            ao_msg_release(&ao_msg_memory_item, &m);
            cJSON_DeleteItemFromObjectCaseSensitive(j, "type");
            cJSON_DeleteItemFromObjectCaseSensitive(j, "v");
            if (ao_memory_item_check(j, why, sizeof why) == 0 && ++n > MAX_IMPORT)
                snprintf(why, sizeof why, "more than %d items", MAX_IMPORT);
        }
        if (why[0]) {
            snprintf(err, errlen, "%s:%ld: %s%s", path, lineno, why, stamp ? "; nothing imported" : "");
            rc = -1;
        } else {
            /* provenance: kept as it came, plus when (and whence) it arrived */
            if (stamp) {
                cJSON_DeleteItemFromObjectCaseSensitive(j, "imported_at");
                cJSON_AddStringToObject(j, "imported_at", now);
            }
            if (origin) {
                cJSON_DeleteItemFromObjectCaseSensitive(j, "origin");
                cJSON_AddStringToObject(j, "origin", origin);
            }
            cJSON_AddItemToArray(items, j);
            j = NULL;
        }
        cJSON_Delete(j);
    }
    if (rc == 0 && ferror(f))
        rc = -1, snprintf(err, errlen, "cannot read '%s'", path);
    free(line);
    if (f != stdin)
        fclose(f);
    return rc < 0 ? -1 : n;
}

int memory_read_file(const char *path, cJSON *items, char *err, size_t errlen)
{
    return read_import(path, NULL, 0, items, err, errlen);
}

int memory_import(struct ao_redis *r, const char *key, const char *path, const char *origin,
                  long long *pushed, int *count, char *err, size_t errlen)
{
    cJSON *items = cJSON_CreateArray(), *it;
    const char **ids = NULL, **texts = NULL;
    int n, k = 0, rc = -1;

    *pushed = *count = 0;
    if (origin && (strlen(origin) > 200 || strpbrk(origin, "\n\r"))) {
        snprintf(err, errlen, "the origin must be at most 200 characters on one line");
        goto out;
    }
    if ((n = read_import(path, origin, 1, items, err, errlen)) < 0)
        goto out;
    ids = ao_calloc((size_t)n + 1, sizeof *ids);
    texts = ao_calloc((size_t)n + 1, sizeof *texts);
    cJSON_ArrayForEach(it, items) {
        ids[k] = ao_json_str(it, "id", "");
        texts[k++] = cJSON_PrintUnformatted(it);
    }
    if ((*pushed = ao_memory_import(r, key, ids, texts, (size_t)n, err, errlen)) < 0)
        goto out;
    if (*pushed > 0) { /* a lesson the memory held already is one item, its evidence counted */
        int folded;
        if (ao_memory_compact(r, key, &folded, err, errlen) < 0)
            goto out;
    }
    *count = n;
    rc = 0;
out:
    for (int i = 0; texts && i < k; i++)
        cJSON_free((void *)texts[i]);
    free(texts);
    free(ids);
    cJSON_Delete(items);
    return rc;
}
