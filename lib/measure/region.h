/* region.h - a job's shared region (ao_region_*): a memfd mapped here,
 * taken for a job and kept after it for the next (region.c).  Nothing of
 * an earlier job survives ao_region_prepare over the whole region. */
#ifndef AO_REGION_H
#define AO_REGION_H

#include <stddef.h>

struct ao_region {
    int fd;       /* the memfd (-1: none) */
    char *map;    /* all of it, mapped here (NULL: none) */
    size_t size;  /* the memfd's size: at least what was asked */
    size_t dirty; /* bytes from the start that may hold an earlier job's data */
    size_t ready; /* bytes from the start made ready: zeroed, or faulted in */
};

/* A region of at least `size` bytes: a kept one (to be made ready: it may
 * hold another job's data until then) or a new one.  0, or -1 + err. */
int ao_region_take(struct ao_region *r, size_t size, char *err, size_t errlen);
/* Make the next len bytes ready (SIZE_MAX: all of it): an earlier job's
 * bytes zeroed, fresh pages faulted in from this process.  Only while no
 * runner can touch the region.  1 while some are left, else 0. */
int ao_region_prepare(struct ao_region *r, size_t len);
/* Keep r for a later job (only once no process but ours can reach it),
 * within an eighth of the machine's memory, the least recently kept
 * dropped first; r is emptied. */
void ao_region_keep(struct ao_region *r);
/* Unmap and close r; r is emptied. */
void ao_region_drop(struct ao_region *r);
/* Drop every kept region. */
void ao_region_forget_all(void);

#endif
