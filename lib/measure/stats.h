/* stats.h - the statistics of a measurement: a latency's median, minimum
 * and spread, the low tail of the wake-up samples, the reservoir that picks
 * which timed calls are checked, and the distribution-free interval of a
 * head-to-head's median ratio.  Pure functions: unit-tested on their own
 * (tests/unit/test_stats.c). */
#ifndef AO_STATS_H
#define AO_STATS_H

struct ao_stats {
    double median, min;
    double spread; /* (Q3 - Q1) / median; (max - min) / median under 4 samples */
    int n;
};

/* The statistics of n samples (v is not changed); all zero when n is 0 or
 * memory is short. */
void ao_stats_of(const long long *v, int n, struct ao_stats *s);

/* How far the lowest sample could be off: the gap from the lowest to the
 * one at the 5th percentile (0 under 2 samples).  v is not changed. */
long long ao_low_tail(const long long *v, int n);

/* Reservoir sampling of `size` items out of a stream: item n (0-based) is
 * kept in slot ao_reservoir_slot(n, size, r), or not kept (-1), where r is
 * a fresh random number; every item ends up kept with the same chance
 * size/N, whenever the stream stops at N. */
int ao_reservoir_slot(int n, int size, unsigned long long r);

/* The median of n paired ratios and its distribution-free 95% interval
 * (order statistics k and n-1-k of the sorted ratios, k = (n - 1.96
 * sqrt(n)) / 2), widened to at least median * (1 -/+ floor_frac): the
 * systematic difference a measurement cannot see.  Sorts ratio in place. */
void ao_median_interval(double *ratio, int n, double floor_frac, double *median, double *low,
                        double *high);

/* The same median with a Student-t 95% interval on the ratios' logarithms
 * (their mean -/+ t(n-1) standard errors, back to ratios), widened as
 * above: where a few rounds of a slow kernel already show a plain answer,
 * fewer than the distribution-free interval needs (6 for a 95% one).
 * Sorts ratio in place; n >= 2. */
void ao_t_interval(double *ratio, int n, double floor_frac, double *median, double *low, double *high);

#endif
