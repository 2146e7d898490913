/* stats.c - the statistics of a measurement (stats.h) */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "measure/stats.h"
#include "core/alloc.h"
#include "core/util.h"

static int cmp_ll(const void *a, const void *b)
{
    long long x = *(const long long *)a, y = *(const long long *)b;
    return x < y ? -1 : x > y;
}

void ao_stats_of(const long long *v, int n, struct ao_stats *s)
{
    long long *c = n > 0 ? ao_malloc(sizeof *c * (size_t)n) : NULL;

    memset(s, 0, sizeof *s);
    if (!c)
        return;
    memcpy(c, v, sizeof *c * (size_t)n);
    qsort(c, (size_t)n, sizeof *c, cmp_ll);
    s->n = n;
    s->min = (double)c[0];
    s->median = n % 2 ? (double)c[n / 2] : 0.5 * ((double)c[n / 2 - 1] + (double)c[n / 2]);
    if (s->median > 0)
        s->spread = n >= 4 ? ((double)c[(3 * n) / 4] - (double)c[n / 4]) / s->median
                           : ((double)c[n - 1] - (double)c[0]) / s->median;
    free(c);
}

long long ao_low_tail(const long long *v, int n)
{
    long long *c, gap;
    int k = n / 20 + 1;

    if (n < 2 || !(c = ao_malloc(sizeof *c * (size_t)n)))
        return 0;
    memcpy(c, v, sizeof *c * (size_t)n);
    qsort(c, (size_t)n, sizeof *c, cmp_ll);
    gap = c[k < n ? k : n - 1] - c[0];
    free(c);
    return gap;
}

int ao_reservoir_slot(int n, int size, unsigned long long r)
{
    if (n < size)
        return n;
    r %= (unsigned long long)n + 1;
    return r < (unsigned long long)size ? (int)r : -1;
}

void ao_median_interval(double *ratio, int n, double floor_frac, double *median, double *low,
                        double *high)
{
    int k = (int)floor((n - 1.96 * sqrt((double)n)) / 2);

    if (n <= 0) {
        *median = *low = *high = NAN;
        return;
    }
    qsort(ratio, (size_t)n, sizeof *ratio, ao_cmp_double);
    k = k < 0 ? 0 : k;
    *median = n % 2 ? ratio[n / 2] : 0.5 * (ratio[n / 2 - 1] + ratio[n / 2]);
    *low = fmin(ratio[k], *median * (1 - floor_frac));
    *high = fmax(ratio[n - 1 - k], *median * (1 + floor_frac));
}

/* Student's t at 97.5% for df degrees of freedom (the normal's 1.96 past 30). */
static double t975(int df)
{
    static const double t[] = {0, 12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
                               2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
                               2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042};
    return df < 1 ? INFINITY : df <= 30 ? t[df] : 1.96;
}

void ao_t_interval(double *ratio, int n, double floor_frac, double *median, double *low, double *high)
{
    double sum = 0, ss = 0, mean, half;

    if (n < 2) { /* no interval from fewer rounds */
        *median = n == 1 ? ratio[0] : NAN, *low = 0, *high = INFINITY;
        return;
    }
    for (int i = 0; i < n; i++) {
        if (!(ratio[i] > 0)) { /* a round that is no time: no interval */
            *median = NAN, *low = 0, *high = INFINITY;
            return;
        }
        sum += log(ratio[i]);
    }
    mean = sum / n;
    for (int i = 0; i < n; i++)
        ss += (log(ratio[i]) - mean) * (log(ratio[i]) - mean);
    half = t975(n - 1) * sqrt(ss / (n - 1) / n);
    qsort(ratio, (size_t)n, sizeof *ratio, ao_cmp_double);
    *median = n % 2 ? ratio[n / 2] : 0.5 * (ratio[n / 2 - 1] + ratio[n / 2]);
    *low = fmin(exp(mean - half), *median * (1 - floor_frac));
    *high = fmax(exp(mean + half), *median * (1 + floor_frac));
}
