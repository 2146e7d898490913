/* test_inputs.c - the timed calls' fresh inputs (prof_fill_timed) and the
 * check sets' (prof_fill): each distribution's range, mean and spread (and
 * the check sets' normal tails), a new draw every call, and exact lengths
 * (nothing written past the end of a tensor) */
#include <math.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "profiler/profiler_int.h"

static void moments(const float *p, size_t n, double *mean, double *var, float *lo, float *hi)
{
    double s = 0, s2 = 0;
    *lo = *hi = p[0];
    for (size_t i = 0; i < n; i++) {
        s += p[i];
        s2 += (double)p[i] * p[i];
        *lo = p[i] < *lo ? p[i] : *lo;
        *hi = p[i] > *hi ? p[i] : *hi;
    }
    *mean = s / (double)n;
    *var = s2 / (double)n - *mean * *mean;
}

int main(void)
{
    enum { N = 1 << 20 };
    struct ao_rng rng = {{0x9e3779b97f4a7c15ull, 2, 3, 4}};
    const struct ao_dist uni = {AO_DIST_UNIFORM, -2, 6}, nor = {AO_DIST_NORMAL, 1, 3},
                         absn = {AO_DIST_ABS_NORMAL, 0, 1};
    float *p = malloc(sizeof(float) * (N + 16)), *q = malloc(sizeof(float) * N), lo, hi;
    double mean, var;
    size_t same = 0;
    int tail_ok = 1;

    if (!p || !q)
        return 1;
    prof_fill_timed(&rng, &uni, p, N);
    moments(p, N, &mean, &var, &lo, &hi);
    CHECK(lo > -2 && hi < 6 && fabs(mean - 2) < 0.02 && fabs(var - 64.0 / 12) < 0.05,
          "uniform(-2, 6): inside the range, mean %.4f (2), variance %.4f (5.333)", mean, var);
    prof_fill_timed(&rng, &nor, p, N);
    moments(p, N, &mean, &var, &lo, &hi);
    CHECK(fabs(mean - 1) < 0.02 && fabs(var - 9) < 0.1 && lo < -5 && hi > 7,
          "normal(1, 3): mean %.4f, variance %.4f (9), both tails reached (%g, %g)", mean, var, lo, hi);
    prof_fill_timed(&rng, &absn, p, N);
    moments(p, N, &mean, &var, &lo, &hi);
    /* the sum of two uniforms (a triangle) has lighter tails than a
     * normal: E|x| is sqrt(6)/3 = 0.816 where a true normal's is 0.798 */
    CHECK(lo >= 0 && fabs(mean - 0.816) < 0.01, "|normal(0, 1)|: never negative, mean %.4f (0.816)",
          mean);

    prof_fill_timed(&rng, &nor, p, N);
    prof_fill_timed(&rng, &nor, q, N);
    for (size_t i = 0; i < N; i++)
        same += p[i] == q[i];
    CHECK(same < N / 1000, "two calls draw different values (%zu of %d equal)", same, N);

    /* lengths that are no multiple of the sixteen streams: the sentinel after
     * the end stays, every value before it is written, by the timed draws
     * and the check sets', of each law */
    for (int f = 0; f < 2; f++)
        for (int d = 0; d < 3; d++)
            for (size_t n = 1; n <= 33; n++) {
                const struct ao_dist *x = d == 0 ? &uni : d == 1 ? &nor : &absn;
                for (size_t i = 0; i < n + 16; i++)
                    p[i] = NAN;
                (f ? prof_fill : prof_fill_timed)(&rng, x, p, n);
                for (size_t i = 0; i < n + 16; i++)
                    tail_ok &= i < n ? !isnan(p[i]) : isnan(p[i]);
            }
    CHECK(tail_ok, "lengths 1 to 33, both draws, every law: every value written, nothing past the end");

    /* the check sets' draws (prof_fill): a normal's law exactly, tails
     * included, where the timed calls' sums of two uniforms stop at 2.45 */
    {
        double s4 = 0;
        size_t over4 = 0;
        prof_fill(&rng, &nor, p, N);
        moments(p, N, &mean, &var, &lo, &hi);
        for (size_t i = 0; i < N; i++) {
            double z = (p[i] - 1.0) / 3;
            s4 += z * z * z * z;
            over4 += fabs(z) > 4;
        }
        /* P(|z| > 4) = 6.33e-5: 66 of 2^20 expected, 33-110 within 5 sigma */
        CHECK(fabs(mean - 1) < 0.02 && fabs(var - 9) < 0.1 && fabs(s4 / N - 3) < 0.05 && over4 >= 33 &&
                  over4 <= 110 && lo < 1 - 3 * 4.2 && hi > 1 + 3 * 4.2,
              "check sets, normal(1, 3): mean %.4f, variance %.4f, kurtosis %.4f (3), %zu beyond 4 "
              "sigma (66), reaching %g and %g", mean, var, s4 / N, over4, lo, hi);
        prof_fill(&rng, &absn, p, N);
        moments(p, N, &mean, &var, &lo, &hi);
        CHECK(lo >= 0 && fabs(mean - 0.7979) < 0.005, "check sets, |normal(0, 1)|: mean %.4f (0.7979)", mean);
    }
    free(p);
    free(q);

    /* a draw of 16 MB or more goes by streaming stores (issue 66): the
     * values a small draw from the same state begins with, wherever the
     * tensor starts (a misaligned one too), every value written and
     * nothing past the end */
    {
        const size_t S = (5u << 20) + 7, head = 3 * 4096 + 5;
        /* aligned: each vector streamed as it is made; misaligned: through a buffer */
        float *big = aligned_alloc(64, sizeof(float) * (S + 1 + 16 + 15) / 64 * 64 + 64),
              *small = malloc(sizeof(float) * head);
        size_t unwritten = 0, beyond = 0;
        if (!big || !small)
            return 1;
        for (int shift = 0; shift < 2; shift++) {
            float *at = big + shift;
            struct ao_rng one = rng, two = rng;
            for (size_t i = 0; i < S + 16; i++)
                at[i] = NAN;
            prof_fill_timed(&one, &nor, at, S);
            prof_fill_timed(&two, &nor, small, head);
            for (size_t i = 0; i < S + 16; i++)
                i < S ? (unwritten += isnan(at[i]) != 0) : (beyond += !isnan(at[i]));
            CHECK(memcmp(at, small, (head - 5) * sizeof *at) == 0 && unwritten == 0 && beyond == 0,
                  "a streamed draw (%zu values, %s) begins as a small one from the same state does, "
                  "every value written (%zu not), none past the end (%zu)", S,
                  shift ? "misaligned" : "aligned", unwritten, beyond);
        }
        {
            /* the two ways a streamed draw goes agree over all of it */
            float *other = malloc(sizeof(float) * (S + 1));
            struct ao_rng one = rng, two = rng;
            if (!other)
                return 1;
            prof_fill_timed(&one, &nor, big, S);
            prof_fill_timed(&two, &nor, other + 1, S);
            CHECK(((uintptr_t)big & 63) == 0 && ((uintptr_t)(other + 1) & 63) != 0 &&
                      memcmp(big, other + 1, S * sizeof *big) == 0,
                  "a streamed draw stored vector by vector (aligned) and through a buffer "
                  "(misaligned) writes the same %zu values", S);
            free(other);
        }
        free(big);
        free(small);
    }

    /* over threads (a device target's large tensors): the same laws, every
     * slice written, nothing past the end, a new draw every call */
    {
        const size_t W = (4u << 20) + 5;
        float *a = malloc(sizeof(float) * (W + 16)), *b = malloc(sizeof(float) * W);
        size_t unwritten = 0, beyond = 0;
        if (!a || !b)
            return 1;
        for (size_t i = 0; i < W + 16; i++)
            a[i] = NAN;
        prof_fill_timed_wide(&rng, &nor, a, W, 4);
        for (size_t i = 0; i < W + 16; i++)
            i < W ? (unwritten += isnan(a[i]) != 0) : (beyond += !isnan(a[i]));
        moments(a, W, &mean, &var, &lo, &hi);
        CHECK(unwritten == 0 && beyond == 0 && fabs(mean - 1) < 0.01 && fabs(var - 9) < 0.05,
              "4 threads, %zu values: all written (%zu not), none past the end (%zu), mean %.4f, "
              "variance %.4f (9)", W, unwritten, beyond, mean, var);
        prof_fill_timed_wide(&rng, &nor, b, W, 4);
        same = 0;
        for (size_t i = 0; i < W; i++)
            same += a[i] == b[i];
        /* slices that repeat one another would show as equal runs */
        for (size_t i = 0; i + 1 < W / 4; i += W / 64)
            same += a[i] == a[i + W / 4] && a[i + 1] == a[i + 1 + W / 4];
        CHECK(same < W / 1000, "over threads: two calls and two slices draw different values "
              "(%zu equal)", same);
        {
            /* a kept timed call's inputs are drawn again from the state
             * they were drawn from, for the reference: bit for bit */
            struct ao_rng first = {{7, 8, 9, 10}}, kept = first, again = kept;
            prof_fill_timed_wide(&first, &nor, a, W, 4);
            prof_fill_timed_wide(&again, &nor, b, W, 4);
            CHECK(memcmp(a, b, W * sizeof *a) == 0 && memcmp(&again, &first, sizeof first) == 0,
                  "the same generator state draws the same %zu values again, and leaves the "
                  "generator where the first draw did", W);
        }
        /* and poisoned: every value the word, nothing past the end */
        a[W] = 1.0f;
        prof_poison(a, W, 0x7fc00000u, 4);
        unwritten = 0;
        for (size_t i = 0; i < W; i++) {
            uint32_t w;
            memcpy(&w, &a[i], sizeof w);
            unwritten += w != 0x7fc00000u;
        }
        CHECK(unwritten == 0 && a[W] == 1.0f, "poisoned over 4 threads: %zu of %zu values not the "
              "word, the value after the end %s", unwritten, W, a[W] == 1.0f ? "kept" : "overwritten");
        /* the check sets' draws over threads: the same laws */
        prof_fill_wide(&rng, &uni, a, W, 4);
        moments(a, W, &mean, &var, &lo, &hi);
        CHECK(lo > -2 && hi < 6 && fabs(mean - 2) < 0.01 && fabs(var - 64.0 / 12) < 0.03,
              "check sets over 4 threads: uniform(-2, 6), mean %.4f, variance %.4f", mean, var);

        /* the relative L2 error over threads: the one-thread sum, and a
         * value not finite in the last slice still seen */
        prof_fill_timed_wide(&rng, &nor, b, W, 4);
        for (size_t i = 0; i < W; i++)
            a[i] = b[i] * 1.001f;
        {
            double e1 = prof_rel_l2(a, b, W, 1), e4 = prof_rel_l2(a, b, W, 4);
            CHECK(fabs(e1 - 1e-3) < 1e-5 && fabs(e4 - e1) < 1e-9 * e1,
                  "rel. L2 over 4 threads %.9g, over one %.9g (1e-3)", e4, e1);
            /* a difference only in the last value (the four-wide sums'
             * tail): the plain sum's error exactly */
            double den = 0;
            memcpy(a, b, W * sizeof *a);
            a[W - 1] = b[W - 1] + 1.0f;
            for (size_t i = 0; i < W; i++)
                den += (double)b[i] * b[i];
            double want = fabs((double)a[W - 1] - b[W - 1]) / sqrt(den);
            e1 = prof_rel_l2(a, b, W, 1);
            e4 = prof_rel_l2(a, b, W, 4);
            CHECK(fabs(e1 - want) < 1e-9 * want && fabs(e4 - want) < 1e-9 * want,
                  "a difference in the last value only: %.9g over one thread, %.9g over 4 (%.9g)",
                  e1, e4, want);
            a[W - 1] = NAN;
            CHECK(isinf(prof_rel_l2(a, b, W, 4)) && isinf(prof_rel_l2(a, b, W, 1)),
                  "a NaN as the last value makes it infinite, over threads and not");
        }
        free(a);
        free(b);
    }
    {
        /* the inputs (which a kernel sees) and the decisions it must not
         * predict (which calls are checked, orders, placements, the check
         * shape) come from two streams seeded apart (issue 46): drawing
         * inputs does not move the decisions' stream */
        struct ao_profiler_opts o = AO_PROFILER_DEFAULTS;
        char err[256];
        struct ao_profiler *pr;
        o.work_root = getenv("ACCELOPT_TEST_TMP");
        if ((pr = ao_profiler_new(&o, err, sizeof err))) {
            struct ao_rng before = pr->choice;
            float x[64];
            int apart = memcmp(pr->rng.s, pr->choice.s, sizeof pr->rng.s) != 0;
            prof_fill_timed(&pr->rng, &nor, x, 64);
            CHECK(apart && memcmp(&before, &pr->choice, sizeof before) == 0,
                  "the profiler's input stream and its decisions' stream are apart");
            {
                /* a sole unpinned profiler draws a host kernel's large
                 * inputs over its cores; small ones whole from the
                 * runner's core; a pinned one keeps to its core */
                struct ao_profiler_opts pinned = o;
                cpu_set_t s;
                int cores = sched_getaffinity(0, sizeof s, &s) == 0 ? CPU_COUNT(&s) : 1;
                int want = cores > 8 ? 8 : cores;
                pinned.cpu = 0;
                CHECK(pr->draw_parts == want && prof_timed_parts(pr->tg, pr->draw_parts, 8u << 20) == want &&
                          prof_timed_parts(pr->tg, pr->draw_parts, 1u << 20) == 1 &&
                          prof_draw_parts(&pinned, pr->tg) == 1,
                      "draws in %d parts on %d cores (8 M values), 1 for 1 M values, 1 when pinned",
                      pr->draw_parts, cores);
            }
            ao_profiler_free(pr);
        } else {
            CHECK(0, "a profiler to look at: %s", err);
        }
    }
    return CHECK_DONE();
}
