/* reference.c - swiglu, trusted: plain loops, double accumulation
 * out = (silu(x @ w_gate) * (x @ w_up)) @ w_down */
#include <math.h>
#include <stdlib.h>

void kernel(const float *x, const float *w_up, const float *w_gate, const float *w_down,
            float *out, int M, int D, int F)
{
    double *up = malloc(sizeof(double) * (size_t)F), *gate = malloc(sizeof(double) * (size_t)F);
    double *acc = malloc(sizeof(double) * (size_t)D);
    if (!up || !gate || !acc)
        abort();
    for (int i = 0; i < M; i++) {
        for (int f = 0; f < F; f++)
            up[f] = gate[f] = 0.0;
        for (int d = 0; d < D; d++) {
            double xd = x[(long)i * D + d];
            for (int f = 0; f < F; f++) {
                up[f] += xd * w_up[(long)d * F + f];
                gate[f] += xd * w_gate[(long)d * F + f];
            }
        }
        for (int d = 0; d < D; d++)
            acc[d] = 0.0;
        for (int f = 0; f < F; f++) {
            double h = gate[f] / (1.0 + exp(-gate[f])) * up[f];
            for (int d = 0; d < D; d++)
                acc[d] += h * w_down[(long)f * D + d];
        }
        for (int d = 0; d < D; d++)
            out[(long)i * D + d] = (float)acc[d];
    }
    free(up);
    free(gate);
    free(acc);
}
