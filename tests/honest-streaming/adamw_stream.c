/* task: adamw - AVX2 with non-temporal stores and prefetch: the output
 * bypasses the caches, so the kernel moves fewer bytes than a plain
 * store's read-for-ownership; an honest way under a plain-store roofline */
#include <immintrin.h>
#include <math.h>

void kernel(const float *theta, const float *grad, const float *m, const float *v, float *out,
            int R, int C)
{
    long n = (long)R * C, i = 0;
    const __m256 decay = _mm256_set1_ps(1 - 1e-5f), b1 = _mm256_set1_ps(0.9f),
                 g1 = _mm256_set1_ps(0.1f), b2 = _mm256_set1_ps(0.999f),
                 g2 = _mm256_set1_ps(0.001f), corr = _mm256_set1_ps(1000.0f),
                 lr = _mm256_set1_ps(0.01f), eps = _mm256_set1_ps(1e-8f);
    /* stream only from a 32-byte boundary of out */
    for (; i < n && ((unsigned long)(out + i) & 31); i++) {
        float m1 = 0.9f * m[i] + 0.1f * grad[i], v1 = 0.999f * v[i] + 0.001f * grad[i] * grad[i];
        out[i] = theta[i] * (1 - 1e-5f) - 0.01f * m1 / (sqrtf(1000.0f * v1) + 1e-8f);
    }
    for (; i + 8 <= n; i += 8) {
        __m256 g = _mm256_loadu_ps(grad + i);
        __m256 m1 = _mm256_add_ps(_mm256_mul_ps(b1, _mm256_loadu_ps(m + i)), _mm256_mul_ps(g1, g));
        __m256 v1 = _mm256_add_ps(_mm256_mul_ps(b2, _mm256_loadu_ps(v + i)),
                                  _mm256_mul_ps(g2, _mm256_mul_ps(g, g)));
        __m256 den = _mm256_add_ps(_mm256_sqrt_ps(_mm256_mul_ps(corr, v1)), eps);
        __m256 o = _mm256_sub_ps(_mm256_mul_ps(_mm256_loadu_ps(theta + i), decay),
                                 _mm256_div_ps(_mm256_mul_ps(lr, m1), den));
        _mm_prefetch((const char *)(grad + i + 256), _MM_HINT_T0);
        _mm256_stream_ps(out + i, o);
    }
    _mm_sfence();
    for (; i < n; i++) {
        float m1 = 0.9f * m[i] + 0.1f * grad[i], v1 = 0.999f * v[i] + 0.001f * grad[i] * grad[i];
        out[i] = theta[i] * (1 - 1e-5f) - 0.01f * m1 / (sqrtf(1000.0f * v1) + 1e-8f);
    }
}
