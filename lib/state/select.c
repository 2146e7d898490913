/* select.c - beam selection and pair choice */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "state/select.h"

struct order {
    const struct ao_sel_kernel *k;
    int i;
    double key;
};

static int by_key(const void *a, const void *b)
{
    const struct order *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    if (x->k[x->i].parent != y->k[y->i].parent)
        return x->k[x->i].parent ? -1 : 1;
    return x->i - y->i; /* stable */
}

double ao_sel_uncertainty(const struct ao_sel_kernel *a, const struct ao_sel_kernel *b)
{
    double x = a->spread > 0 ? a->spread : 0, y = b->spread > 0 ? b->spread : 0;
    double u = sqrt(x * x + y * y); /* independent measurements: in quadrature */
    return u > AO_NOISE_FLOOR ? u : AO_NOISE_FLOOR;
}

int ao_select_beam(const struct ao_sel_kernel *k, int n, int beam, int *out)
{
    struct order *o = ao_calloc((size_t)n + 1, sizeof *o);
    int m = 0;

    for (int i = 0; i < n; i++) {
        double key = k[i].latency_ns;
        /* a child not clearly faster than a slower-measured parent ties it
         * (a compared child's place is its comparison's) */
        for (int j = 0; j < n && !k[i].parent && !k[i].cmp.have; j++)
            if (k[j].parent && k[j].latency_ns > key &&
                key * (1 + ao_sel_uncertainty(&k[i], &k[j])) >= k[j].latency_ns)
                key = k[j].latency_ns;
        o[i] = (struct order){k, i, key};
    }
    qsort(o, (size_t)n, sizeof *o, by_key);
    for (int i = 0; i < n && m < beam; i++) {
        int seen = k[o[i].i].dropped;
        for (int j = 0; j < m && !seen; j++)
            seen = k[out[j]].sha256 && k[o[i].i].sha256 && strcmp(k[out[j]].sha256, k[o[i].i].sha256) == 0;
        if (!seen)
            out[m++] = o[i].i;
    }
    free(o);
    return m;
}

static int parent_of(const struct ao_sel_kernel *k, int n, int i)
{
    for (int j = 0; j < n; j++)
        if (k[j].parent && k[j].rank == k[i].rank)
            return j;
    return -1;
}

/* The lessons among the children: per plan its fastest child by sp[i]
 * (parent over child; NAN: not a candidate), then those over
 * AO_PAIR_POSITIVE and beyond u[i] (best first, at most topk/2), and those
 * under AO_PAIR_NEGATIVE and beyond u[i] (worst first), topk in all. */
static int choose_pairs(const struct ao_sel_kernel *k, int n, const double *sp, const double *u, int topk,
                        struct ao_sel_pair *out)
{
    struct order *best = ao_calloc((size_t)n + 1, sizeof *best);
    int nbest = 0, npos = 0, m = 0;

    if (topk <= 0) {
        free(best);
        return 0;
    }
    for (int i = 0; i < n; i++) {
        int j;
        if (k[i].parent || !(sp[i] > 0))
            continue;
        for (j = 0; j < nbest; j++)
            if (k[best[j].i].rank == k[i].rank && k[best[j].i].plan == k[i].plan)
                break;
        if (j == nbest)
            best[nbest++] = (struct order){k, i, -sp[i]};
        else if (sp[i] > -best[j].key)
            best[j] = (struct order){k, i, -sp[i]};
    }
    qsort(best, (size_t)nbest, sizeof *best, by_key); /* best first */
    for (int j = 0; j < nbest && npos < topk / 2; j++)
        if (-best[j].key > AO_PAIR_POSITIVE && -best[j].key > 1 + u[best[j].i])
            out[m++] = (struct ao_sel_pair){best[j].i, -best[j].key}, npos++;
    for (int j = nbest - 1; j >= 0 && m < topk; j--) /* worst first */
        if (-best[j].key < AO_PAIR_NEGATIVE && -best[j].key * (1 + u[best[j].i]) < 1)
            out[m++] = (struct ao_sel_pair){best[j].i, -best[j].key};
    free(best);
    return m;
}

int ao_select_pairs(const struct ao_sel_kernel *k, int n, const double *parent_ns, int nparents,
                    int topk, struct ao_sel_pair *out)
{
    double *sp = ao_calloc((size_t)n + 1, sizeof *sp), *u = ao_calloc((size_t)n + 1, sizeof *u);
    int m = 0;

    if (sp && u) {
        for (int i = 0; i < n; i++) {
            int p = parent_of(k, n, i);
            sp[i] = k[i].rank >= 0 && k[i].rank < nparents && k[i].latency_ns > 0
                        ? parent_ns[k[i].rank] / k[i].latency_ns : NAN;
            /* the uncertainty between the child and its parent (the parent of its rank) */
            u[i] = p >= 0 ? ao_sel_uncertainty(&k[i], &k[p])
                          : ao_sel_uncertainty(&k[i], &k[i]) / 2 + AO_NOISE_FLOOR / 2;
        }
        m = choose_pairs(k, n, sp, u, topk, out);
    }
    free(sp);
    free(u);
    return m;
}

enum ao_cmp_verdict ao_sel_cmp_verdict(const struct ao_sel_cmp *c)
{
    if (!c->have || !(c->speedup > 0))
        return AO_CMP_NONE;
    if (c->low > 1 && c->speedup >= AO_CMP_MIN_GAIN)
        return AO_CMP_FASTER;
    if (c->high < 1 && c->speedup <= 1 / AO_CMP_MIN_GAIN)
        return AO_CMP_SLOWER;
    return AO_CMP_TIE;
}

const char *ao_sel_cmp_name(enum ao_cmp_verdict v)
{
    static const char *const names[] = {"none", "tie", "faster", "slower"};
    return v >= AO_CMP_NONE && v <= AO_CMP_SLOWER ? names[v] : names[0];
}

void ao_select_chain(struct ao_sel_kernel *k, int n)
{
    for (int i = 0; i < n; i++) {
        int p = k[i].parent ? -1 : parent_of(k, n, i);
        double base;
        if (p < 0)
            continue;
        base = k[p].latency_ns;
        switch (ao_sel_cmp_verdict(&k[i].cmp)) {
        case AO_CMP_FASTER:
        case AO_CMP_SLOWER:
            k[i].latency_ns = base / k[i].cmp.speedup;
            break;
        case AO_CMP_TIE:
            k[i].latency_ns = base;
            break;
        case AO_CMP_NONE: /* nothing says it is faster: never ahead of its parent */
            k[i].cmp.have = 0;
            if (!(k[i].latency_ns > base))
                k[i].latency_ns = base;
            break;
        }
    }
}

int ao_select_pairs_compared(const struct ao_sel_kernel *k, int n, int topk, struct ao_sel_pair *out)
{
    double *sp = ao_calloc((size_t)n + 1, sizeof *sp), *u = ao_calloc((size_t)n + 1, sizeof *u);
    int m = 0;

    if (sp && u) {
        for (int i = 0; i < n; i++) { /* decided comparisons only: their interval is the noise */
            enum ao_cmp_verdict v = ao_sel_cmp_verdict(&k[i].cmp);
            sp[i] = !k[i].dropped && (v == AO_CMP_FASTER || v == AO_CMP_SLOWER) ? k[i].cmp.speedup : NAN;
        }
        m = choose_pairs(k, n, sp, u, topk, out);
    }
    free(sp);
    free(u);
    return m;
}
