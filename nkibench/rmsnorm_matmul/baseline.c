/* baseline.c - rmsnorm_matmul: a first straightforward port, with knobs */
#include <math.h>
#include <string.h>

/* Tunable knobs: `#define NAME value` with the allowed values after
 * "knob:"; a tool may change the value, nothing else. */
#define BLOCK_N 64   /* knob: 16 32 64 128 256 512 */
#define BLOCK_K 64   /* knob: 16 32 64 128 256 */
#define NORM_FIRST 1 /* knob: 0 1 (1: scale x then multiply; 0: multiply then scale rows) */

void kernel(const float *x, const float *w, float *out, int M, int K, int N)
{
    for (int i = 0; i < M; i++) {
        const float *xi = x + (long)i * K;
        float *oi = out + (long)i * N;
        float ss = 0.0f;
        for (int k = 0; k < K; k++)
            ss += xi[k] * xi[k];
        float inv = 1.0f / sqrtf(ss / (float)K);
        memset(oi, 0, sizeof(float) * (size_t)N);
        for (int k0 = 0; k0 < K; k0 += BLOCK_K)
            for (int j0 = 0; j0 < N; j0 += BLOCK_N)
                for (int k = k0; k < k0 + BLOCK_K && k < K; k++) {
#if NORM_FIRST
                    float a = xi[k] * inv;
#else
                    float a = xi[k];
#endif
                    for (int j = j0; j < j0 + BLOCK_N && j < N; j++)
                        oi[j] += a * w[(long)k * N + j];
                }
#if !NORM_FIRST
        for (int j = 0; j < N; j++)
            oi[j] *= inv;
#endif
    }
}
