/* reference.c - add_rmsnorm_matmul, trusted: plain loops, double accumulation
 * y = x + z; y = y / sqrt(mean(y^2, -1) + 1e-5) * g; out = y @ w */
#include <math.h>
#include <stdlib.h>

void kernel(const float *x, const float *w, const float *z, const float *g, float *out, int M,
            int K, int N)
{
    double *y = malloc(sizeof(double) * (size_t)K), *acc = malloc(sizeof(double) * (size_t)N);
    if (!y || !acc)
        abort();
    for (int i = 0; i < M; i++) {
        double ss = 0.0;
        for (int k = 0; k < K; k++) {
            y[k] = (double)x[(long)i * K + k] + z[(long)i * K + k];
            ss += y[k] * y[k];
        }
        double inv = 1.0 / sqrt(ss / K + 1e-5);
        for (int j = 0; j < N; j++)
            acc[j] = 0.0;
        for (int k = 0; k < K; k++) {
            double yk = y[k] * inv * g[k];
            const float *wk = w + (long)k * N;
            for (int j = 0; j < N; j++)
                acc[j] += yk * wk[j];
        }
        for (int j = 0; j < N; j++)
            out[(long)i * N + j] = (float)acc[j];
    }
    free(y);
    free(acc);
}
