/* tensors.c - the profiler's own large tensors (samples of timed calls,
 * references, outputs read back), kept when freed for the next one of
 * the same size: a fresh 117 MB buffer costs page faults that zero every
 * page, and a profile of silu at the cpu size made dozens of them, a
 * quarter of the profiler's own time (issue 53).  Blocks of a MiB or
 * more come from mmap and are kept up to KEEP_BYTES, the least recently
 * freed unmapped first; smaller ones are malloc's.  None is copied into
 * a child process (MADV_DONTFORK): no child of ours reads them. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "profiler/profiler_int.h"

#define BIG_BYTES (1u << 20)
#define KEEP_BYTES (2ull << 30)
#define KEEP_BLOCKS 64
#define HEAD 64 /* the block's size before the data, which stays 64-byte aligned */

struct kept {
    void *base;
    size_t bytes; /* the whole mapping */
    unsigned long long freed; /* when, in free()s: the oldest goes first */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct kept kept[KEEP_BLOCKS];
static int nkept;
static size_t kept_bytes;
static unsigned long long frees;

static float *data_of(void *base, size_t bytes)
{
    memcpy(base, &bytes, sizeof bytes);
    return (float *)((char *)base + HEAD);
}

float *prof_tensor_alloc(size_t n)
{
    size_t bytes = n * sizeof(float) + HEAD;
    void *base = NULL;

    if (n > (SIZE_MAX - HEAD) / sizeof(float))
        return NULL;
    if (bytes < BIG_BYTES)
        return (base = malloc(bytes)) ? data_of(base, bytes) : NULL;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < nkept; i++)
        if (kept[i].bytes == bytes) {
            base = kept[i].base;
            kept_bytes -= bytes;
            kept[i] = kept[--nkept];
            break;
        }
    pthread_mutex_unlock(&lock);
    if (!base) {
        base = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (base == MAP_FAILED)
            return NULL;
        /* not copied into the processes we start (a sandbox is a fork
         * until it execs): a run's pools hold gigabytes, and copying their
         * page tables cost every fork milliseconds */
        madvise(base, bytes, MADV_DONTFORK);
    }
    return data_of(base, bytes);
}

void prof_tensor_free(float *p)
{
    void *base;
    size_t bytes;

    if (!p)
        return;
    base = (char *)p - HEAD;
    memcpy(&bytes, base, sizeof bytes);
    if (bytes < BIG_BYTES) {
        free(base);
        return;
    }
    pthread_mutex_lock(&lock);
    /* room first: the oldest kept go while this one would pass the caps */
    while (nkept > 0 && (nkept == KEEP_BLOCKS || kept_bytes + bytes > KEEP_BYTES)) {
        int old = 0;
        for (int i = 1; i < nkept; i++)
            if (kept[i].freed < kept[old].freed)
                old = i;
        munmap(kept[old].base, kept[old].bytes);
        kept_bytes -= kept[old].bytes;
        kept[old] = kept[--nkept];
    }
    if (bytes <= KEEP_BYTES) {
        kept[nkept++] = (struct kept){base, bytes, ++frees};
        kept_bytes += bytes;
        base = NULL;
    }
    pthread_mutex_unlock(&lock);
    if (base)
        munmap(base, bytes);
}

void prof_tensors_release(void)
{
    pthread_mutex_lock(&lock);
    while (nkept > 0) {
        nkept--;
        munmap(kept[nkept].base, kept[nkept].bytes);
    }
    kept_bytes = 0;
    pthread_mutex_unlock(&lock);
}
