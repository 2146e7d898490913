/* select.h - the selector's choices (docs/PROTOCOL.md, "The loop"): the beam of the
 * best parents and correct children, and the slow/fast pairs to learn from */
#ifndef AO_SELECT_H
#define AO_SELECT_H

#define AO_PAIR_POSITIVE 1.04        /* a plan's best sample this much faster is a lesson */
#define AO_PAIR_NEGATIVE (1 / 1.15)  /* ... and this much slower, a warning */

/* A child measured head to head against its parent in one sitting, their
 * calls interleaved (issue 47): the median of the paired ratios parent/child
 * (over 1: the child is faster) and its 95% interval.  have 0: none made
 * (or none came). */
struct ao_sel_cmp {
    int have;
    double speedup, low, high;
};

/* What a comparison decides.  Faster or slower only when its interval
 * leaves 1 out and the gain is at least AO_CMP_MIN_GAIN (or the loss its
 * inverse); anything else is a tie: the two are the same kernel as far as
 * the run can tell, and it decides and teaches nothing. */
enum ao_cmp_verdict { AO_CMP_NONE, AO_CMP_TIE, AO_CMP_FASTER, AO_CMP_SLOWER };
#define AO_CMP_MIN_GAIN 1.02
enum ao_cmp_verdict ao_sel_cmp_verdict(const struct ao_sel_cmp *c);
/* "faster", "slower", "tie" or "none". */
const char *ao_sel_cmp_name(enum ao_cmp_verdict v);

/* One kernel of an iteration: a parent (the beam it started from) or a child. */
struct ao_sel_kernel {
    const char *sha256;
    double latency_ns; /* measured; only correct kernels are offered */
    int parent;        /* 1 for a parent */
    int rank, plan;    /* child: the parent's rank and the plan's index */
    double spread;     /* its median's relative uncertainty (the selector: 1.58 IQR/median
                          over the root of the calls), 0 if unknown */
    struct ao_sel_cmp cmp; /* child: its comparison with its parent, if one was made */
    int dropped;           /* child: it failed when measured again; neither kept nor learnt from */
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

/* --- decisions on comparisons (the run config's `compare`, on by default) ---
 *
 * A child is measured head to head with its parent (issue 66): the
 * paired speedup, with its interval, is in its result.  What the beam
 * keeps and what the memory learns rests on those alone. */

/* Every child's latency put on its parent's scale: a compared child's is
 * its parent's divided by the comparison (a tie: its parent's own); a
 * child not compared, or whose comparison came to nothing, is never ahead
 * of its parent (at least its parent's).  Parents are the run's scale: the
 * baseline's measurement, times each step's comparison.  Then
 * ao_select_beam ranks them. */
void ao_select_chain(struct ao_sel_kernel *k, int n);

/* Per plan, the fastest child its comparison decided (faster or slower):
 * those over AO_PAIR_POSITIVE (best first, at most topk/2) and under
 * AO_PAIR_NEGATIVE (worst first) up to topk in all, speedup the
 * comparison's.  A tie is no lesson. */
int ao_select_pairs_compared(const struct ao_sel_kernel *k, int n, int topk, struct ao_sel_pair *out);

#endif
