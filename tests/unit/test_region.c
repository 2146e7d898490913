/* test_region.c - jobs' shared regions kept between jobs (region.h): a
 * kept region comes back zeroed in every byte the memfd holds, best fit
 * first, grown where none fits, within the cap on what is kept */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "measure/region.h"

#define MB (1u << 20)

/* every byte of the memfd (read through the fd, past the mapping too) zero? */
static int all_zero(const struct ao_region *r)
{
    static char buf[1 << 16];
    off_t at = 0;
    ssize_t n;

    while ((n = pread(r->fd, buf, sizeof buf, at)) > 0) {
        for (ssize_t i = 0; i < n; i++)
            if (buf[i])
                return 0;
        at += n;
    }
    return n == 0 && (size_t)at == r->size;
}

int main(void)
{
    struct ao_region a, b, c;
    char err[256];
    char *first;

    CHECK(ao_region_take(&a, 8 * MB, err, sizeof err) == 0 && a.map && a.size == 8 * MB && a.dirty == 0,
          "a new region: mapped, its size, nothing of an earlier job in it");
    while (ao_region_prepare(&a, MB))
        ;
    CHECK(a.ready == a.size && all_zero(&a), "made ready a MiB at a time: all of it, all zero");
    memset(a.map, 0xab, a.size); /* a job's tensors */
    first = a.map;
    ao_region_keep(&a);
    CHECK(a.map == NULL && a.fd == -1, "kept: the job's handle on it is emptied");

    CHECK(ao_region_take(&b, 4 * MB, err, sizeof err) == 0 && b.map == first && b.size == 8 * MB &&
          b.dirty == 8 * MB && b.ready == 0,
          "a smaller job gets the kept region whole, every byte of it marked as the last job's");
    CHECK(ao_region_prepare(&b, 2 * MB) == 1 && b.ready == 2 * MB && b.map[2 * MB] == (char)0xab,
          "made ready in part: the rest still the last job's until it is made ready");
    CHECK(ao_region_prepare(&b, SIZE_MAX) == 0 && all_zero(&b),
          "made ready in full: zero through the end of the memfd, past what the job asked for");

    CHECK(ao_region_take(&c, 4 * MB, err, sizeof err) == 0 && c.map != first && c.dirty == 0,
          "none kept: a new one");
    memset(b.map, 0xcd, b.size);
    memset(c.map, 0xef, c.size);
    ao_region_keep(&b);
    ao_region_keep(&c);
    CHECK(ao_region_take(&a, 3 * MB, err, sizeof err) == 0 && a.size == 4 * MB,
          "the smallest kept that holds the job (4 MiB of 4 and 8)");
    ao_region_prepare(&a, SIZE_MAX);
    CHECK(all_zero(&a), "zeroed");
    ao_region_keep(&a);
    CHECK(ao_region_take(&a, 12 * MB, err, sizeof err) == 0 && a.size == 12 * MB && a.dirty == 8 * MB,
          "none holds it: the largest grown, only its old bytes marked");
    CHECK(ao_region_prepare(&a, SIZE_MAX) == 0 && all_zero(&a), "zero through the grown part");
    ao_region_drop(&a);
    CHECK(a.map == NULL && a.fd == -1, "dropped");

    ao_region_forget_all();
    CHECK(ao_region_take(&a, 4 * MB, err, sizeof err) == 0 && a.dirty == 0, "all forgotten: a new one");
    ao_region_drop(&a);
    {
        /* five kept where four may be: the least recently kept (1 MiB) goes */
        struct ao_region r[5];
        int ok = 1;
        for (int i = 0; i < 5; i++) {
            ok &= ao_region_take(&r[i], (size_t)(i + 1) * MB, err, sizeof err) == 0;
            memset(r[i].map, 0x11, r[i].size);
        }
        for (int i = 0; i < 5; i++)
            ao_region_keep(&r[i]);
        CHECK(ok && ao_region_take(&a, MB, err, sizeof err) == 0 && a.size == 2 * MB && a.dirty == 2 * MB,
              "four kept at most: the oldest dropped, a 1 MiB job gets the 2 MiB one");
        ao_region_prepare(&a, SIZE_MAX);
        CHECK(all_zero(&a), "zeroed");
        ao_region_drop(&a);
        ao_region_forget_all();
    }
    return CHECK_DONE();
}
