/* test_oom.c - the one out-of-memory policy (core/alloc.h, issue 70 item
 * 3): an allocation that fails ends the process with one line on stderr
 * and SIGABRT, never a NULL followed further.  Each case runs in a child
 * whose malloc and calloc fail on the call they are told to:
 *  - ao_io_kafka_new's first allocations (the transport, its state): its
 *    fail path once handed kafka_close a NULL transport (SIGSEGV);
 *  - a cJSON object (cJSON allocates through the same functions);
 *  - ao_strdup. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "check.h"
#include "core/alloc.h"
#include "wire/io.h"
#include "wire/kafka.h"

/* a sanitizer's allocator is its own: not replaced there */
#if defined(__SANITIZE_ADDRESS__)
#define ALLOC_SWAP 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ALLOC_SWAP 0
#endif
#endif
#ifndef ALLOC_SWAP
#define ALLOC_SWAP 1
#endif

#if ALLOC_SWAP
void *__libc_calloc(size_t n, size_t size);
void *__libc_malloc(size_t n);

static int fail_at; /* the allocation from now that fails (1: the next); 0: none */

/* Every malloc and calloc of this process, librdkafka's too, comes here first. */
void *calloc(size_t n, size_t size)
{
    if (fail_at > 0 && --fail_at == 0)
        return NULL;
    return __libc_calloc(n, size);
}

void *malloc(size_t n)
{
    if (fail_at > 0 && --fail_at == 0)
        return NULL;
    return __libc_malloc(n);
}

static void kafka_new(void)
{
    /* nothing listens there: the failures come before any connection */
    struct ao_kafka_site site = {"127.0.0.1:9", NULL, NULL, NULL, NULL};
    const char *topics[] = {"kernels", NULL};
    char err[256];

    ao_io_kafka_new("test", &site, "test", topics, err, sizeof err);
}

static void json_object(void)
{
    cJSON_Delete(cJSON_CreateObject());
}

static void dup_string(void)
{
    free(ao_strdup("a string"));
}

/* Run what with its k-th allocation failing, in a child: its wait status
 * and the start of its stderr. */
static int failing(void (*what)(void), int k, char *said, size_t len)
{
    int fds[2], st = 0;
    ssize_t n;
    pid_t pid;

    said[0] = '\0';
    if (pipe(fds) < 0 || (pid = fork()) < 0)
        return -1;
    if (pid == 0) {
        dup2(fds[1], 2);
        close(fds[0]);
        fail_at = k;
        what();
        fail_at = 0;
        _exit(0);
    }
    close(fds[1]);
    n = read(fds[0], said, len - 1);
    said[n > 0 ? n : 0] = '\0';
    close(fds[0]);
    waitpid(pid, &st, 0);
    return st;
}
#endif

int main(void)
{
#if !ALLOC_SWAP
    printf("ok 1 # skip a sanitizer's allocator cannot be replaced here\n1..1\n");
    return 0;
#else
    static const struct {
        const char *name;
        void (*what)(void);
        int k;
    } cases[] = {
        {"ao_io_kafka_new: the transport's allocation", kafka_new, 1},
        {"ao_io_kafka_new: its state's", kafka_new, 2},
        {"cJSON_CreateObject", json_object, 1},
        {"ao_strdup", dup_string, 1},
    };
    char said[256];

    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int st = failing(cases[i].what, cases[i].k, said, sizeof said);
        CHECK(st >= 0 && WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT && strstr(said, "out of memory"),
              "%s fails: SIGABRT with one line (status %#x, said '%.80s')", cases[i].name, (unsigned)st,
              said);
    }
    {
        int st = failing(json_object, 0, said, sizeof said);
        CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0 && said[0] == '\0',
              "with nothing failing, the same child ends well (status %#x)", (unsigned)st);
    }
    return CHECK_DONE();
#endif
}
