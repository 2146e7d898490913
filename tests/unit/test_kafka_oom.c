/* test_kafka_oom.c - ao_io_kafka_new when an allocation fails (issue 70,
 * item 7): its first two allocations are the transport and its state, and
 * the fail path once handed kafka_close a transport that was NULL.  This
 * binary's calloc fails on the call it is told to, so each of them is
 * refused in turn: "out of memory", NULL, and no crash. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "wire/io.h"
#include "wire/kafka.h"

/* a sanitizer's allocator is its own: not replaced there */
#if defined(__SANITIZE_ADDRESS__)
#define CALLOC_SWAP 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CALLOC_SWAP 0
#endif
#endif
#ifndef CALLOC_SWAP
#define CALLOC_SWAP 1
#endif

#if CALLOC_SWAP
void *__libc_calloc(size_t n, size_t size);

static int fail_at; /* the calloc call from now that fails (1: the next); 0: none */

/* Every calloc of this process, librdkafka's too, comes here first. */
void *calloc(size_t n, size_t size)
{
    if (fail_at > 0 && --fail_at == 0)
        return NULL;
    return __libc_calloc(n, size);
}
#endif

int main(void)
{
#if !CALLOC_SWAP
    printf("ok 1 # skip a sanitizer's calloc cannot be replaced here\n1..1\n");
    return 0;
#else
    /* nothing listens there: both failures come before any connection */
    struct ao_kafka_site site = {"127.0.0.1:9", NULL, NULL, NULL, NULL};
    const char *topics[] = {"kernels", NULL};
    char err[256];
    struct ao_io *io;

    for (int k = 1; k <= 2; k++) {
        err[0] = '\0';
        fail_at = k;
        io = ao_io_kafka_new("test", &site, "test", topics, err, sizeof err);
        fail_at = 0;
        CHECK(io == NULL && strcmp(err, "out of memory") == 0,
              "the %s's allocation fails: no transport, \"out of memory\" (%s)", k == 1 ? "transport" : "state",
              err);
    }
    return CHECK_DONE();
#endif
}
