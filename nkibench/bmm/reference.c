/* reference.c - bmm, trusted: double accumulation, each output's sum
 * over k in ascending order as the textbook loop makes it (i-k-j order
 * with a row of double accumulators, so rhs streams through memory: the
 * j-innermost loop read rhs a column at a time, 40x the kernel's time) */
#include <stdlib.h>

void kernel(const float *lhs, const float *rhs, float *out, int B, int M, int K, int N)
{
    double *acc = malloc(sizeof(double) * (size_t)N);
    if (!acc)
        abort();
    for (int b = 0; b < B; b++)
        for (int i = 0; i < M; i++) {
            const float *l = lhs + ((long)b * M + i) * K;
            for (int j = 0; j < N; j++)
                acc[j] = 0.0;
            for (int k = 0; k < K; k++) {
                double a = l[k];
                const float *r = rhs + ((long)b * K + k) * N;
                for (int j = 0; j < N; j++)
                    acc[j] += a * (double)r[j];
            }
            for (int j = 0; j < N; j++)
                out[((long)b * M + i) * N + j] = (float)acc[j];
        }
    free(acc);
}
