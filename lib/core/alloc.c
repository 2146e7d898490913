/* alloc.c - allocations that succeed or abort (the policy: alloc.h) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include "core/alloc.h"

static void out_of_memory(size_t n)
{
    char line[96];
    int len = snprintf(line, sizeof line, "accelopt: out of memory (%zu bytes asked): aborting\n", n);

    /* no stdio buffer, no allocation: the one line gets out */
    if (len > 0 && write(2, line, (size_t)len) < 0)
        _exit(134);
    abort();
}

void *ao_malloc(size_t n)
{
    void *p = malloc(n ? n : 1);

    if (!p)
        out_of_memory(n);
    return p;
}

void *ao_calloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);

    if (!p)
        out_of_memory(n * size);
    return p;
}

void *ao_realloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);

    if (!q)
        out_of_memory(n);
    return q;
}

char *ao_strdup(const char *s)
{
    size_t n = strlen(s) + 1;

    return memcpy(ao_malloc(n), s, n);
}

char *ao_strndup(const char *s, size_t n)
{
    size_t len = strnlen(s, n);
    char *d = ao_malloc(len + 1);

    memcpy(d, s, len);
    d[len] = '\0';
    return d;
}

/* cJSON's allocations go through ours, from before main: every tool and
 * test that links this library keeps the one policy. */
__attribute__((constructor)) static void cjson_hooks(void)
{
    cJSON_Hooks h = {ao_malloc, free};

    cJSON_InitHooks(&h);
}
