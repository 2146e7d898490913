/* reference.c - lora, trusted: plain loops, double accumulation
 * out = x @ w + (x @ a) @ b */
#include <stdlib.h>

void kernel(const float *x, const float *w, const float *a, const float *b, float *out, int M,
            int K, int N, int R)
{
    double *acc = malloc(sizeof(double) * (size_t)N), *xa = malloc(sizeof(double) * (size_t)R);
    if (!acc || !xa)
        abort();
    for (int i = 0; i < M; i++) {
        const float *xi = x + (long)i * K;
        for (int r = 0; r < R; r++)
            xa[r] = 0.0;
        for (int j = 0; j < N; j++)
            acc[j] = 0.0;
        for (int k = 0; k < K; k++) {
            for (int r = 0; r < R; r++)
                xa[r] += (double)xi[k] * a[(long)k * R + r];
            for (int j = 0; j < N; j++)
                acc[j] += (double)xi[k] * w[(long)k * N + j];
        }
        for (int r = 0; r < R; r++)
            for (int j = 0; j < N; j++)
                acc[j] += xa[r] * b[(long)r * N + j];
        for (int j = 0; j < N; j++)
            out[(long)i * N + j] = (float)acc[j];
    }
    free(acc);
    free(xa);
}
