/* reference.c - mamba, trusted: the scan run sequentially, state in double */
#include <math.h>
#include <stdlib.h>

void kernel(const float *delta, const float *u, const float *a, const float *b, const float *c,
            float *out, int C, int M, int S)
{
    double *acc = malloc(sizeof(double) * (size_t)M);
    if (!acc)
        abort();
    for (int ch = 0; ch < C; ch++) {
        for (int m = 0; m < M; m++)
            acc[m] = 0.0;
        for (int s = 0; s < S; s++) {
            double h = 0.0;
            for (int m = 0; m < M; m++) {
                double dt = delta[(long)ch * M + m];
                h = exp(dt * a[(long)ch * S + s]) * h + dt * b[(long)s * M + m] * u[(long)ch * M + m];
                acc[m] += (double)c[(long)s * M + m] * h;
            }
        }
        for (int m = 0; m < M; m++)
            out[(long)ch * M + m] = (float)acc[m];
    }
    free(acc);
}
