/* reference.c - rmsnorm_matmul, trusted: plain loops, double accumulation */
#include <math.h>
#include <stdlib.h>

void kernel(const float *x, const float *w, float *out, int M, int K, int N)
{
    double *y = malloc(sizeof(double) * (size_t)K);
    if (!y)
        abort();
    for (int i = 0; i < M; i++) {
        double ss = 0.0;
        for (int k = 0; k < K; k++)
            ss += (double)x[(long)i * K + k] * x[(long)i * K + k];
        double inv = 1.0 / sqrt(ss / K);
        for (int k = 0; k < K; k++)
            y[k] = x[(long)i * K + k] * inv;
        for (int j = 0; j < N; j++) {
            double acc = 0.0;
            for (int k = 0; k < K; k++)
                acc += y[k] * w[(long)k * N + j];
            out[(long)i * N + j] = (float)acc;
        }
    }
    free(y);
}
