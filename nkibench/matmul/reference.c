/* reference.c - matmul, trusted: plain loops, double accumulation
 * (i-k-j order with a row of double accumulators: the same sums as the
 * textbook loop, in an order that streams through memory) */
#include <stdlib.h>

void kernel(const float *lhs, const float *rhs, float *out, int M, int K, int N)
{
    double *acc = malloc(sizeof(double) * (size_t)N);
    if (!acc)
        abort();
    for (int i = 0; i < M; i++) {
        for (int j = 0; j < N; j++)
            acc[j] = 0.0;
        for (int k = 0; k < K; k++) {
            double a = lhs[(long)i * K + k];
            const float *r = rhs + (long)k * N;
            for (int j = 0; j < N; j++)
                acc[j] += a * (double)r[j];
        }
        for (int j = 0; j < N; j++)
            out[(long)i * N + j] = (float)acc[j];
    }
    free(acc);
}
