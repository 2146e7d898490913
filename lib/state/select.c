/* select.c - beam selection and pair choice */
#include <math.h>
#include <stdlib.h>
#include <string.h>

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
    struct order *o = calloc((size_t)n + 1, sizeof *o);
    int m = 0;

    if (!o)
        return 0;
    for (int i = 0; i < n; i++) {
        double key = k[i].latency_ns;
        /* a child not clearly faster than a slower-measured parent ties it */
        for (int j = 0; j < n && !k[i].parent; j++)
            if (k[j].parent && k[j].latency_ns > key &&
                key * (1 + ao_sel_uncertainty(&k[i], &k[j])) >= k[j].latency_ns)
                key = k[j].latency_ns;
        o[i] = (struct order){k, i, key};
    }
    qsort(o, (size_t)n, sizeof *o, by_key);
    for (int i = 0; i < n && m < beam; i++) {
        int seen = 0;
        for (int j = 0; j < m && !seen; j++)
            seen = k[out[j]].sha256 && k[o[i].i].sha256 && strcmp(k[out[j]].sha256, k[o[i].i].sha256) == 0;
        if (!seen)
            out[m++] = o[i].i;
    }
    free(o);
    return m;
}

/* the uncertainty between child i and its parent (the parent of its rank) */
static double pair_u(const struct ao_sel_kernel *k, int i, int n)
{
    for (int j = 0; j < n; j++)
        if (k[j].parent && k[j].rank == k[i].rank)
            return ao_sel_uncertainty(&k[i], &k[j]);
    return ao_sel_uncertainty(&k[i], &k[i]) / 2 + AO_NOISE_FLOOR / 2;
}

int ao_select_pairs(const struct ao_sel_kernel *k, int n, const double *parent_ns, int nparents,
                    int topk, struct ao_sel_pair *out)
{
    struct order *best = calloc((size_t)n + 1, sizeof *best);
    int nbest = 0, npos = 0, m = 0;

    if (!best || topk <= 0) {
        free(best);
        return 0;
    }
    /* the fastest sample of each plan */
    for (int i = 0; i < n; i++) {
        int j;
        if (k[i].parent || k[i].rank < 0 || k[i].rank >= nparents || !(k[i].latency_ns > 0))
            continue;
        for (j = 0; j < nbest; j++)
            if (k[best[j].i].rank == k[i].rank && k[best[j].i].plan == k[i].plan)
                break;
        if (j == nbest)
            best[nbest++] = (struct order){k, i, 0};
        else if (k[i].latency_ns < k[best[j].i].latency_ns)
            best[j].i = i;
    }
    for (int j = 0; j < nbest; j++) /* sorted by speedup, best first */
        best[j].key = -(parent_ns[k[best[j].i].rank] / k[best[j].i].latency_ns);
    qsort(best, (size_t)nbest, sizeof *best, by_key);
    for (int j = 0; j < nbest && npos < topk / 2; j++)
        if (-best[j].key > AO_PAIR_POSITIVE && -best[j].key > 1 + pair_u(k, best[j].i, n))
            out[m++] = (struct ao_sel_pair){best[j].i, -best[j].key}, npos++;
    for (int j = nbest - 1; j >= 0 && m < topk; j--) /* worst first */
        if (-best[j].key < AO_PAIR_NEGATIVE && -best[j].key * (1 + pair_u(k, best[j].i, n)) < 1)
            out[m++] = (struct ao_sel_pair){best[j].i, -best[j].key};
    free(best);
    return m;
}
