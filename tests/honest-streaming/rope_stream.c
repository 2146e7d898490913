/* task: rope_single_freq_apply - AVX2 with non-temporal stores: both
 * halves of a column pair in one pass, the output streamed past the caches */
#include <immintrin.h>

void kernel(const float *x, const float *cos, const float *sin, float *out, int R, int L, int H)
{
    (void)R;
    for (int r = 0; r < H; r++) {
        const float *x0 = x + (long)r * L, *x1 = x + (long)(r + H) * L;
        const float *c = cos + (long)r * L, *s = sin + (long)r * L;
        float *o0 = out + (long)r * L, *o1 = out + (long)(r + H) * L;
        int l = 0;
        /* stream only where both rows are 32-byte aligned (L a multiple of 8) */
        int vec = ((unsigned long)o0 & 31) == 0 && ((unsigned long)o1 & 31) == 0;
        for (; vec && l + 8 <= L; l += 8) {
            __m256 a = _mm256_loadu_ps(x0 + l), b = _mm256_loadu_ps(x1 + l);
            __m256 cc = _mm256_loadu_ps(c + l), ss = _mm256_loadu_ps(s + l);
            _mm256_stream_ps(o0 + l, _mm256_sub_ps(_mm256_mul_ps(a, cc), _mm256_mul_ps(b, ss)));
            _mm256_stream_ps(o1 + l, _mm256_add_ps(_mm256_mul_ps(a, ss), _mm256_mul_ps(b, cc)));
        }
        for (; l < L; l++) {
            o0[l] = x0[l] * c[l] - x1[l] * s[l];
            o1[l] = x0[l] * s[l] + x1[l] * c[l];
        }
    }
    _mm_sfence();
}
