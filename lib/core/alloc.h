/* alloc.h - memory that is there, or the process ends.
 *
 * The one out-of-memory policy (Redis's and jq's): an allocation that
 * fails writes one line to stderr and aborts.  Nothing is lost by it: a
 * stage runs supervised, and the message it held is delivered again
 * (its offset is committed only once its outputs are out); what comes
 * from outside is bounded before it is read (a broker's message size,
 * the model reply's cap, ao_read_file_max), so no input asks for more
 * than a machine has.  Callers do not test these for NULL.
 *
 * cJSON allocates through the same functions (installed before main),
 * so a cJSON_Create* or cJSON_Print never returns NULL for memory.
 *
 * The exception: the profiler's tensor buffers (prof_tensor_alloc), sized
 * by the task and the machine, are checked where they are made, and fail
 * only the measurement that asked for them. */
#ifndef AO_ALLOC_H
#define AO_ALLOC_H

#include <stddef.h>

void *ao_malloc(size_t n) __attribute__((malloc, returns_nonnull));
void *ao_calloc(size_t n, size_t size) __attribute__((malloc, returns_nonnull));
void *ao_realloc(void *p, size_t n) __attribute__((returns_nonnull));
char *ao_strdup(const char *s) __attribute__((malloc, returns_nonnull));
char *ao_strndup(const char *s, size_t n) __attribute__((malloc, returns_nonnull));

#endif
