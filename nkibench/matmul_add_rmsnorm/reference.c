/* reference.c - matmul_add_rmsnorm, trusted: plain loops, double accumulation
 * y = x @ w + z; out = y * g / sqrt(mean(y^2, -1) + 1e-5) */
#include <math.h>
#include <stdlib.h>

void kernel(const float *x, const float *w, const float *z, const float *g, float *out, int M,
            int K, int N)
{
    double *acc = malloc(sizeof(double) * (size_t)N);
    if (!acc)
        abort();
    for (int i = 0; i < M; i++) {
        for (int j = 0; j < N; j++)
            acc[j] = z[(long)i * N + j];
        for (int k = 0; k < K; k++) {
            double a = x[(long)i * K + k];
            const float *wk = w + (long)k * N;
            for (int j = 0; j < N; j++)
                acc[j] += a * wk[j];
        }
        double ss = 0.0;
        for (int j = 0; j < N; j++)
            ss += acc[j] * acc[j];
        double inv = 1.0 / sqrt(ss / N + 1e-5);
        for (int j = 0; j < N; j++)
            out[(long)i * N + j] = (float)(acc[j] * g[j] * inv);
    }
    free(acc);
}
