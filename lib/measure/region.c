/* region.c - the shared regions of jobs (a memfd each, runner_proto.h),
 * kept between jobs (issue 66).  A page of a fresh memfd is cleared when
 * first touched, and on a VM whose host takes freed memory back that clear
 * ran at 0.4 GB/s where it runs at 2.5 GB/s on pages just freed: a second
 * and more for the two 470 MB regions of silu's head-to-head after another
 * task's profile.  A region whose runner is gone for good (ao_job_end) is
 * kept mapped here, and given to the next job that fits it; every byte of
 * it is zeroed again before that job's runner can run, so nothing of one
 * kernel's tensors (or of the secret inputs it was given) reaches another
 * kernel's process.  The profiler touches every page itself, so the pages
 * are charged to its own memory cgroup, never to a runner's slot. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "measure/region.h"

#define KEPT_MAX 4 /* a head-to-head's two sides, the reference's, one spare */

static struct ao_region kept[KEPT_MAX];
static unsigned long long kept_when[KEPT_MAX]; /* 0: the slot is free */
static unsigned long long clock_ticks;

/* What may be kept in all: an eighth of the machine's memory. */
static size_t kept_cap(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);

    return pages > 0 && size > 0 ? (size_t)pages * (size_t)size / 8 : 0;
}

static size_t kept_bytes(void)
{
    size_t n = 0;

    for (int i = 0; i < KEPT_MAX; i++)
        if (kept_when[i])
            n += kept[i].size;
    return n;
}

void ao_region_drop(struct ao_region *r)
{
    if (r->map) {
        munmap(r->map, r->size);
        close(r->fd);
    }
    memset(r, 0, sizeof *r);
    r->fd = -1;
}

/* A kept region into r, at least `size` bytes if it can grow there: the
 * smallest that holds it, else the largest (grown).  0, or -1 if none. */
static int reuse(struct ao_region *r, size_t size)
{
    int fit = -1, big = -1, best;

    for (int i = 0; i < KEPT_MAX; i++) {
        if (!kept_when[i])
            continue;
        if (kept[i].size >= size) {
            if (fit < 0 || kept[i].size < kept[fit].size)
                fit = i;
        } else if (big < 0 || kept[i].size > kept[big].size) {
            big = i;
        }
    }
    if ((best = fit >= 0 ? fit : big) < 0)
        return -1;
    *r = kept[best];
    kept_when[best] = 0;
    r->dirty = r->size; /* every byte of it may hold the last job's data */
    r->ready = 0;
    if (r->size < size) { /* the new part is fresh (zero): only faulted in */
        char *m;
        if (ftruncate(r->fd, (off_t)size) < 0 ||
            (m = mremap(r->map, r->size, size, MREMAP_MAYMOVE)) == MAP_FAILED) {
            ao_region_drop(r);
            return -1;
        }
        r->map = m;
        r->size = size;
        madvise(r->map, r->size, MADV_DONTFORK);
    }
    return 0;
}

int ao_region_take(struct ao_region *r, size_t size, char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    r->fd = -1;
    if (reuse(r, size) == 0)
        return 0;
    r->fd = memfd_create("accelopt-tensors", MFD_CLOEXEC);
    if (r->fd < 0 || ftruncate(r->fd, (off_t)size) < 0) {
        snprintf(err, errlen, "cannot create the shared region: %s", strerror(errno));
        if (r->fd >= 0)
            close(r->fd);
        r->fd = -1;
        return -1;
    }
    r->map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
    if (r->map == MAP_FAILED) {
        snprintf(err, errlen, "cannot map %zu bytes: %s", size, strerror(errno));
        r->map = NULL;
        close(r->fd);
        r->fd = -1;
        return -1;
    }
    r->size = size;
    /* not copied into the processes we start (each a fork until it
     * execs): the runner gets the memfd, never our mapping */
    madvise(r->map, r->size, MADV_DONTFORK);
    return 0;
}

int ao_region_prepare(struct ao_region *r, size_t len)
{
    size_t end = len > r->size - r->ready ? r->size : r->ready + len;

    if (!r->map || r->ready >= r->size)
        return 0;
    if (r->ready < r->dirty) { /* an earlier job's bytes: zeroed */
        size_t z = end < r->dirty ? end : r->dirty;
        memset(r->map + r->ready, 0, z - r->ready);
        r->ready = z;
    }
    if (r->ready < end) { /* fresh pages: faulted in here */
#ifdef MADV_POPULATE_WRITE
        if (madvise(r->map + r->ready, end - r->ready, MADV_POPULATE_WRITE) < 0)
#endif
        {
            /* a kernel before 5.14: a write of each page's first byte */
            size_t page = (size_t)sysconf(_SC_PAGESIZE);
            for (size_t k = r->ready - r->ready % page; k < end; k += page)
                ((volatile char *)r->map)[k] = ((volatile char *)r->map)[k];
        }
        r->ready = end;
    }
    return r->ready < r->size;
}

void ao_region_keep(struct ao_region *r)
{
    size_t cap = kept_cap();
    int slot;

    if (!r->map)
        return;
    for (;;) { /* room for it: the least recently kept go first */
        int free_slot = -1, old = -1;
        for (int i = 0; i < KEPT_MAX; i++) {
            if (!kept_when[i]) {
                if (free_slot < 0)
                    free_slot = i;
            } else if (old < 0 || kept_when[i] < kept_when[old]) {
                old = i;
            }
        }
        if (free_slot >= 0 && kept_bytes() + r->size <= cap) {
            slot = free_slot;
            break;
        }
        if (old < 0) { /* larger than all that may be kept */
            ao_region_drop(r);
            return;
        }
        ao_region_drop(&kept[old]);
        kept_when[old] = 0;
    }
    kept[slot] = *r;
    kept_when[slot] = ++clock_ticks;
    memset(r, 0, sizeof *r);
    r->fd = -1;
}

void ao_region_forget_all(void)
{
    for (int i = 0; i < KEPT_MAX; i++)
        if (kept_when[i]) {
            ao_region_drop(&kept[i]);
            kept_when[i] = 0;
        }
}
