/* vector_exp.c - silu, hand-written: how far % of peak can rise on one core.
 * silu is memory-bound (8 bytes per 3 flops), so the work is to keep the
 * exp off the critical path and write without reading the destination:
 * a vectorised exp (range reduction to [-ln2/2, ln2/2] and a degree-6
 * polynomial, ~1e-7 relative error) and non-temporal stores when the
 * output is aligned. */
#include <stdint.h>
#include <immintrin.h>

typedef float v16 __attribute__((vector_size(64)));
typedef int32_t i16 __attribute__((vector_size(64)));
typedef float v16u __attribute__((vector_size(64), aligned(4)));

/* per-lane a where mask, else b (comparisons give all-ones lanes) */
static inline v16 sel(i16 mask, v16 a, v16 b)
{
    return (v16)((mask & (i16)a) | (~mask & (i16)b));
}

static inline v16 vexp(v16 y)
{
    const v16 zero = {0}, hi = zero + 88.0f, lo = zero - 87.0f;
    const v16 shifter = zero + 12582912.0f; /* 1.5 * 2^23: adding it rounds to an integer */
    y = sel(y > hi, hi, y);
    y = sel(y < lo, lo, y);
    v16 kf = (y * 1.44269504088896341f + shifter) - shifter;
    i16 k = __builtin_convertvector(kf, i16);
    /* r = y - k ln2, with ln2 split in two so r keeps its low bits */
    v16 r = y - kf * 0.693145751953125f - kf * 1.428606765330187045e-06f;
    v16 p = zero + 1.0f / 720;
    p = p * r + 1.0f / 120;
    p = p * r + 1.0f / 24;
    p = p * r + 1.0f / 6;
    p = p * r + 0.5f;
    p = p * r + 1.0f;
    p = p * r + 1.0f;
    return p * (v16)((k + 127) << 23); /* times 2^k, built in the exponent bits */
}

void kernel(const float *x, float *out, int M, int N)
{
    long n = (long)M * N, i = 0;
    int aligned = ((uintptr_t)out & 63) == 0;

    for (; i + 16 <= n; i += 16) {
        v16 v = *(const v16u *)(x + i);
        v16 s = v / (1.0f + vexp(-v));
#if defined(__AVX512F__)
        if (aligned) {
            _mm512_stream_ps(out + i, (__m512)s);
            continue;
        }
#endif
        *(v16u *)(out + i) = s;
    }
    for (; i < n; i++) {
        float v = x[i];
        v16 e = vexp((v16){0} - v); /* the tail: one lane's worth */
        out[i] = v / (1.0f + e[0]);
    }
#if defined(__AVX512F__)
    _mm_sfence();
#endif
    (void)aligned;
}
