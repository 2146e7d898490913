/* reference.c - rmsnorm_matmul, trusted: plain loops, double accumulation
 * out = (x / sqrt(mean(x^2, -1))) @ w, with no eps and no gain */
#include <math.h>
#include <stdlib.h>

void kernel(const float *x, const float *w, float *out, int M, int K, int N)
{
    double *acc = malloc(sizeof(double) * (size_t)N);
    if (!acc)
        abort();
    for (int i = 0; i < M; i++) {
        const float *xi = x + (long)i * K;
        double ss = 0.0;
        for (int k = 0; k < K; k++)
            ss += (double)xi[k] * xi[k];
        double inv = 1.0 / sqrt(ss / K);
        for (int j = 0; j < N; j++)
            acc[j] = 0.0;
        for (int k = 0; k < K; k++) {
            double y = xi[k] * inv;
            const float *wk = w + (long)k * N;
            for (int j = 0; j < N; j++)
                acc[j] += y * (double)wk[j];
        }
        for (int j = 0; j < N; j++)
            out[(long)i * N + j] = (float)acc[j];
    }
    free(acc);
}
