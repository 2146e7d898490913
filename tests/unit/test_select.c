/* test_select.c - the beam and the pairs (docs/PROTOCOL.md, "The loop") */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "check.h"
#include "state/runstore.h"
#include "state/select.h"

/* a kernel: hash, latency, parent?, rank, plan, spread (no comparison) */
#define K(h, ns, par, rk, pl, u) {.sha256 = h, .latency_ns = ns, .parent = par, .rank = rk, .plan = pl, .spread = u}

int main(void)
{
    /* two parents (rank 0: 100, rank 1: 120) and children of plans */
    const struct ao_sel_kernel k[] = {
        K("p0", 100, 1, 0, -1, 0), K("p1", 120, 1, 1, -1, 0),
        K("a", 80, 0, 0, 0, 0),   K("a", 80, 0, 0, 0, 0),    /* the same kernel twice */
        K("b", 100, 0, 0, 1, 0),  K("c", 150, 0, 0, 2, 0),   /* a tie with p0; a regression */
        K("d", 90, 0, 1, 0, 0),   K("e", 130, 0, 1, 0, 0),   /* plan 1.0's two samples */
        K("f", 119, 0, 1, 1, 0),  K("g", 200, 0, 1, 2, 0),
    };
    int n = (int)(sizeof k / sizeof k[0]), out[16], m;
    double parents[] = {100, 120};
    struct ao_sel_pair p[16];

    m = ao_select_beam(k, n, 4, out);
    CHECK(m == 4 && out[0] == 2 && out[1] == 6 && out[2] == 0 && out[3] == 4,
          "beam: fastest first, duplicates once, a parent before a child of equal time (%d: %d %d %d %d)",
          m, out[0], out[1], out[2], out[3]);
    m = ao_select_beam(k, 2, 6, out);
    CHECK(m == 2, "beam: no more than there are");

    m = ao_select_pairs(k, n, parents, 2, 8, p);
    /* per plan best: 0.0 a 1.25, 0.1 b 1.0, 0.2 c 0.667, 1.0 d 1.333, 1.1 f 1.008, 1.2 g 0.6 */
    CHECK(m == 4, "pairs: 2 over 1.04 and 2 under 1/1.15 (%d)", m);
    CHECK(m == 4 && p[0].child == 6 && p[1].child == 2, "positives best first (d 1.33x, then a 1.25x)");
    CHECK(m == 4 && p[2].child == 9 && p[3].child == 5, "negatives worst first (g 0.6x, then c 0.67x)");
    CHECK(m == 4 && p[0].speedup > 1.33 && p[0].speedup < 1.34, "speedup is parent / child (%g)", p[0].speedup);
    m = ao_select_pairs(k, n, parents, 2, 2, p);
    CHECK(m == 2 && p[0].child == 6 && p[1].child == 9, "topk 2: one positive (TopK/2), one negative fills");
    m = ao_select_pairs(k, n, parents, 2, 0, p);
    CHECK(m == 0, "topk 0: no pairs");
    {
        const struct ao_sel_kernel edge[] = {K("x", 100, 1, 0, -1, 0), K("y", 100 / 1.039, 0, 0, 0, 0),
                                             K("z", 114.9, 0, 0, 1, 0)};
        double pe[] = {100};
        m = ao_select_pairs(edge, 3, pe, 1, 8, p);
        CHECK(m == 0, "1.039x faster or 1.149x slower is not a pair (%d)", m);
    }
    {
        /* issue 25: a 1.07x "win" with 5% spread on both sides is noise */
        const struct ao_sel_kernel noisy[] = {K("base", 107, 1, 0, -1, 0.05), K("copy", 100, 0, 0, 0, 0.05),
                                              K("slow", 126, 0, 0, 1, 0.05)};
        const struct ao_sel_kernel quiet[] = {K("base", 107, 1, 0, -1, 0.01), K("copy", 100, 0, 0, 0, 0.01),
                                              K("slow", 126, 0, 0, 1, 0.01)};
        double pe[] = {107};
        m = ao_select_beam(noisy, 3, 1, out);
        CHECK(m == 1 && out[0] == 0, "a child 1.07x faster within 5%% and 5%% spreads ties: the parent stays");
        m = ao_select_pairs(noisy, 3, pe, 1, 8, p);
        CHECK(m == 1 && p[0].child == 2, "and it is no lesson, while 1.18x slower still warns (%d)", m);
        m = ao_select_beam(quiet, 3, 1, out);
        CHECK(m == 1 && out[0] == 1, "with 1%% spreads the same 1.07x is a real win");
        m = ao_select_pairs(quiet, 3, pe, 1, 8, p);
        CHECK(m == 2 && p[0].child == 1, "and a lesson (%d)", m);
        /* never under the floor: two perfectly quiet measurements 3% apart tie */
        const struct ao_sel_kernel flat[] = {K("base", 103, 1, 0, -1, 0), K("c", 100, 0, 0, 0, 0)};
        m = ao_select_beam(flat, 2, 1, out);
        CHECK(m == 1 && out[0] == 0, "3%% apart is within the run-to-run floor of %.0f%%", 100 * AO_NOISE_FLOOR);
    }

    /* issue 47: decisions on comparisons, not on single measurements */
    {
        struct ao_sel_cmp faster = {1, 1.10, 1.05, 1.15}, small = {1, 1.01, 1.005, 1.02},
                          wide = {1, 1.3, 0.9, 1.6}, slower = {1, 0.8, 0.7, 0.9}, none = {0, 2, 2, 2};
        CHECK(ao_sel_cmp_verdict(&faster) == AO_CMP_FASTER, "an interval above 1 and a 10%% gain: faster");
        CHECK(ao_sel_cmp_verdict(&small) == AO_CMP_TIE, "a 1%% gain is a tie even with its interval above 1");
        CHECK(ao_sel_cmp_verdict(&wide) == AO_CMP_TIE, "an interval that holds 1 is a tie, whatever its median");
        CHECK(ao_sel_cmp_verdict(&slower) == AO_CMP_SLOWER, "an interval below 1: slower");
        CHECK(ao_sel_cmp_verdict(&none) == AO_CMP_NONE, "no comparison decides nothing");
    }
    {
        /* the A/A: a copy measured 1.75x faster on a busy machine, a tie head to head */
        struct ao_sel_kernel aa[] = {K("p", 342, 1, 0, -1, 0.02), K("copy", 196, 0, 0, 0, 0.02)};
        aa[1].cmp = (struct ao_sel_cmp){1, 1.003, 0.98, 1.03};
        ao_select_chain(aa, 2);
        CHECK(aa[1].latency_ns == 342, "a tie is its parent's latency (%g)", aa[1].latency_ns);
        m = ao_select_beam(aa, 2, 1, out);
        CHECK(m == 1 && out[0] == 0, "the A/A keeps the parent: its best is the baseline");
        m = ao_select_pairs_compared(aa, 2, 4, p);
        CHECK(m == 0, "and teaches nothing (%d)", m);

        /* a real win and a real loss, head to head: one parent; a, b
         * (measured alone, --no-compare) and c */
        struct ao_sel_kernel q[] = {K("p", 100, 1, 0, -1, 0.01), K("a", 80, 0, 0, 0, 0.01),
                                    K("b", 101, 0, 0, 1, 0.01), K("c", 150, 0, 0, 2, 0.01)};
        int nq = 4;
        q[1].cmp = (struct ao_sel_cmp){1, 1.25, 1.1, 1.4};
        q[3].cmp = (struct ao_sel_cmp){1, 0.6, 0.5, 0.7};
        ao_select_chain(q, nq);
        CHECK(q[1].latency_ns == 80 && q[3].latency_ns > 166 && q[3].latency_ns < 167,
              "compared children on the parent's scale (%g, %g)", q[1].latency_ns, q[3].latency_ns);
        CHECK(q[2].latency_ns == 101, "b, not compared and measured slower, keeps its own (%g)", q[2].latency_ns);
        m = ao_select_beam(q, nq, 1, out);
        CHECK(m == 1 && out[0] == 1, "the faster child leads");
        m = ao_select_pairs_compared(q, nq, 4, p);
        CHECK(m == 2 && p[0].child == 1 && p[1].child == 3 && p[0].speedup == 1.25 && p[1].speedup == 0.6,
              "lessons from the comparisons: the win, then the warning, at their figures (%d)", m);
        q[3].dropped = 1;
        m = ao_select_pairs_compared(q, nq, 4, p);
        CHECK(m == 1 && p[0].child == 1, "a child that failed its comparison teaches nothing");

        /* a child measured faster alone, whose comparison never came, ties its parent */
        struct ao_sel_kernel lost[] = {K("p", 100, 1, 0, -1, 0.01), K("x", 50, 0, 0, 0, 0.01)};
        ao_select_chain(lost, 2);
        m = ao_select_beam(lost, 2, 1, out);
        CHECK(lost[1].latency_ns == 100 && m == 1 && out[0] == 0, "no comparison: never ahead of its parent");
    }

    /* the file store keeps what Redis would, and survives a reload */
    {
        char path[] = "/tmp/test-runstore-XXXXXX", err[256], *v = NULL;
        int fd = mkstemp(path);
        struct ao_runstore *s;
        cJSON *all;
        close(fd);
        unlink(path);
        s = ao_runstore_file(path, err, sizeof err);
        CHECK(s && ao_rs_hsetnx(s, "run:a:iter:1", "0.0.0", "r1", err, sizeof err) == 1 &&
                  ao_rs_hsetnx(s, "run:a:iter:1", "0.0.0", "r2", err, sizeof err) == 0 &&
                  ao_rs_hlen(s, "run:a:iter:1", err, sizeof err) == 1,
              "hsetnx records a slot once");
        CHECK(ao_rs_sadd(s, "runs:active", "a", err, sizeof err) == 0 &&
                  ao_runstore_save(s, err, sizeof err) == 0, "saved");
        ao_runstore_free(s);
        s = ao_runstore_file(path, err, sizeof err);
        CHECK(s && ao_rs_hget(s, "run:a:iter:1", "0.0.0", &v, err, sizeof err) == 1 && v && v[0] == 'r' && v[1] == '1',
              "reloaded: the first value stayed");
        all = s ? ao_rs_smembers(s, "runs:active", err, sizeof err) : NULL;
        CHECK(cJSON_GetArraySize(all) == 1, "reloaded: the set");
        cJSON_Delete(all);
        ao_rs_srem(s, "runs:active", "a", err, sizeof err);
        all = ao_rs_smembers(s, "runs:active", err, sizeof err);
        CHECK(cJSON_GetArraySize(all) == 0, "srem");
        cJSON_Delete(all);
        free(v);
        ao_runstore_free(s);
        unlink(path);
    }
    return CHECK_DONE();
}
