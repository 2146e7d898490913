/* probe.c - the machine probe (probe.h) */
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "measure/probe.h"

/* One round: a dependent chain of multiply-adds in one register.  Nothing
 * can run it in parallel or skip it (the factors come through volatile
 * loads and the result goes out through one), so its time is the core's
 * clock and the share of the core this process got, nothing else: no
 * memory, no cache, no vector unit that another tenant could be using. */
#define PROBE_CHAIN 65536

static volatile double probe_a = 0.9999999, probe_b = 1e-7, probe_sink;

static long long probe_round(void)
{
    double x = 1, a = probe_a, b = probe_b;
    long long t0 = ao_now_ns();

    for (int i = 0; i < PROBE_CHAIN; i++)
        x = x * a + b;
    probe_sink = x;
    return ao_now_ns() - t0;
}

static int cmp_ll(const void *a, const void *b)
{
    long long x = *(const long long *)a, y = *(const long long *)b;
    return x < y ? -1 : x > y;
}

int ao_probe_run(struct ao_probe *p)
{
    long long v[AO_PROBE_ROUNDS], sum = 0;

    memset(p, 0, sizeof *p);
    probe_round(); /* warm: the first round pays for the page and the clock */
    for (int i = 0; i < AO_PROBE_ROUNDS; i++)
        sum += v[i] = probe_round();
    qsort(v, AO_PROBE_ROUNDS, sizeof v[0], cmp_ll);
    if (v[0] <= 0)
        return -1;
    p->median_ns = (double)v[AO_PROBE_ROUNDS / 2];
    p->mean_ns = (double)sum / AO_PROBE_ROUNDS;
    p->spread = (double)(v[AO_PROBE_ROUNDS - 1] - v[0]) / p->median_ns;
    return 0;
}
