/* expect: ok - AVX2/FMA intrinsics, i-k-j order, 8 columns at a time */
#include <immintrin.h>
void kernel(const float *lhs, const float *rhs, float *out, int M, int K, int N)
{
    for (int i = 0; i < M; i++) {
        float *o = out + (long)i * N;
        int j = 0;
        for (; j + 8 <= N; j += 8)
            _mm256_storeu_ps(o + j, _mm256_setzero_ps());
        for (; j < N; j++)
            o[j] = 0;
        for (int k = 0; k < K; k++) {
            __m256 a = _mm256_set1_ps(lhs[(long)i * K + k]);
            const float *r = rhs + (long)k * N;
            for (j = 0; j + 8 <= N; j += 8)
                _mm256_storeu_ps(o + j, _mm256_fmadd_ps(a, _mm256_loadu_ps(r + j), _mm256_loadu_ps(o + j)));
            for (; j < N; j++)
                o[j] += lhs[(long)i * K + k] * r[j];
        }
    }
}
