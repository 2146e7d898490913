/* expect: ok - scratch memory: a transposed copy of rhs in an aligned buffer, freed each call */
#include <stdlib.h>
#include <string.h>
void kernel(const float *lhs, const float *rhs, float *out, int M, int K, int N)
{
    size_t bytes = ((size_t)K * N * sizeof(float) + 63) / 64 * 64;
    float *t = aligned_alloc(64, bytes);
    if (!t)
        return;
    for (int k = 0; k < K; k++)
        for (int j = 0; j < N; j++)
            t[(size_t)j * K + k] = rhs[(size_t)k * N + j];
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            float acc = 0;
            for (int k = 0; k < K; k++)
                acc += lhs[(size_t)i * K + k] * t[(size_t)j * K + k];
            out[(size_t)i * N + j] = acc;
        }
    free(t);
}
