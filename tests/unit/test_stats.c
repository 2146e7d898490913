/* test_stats.c - the statistics a measurement is reported with (stats.h) */
#include <math.h>
#include <stdlib.h>

#include "check.h"
#include "measure/stats.h"

int main(void)
{
    struct ao_stats s;
    const long long odd[] = {50, 10, 40, 20, 30}, even[] = {4, 1, 3, 2}, three[] = {90, 100, 110};
    long long wakes[100], copy[5] = {50, 10, 40, 20, 30};
    double r[41], med, lo, hi;
    int kept[8] = {0}, trials = 20000;

    ao_stats_of(odd, 5, &s);
    CHECK(s.n == 5 && s.median == 30 && s.min == 10, "median and minimum of an odd count (%g, %g)",
          s.median, s.min);
    CHECK(fabs(s.spread - (40.0 - 20.0) / 30.0) < 1e-12, "spread: the interquartile range over the median (%g)",
          s.spread);
    ao_stats_of(copy, 5, &s);
    CHECK(copy[0] == 50 && copy[1] == 10, "the samples are left as they were");
    ao_stats_of(even, 4, &s);
    CHECK(s.median == 2.5 && fabs(s.spread - (4.0 - 2.0) / 2.5) < 1e-12,
          "an even count: the mean of the middle two (%g), quartiles at n/4 and 3n/4 (%g)", s.median, s.spread);
    ao_stats_of(three, 3, &s);
    CHECK(s.median == 100 && fabs(s.spread - 0.2) < 1e-12, "under 4 samples: the range over the median (%g)",
          s.spread);
    ao_stats_of(odd, 0, &s);
    CHECK(s.n == 0 && s.median == 0 && s.spread == 0, "no samples: all zero");

    for (int i = 0; i < 100; i++)
        wakes[i] = 1000 + 10 * i; /* 1000, 1010, ... */
    CHECK(ao_low_tail(wakes, 100) == 60, "the low tail: lowest to the 5th percentile's neighbour (%lld)",
          ao_low_tail(wakes, 100));
    CHECK(ao_low_tail(wakes, 1) == 0 && ao_low_tail(wakes, 2) == 10, "one sample has no tail; two, their gap");

    /* every item of a stream of 20 is kept with chance 4/20, early or late */
    srand(7);
    for (int t = 0; t < trials; t++) {
        int slot[4] = {-1, -1, -1, -1};
        for (int n = 0; n < 20; n++) {
            int v = ao_reservoir_slot(n, 4, ((unsigned long long)rand() << 31) ^ (unsigned long long)rand());
            if (v >= 0)
                slot[v] = n;
        }
        for (int k = 0; k < 4; k++)
            kept[slot[k] < 4 ? 0 : slot[k] < 8 ? 1 : slot[k] < 12 ? 2 : slot[k] < 16 ? 3 : 4]++;
    }
    {
        int ok = 1;
        for (int b = 0; b < 5; b++) /* each fifth of the stream: 4/20 * 4 items * trials / 4... = 0.8 per trial */
            ok &= fabs(kept[b] / (double)trials - 0.8) < 0.05;
        CHECK(ok, "the reservoir keeps each fifth of the stream alike (%.3f %.3f %.3f %.3f %.3f per trial, 0.8 each)",
              kept[0] / (double)trials, kept[1] / (double)trials, kept[2] / (double)trials,
              kept[3] / (double)trials, kept[4] / (double)trials);
    }
    CHECK(ao_reservoir_slot(2, 4, 99) == 2 && ao_reservoir_slot(9, 4, 14) == -1 &&
              ao_reservoir_slot(9, 4, 13) == 3,
          "the first items fill the slots; later ones replace slot r mod (n+1) when it is one");

    for (int i = 0; i < 41; i++)
        r[i] = 41 - i; /* 1..41, reversed */
    ao_median_interval(r, 41, 0.0, &med, &lo, &hi);
    CHECK(med == 21 && lo == 15 && hi == 27,
          "41 ratios: the median and order statistics k = 14 and n-1-k = 26 (%g in %g-%g)", med, lo, hi);
    CHECK(r[0] == 1 && r[40] == 41, "sorted in place");
    for (int i = 0; i < 41; i++)
        r[i] = 2.0;
    ao_median_interval(r, 41, 0.04, &med, &lo, &hi);
    CHECK(med == 2 && fabs(lo - 1.92) < 1e-12 && fabs(hi - 2.08) < 1e-12,
          "identical ratios: the interval is the systematic floor, median x (1 -/+ 0.04) (%g-%g)", lo, hi);
    ao_median_interval(r, 3, 0.0, &med, &lo, &hi);
    CHECK(med == 2 && lo == 2 && hi == 2, "few ratios: k floors at 0, the extremes");

    /* the Student-t interval of a few rounds (issue 66): the log-ratios'
     * mean -/+ t(n-1) standard errors, widened to the floor */
    r[0] = 1.30, r[1] = 1.20, r[2] = 1.25;
    ao_t_interval(r, 3, 0.0, &med, &lo, &hi);
    {
        double a = log(1.30), b = log(1.20), c = log(1.25), m = (a + b + c) / 3;
        double sd = sqrt(((a - m) * (a - m) + (b - m) * (b - m) + (c - m) * (c - m)) / 2), h = 4.303 * sd / sqrt(3.0);
        CHECK(med == 1.25 && fabs(lo - exp(m - h)) < 1e-9 && fabs(hi - exp(m + h)) < 1e-9 && lo > 1,
              "three ratios 1.20-1.30: the median, t(2) = 4.303 standard errors each way (%g-%g)", lo, hi);
    }
    r[0] = 1.30, r[1] = 0.90, r[2] = 1.25;
    ao_t_interval(r, 3, 0.04, &med, &lo, &hi);
    CHECK(lo < 1 && hi > 1.3, "one round the other way: the interval holds 1 (%g-%g)", lo, hi);
    for (int i = 0; i < 4; i++)
        r[i] = 0.98;
    ao_t_interval(r, 4, 0.04, &med, &lo, &hi);
    CHECK(fabs(lo - 0.98 * 0.96) < 1e-12 && fabs(hi - 0.98 * 1.04) < 1e-12 && hi > 1,
          "identical ratios 2%% apart from 1: the floor keeps it a tie (%g-%g)", lo, hi);
    r[0] = 1.1, r[1] = 0;
    ao_t_interval(r, 2, 0.04, &med, &lo, &hi);
    CHECK(lo == 0 && isinf(hi), "a ratio that is no time: no interval");
    return CHECK_DONE();
}
