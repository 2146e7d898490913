/* reference.c - transpose_matmul, trusted: plain loops, double accumulation
 * out[i][j] = sum_k lhs[k][i] * rhs[k][j] */
#include <stdlib.h>

void kernel(const float *lhs, const float *rhs, float *out, int K, int M, int N)
{
    double *acc = malloc(sizeof(double) * (size_t)N);
    if (!acc)
        abort();
    for (int i = 0; i < M; i++) {
        for (int j = 0; j < N; j++)
            acc[j] = 0.0;
        for (int k = 0; k < K; k++) {
            double a = lhs[(long)k * M + i];
            for (int j = 0; j < N; j++)
                acc[j] += a * rhs[(long)k * N + j];
        }
        for (int j = 0; j < N; j++)
            out[(long)i * N + j] = (float)acc[j];
    }
    free(acc);
}
