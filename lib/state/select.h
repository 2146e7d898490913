/* select.h - the selector's choices (DESIGN.md section 5): the beam of the
 * best parents and correct children, and the slow/fast pairs to learn from */
#ifndef AO_SELECT_H
#define AO_SELECT_H

#define AO_PAIR_POSITIVE 1.04        /* a plan's best sample this much faster is a lesson */
#define AO_PAIR_NEGATIVE (1 / 1.15)  /* ... and this much slower, a warning */

/* One kernel of an iteration: a parent (the beam it started from) or a child. */
struct ao_sel_kernel {
    const char *sha256;
    double latency_ns; /* measured; only correct kernels are offered */
    int parent;        /* 1 for a parent */
    int rank, plan;    /* child: the parent's rank and the plan's index */
    double spread;     /* its median's relative uncertainty (the selector: 1.58 IQR/median
                          over the root of the calls), 0 if unknown */
};

/* Two kernels' latencies differ only when the gap is over their medians'
 * uncertainties (in quadrature), and never under this: the run-to-run spread of one kernel in
 * separate processes on these machines (docs/BENCHMARKS.md, A/A). */
#define AO_NOISE_FLOOR 0.05

/* The relative gap two measurements must exceed to differ. */
double ao_sel_uncertainty(const struct ao_sel_kernel *a, const struct ao_sel_kernel *b);

/* The best `beam` distinct kernels (by sha256) of k[0..n), fastest first,
 * a parent before a child of equal latency; a child within the
 * uncertainty of a parent faster than it counts as equal to that parent
 * (noise is no win).  Writes indices into out and
 * returns how many. */
int ao_select_beam(const struct ao_sel_kernel *k, int n, int beam, int *out);

struct ao_sel_pair {
    int child;      /* index into k */
    double speedup; /* parent latency / child latency */
};

/* Per plan, the fastest child; those over AO_PAIR_POSITIVE and outside the
 * uncertainty (best first, at most topk/2) and under AO_PAIR_NEGATIVE and
 * outside it (worst first) up to topk in all: a difference within the
 * noise teaches nothing.
 * parent_ns[rank] is the latency of the parent of that rank.  Returns the
 * number written to out (room for topk). */
int ao_select_pairs(const struct ao_sel_kernel *k, int n, const double *parent_ns, int nparents,
                    int topk, struct ao_sel_pair *out);

#endif
