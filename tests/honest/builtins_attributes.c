/* expect: ok - builtins and attributes: prefetch, expect, assume_aligned, restrict, inline helpers */
#include <stddef.h>
static inline __attribute__((always_inline)) void row(const float *__restrict a, const float *__restrict b,
                                                      float *__restrict o, int K, int N)
{
    for (int j = 0; j < N; j++)
        o[j] = 0;
    for (int k = 0; k < K; k++) {
        if (__builtin_expect(k + 8 < K, 1))
            __builtin_prefetch(b + (size_t)(k + 8) * N, 0, 1);
        float av = a[k];
        for (int j = 0; j < N; j++)
            o[j] += av * b[(size_t)k * N + j];
    }
}
__attribute__((hot)) void kernel(const float *lhs, const float *rhs, float *out, int M, int K, int N)
{
    for (int i = 0; i < M; i++)
        row(lhs + (size_t)i * K, rhs, out + (size_t)i * N, K, N);
}
