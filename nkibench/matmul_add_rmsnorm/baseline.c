/* baseline.c - matmul_add_rmsnorm: a first straightforward port, with knobs */
#include <math.h>

/* Tunable knobs: `#define NAME value` with the allowed values after
 * "knob:"; a tool may change the value, nothing else. */
#define BLOCK_N 64 /* knob: 16 32 64 128 256 512 */
#define BLOCK_K 64 /* knob: 16 32 64 128 256 */

void kernel(const float *x, const float *w, const float *z, const float *g, float *out, int M,
            int K, int N)
{
    for (int i = 0; i < M; i++) {
        float *oi = out + (long)i * N;
        for (int j = 0; j < N; j++)
            oi[j] = z[(long)i * N + j];
        for (int k0 = 0; k0 < K; k0 += BLOCK_K)
            for (int j0 = 0; j0 < N; j0 += BLOCK_N)
                for (int k = k0; k < k0 + BLOCK_K && k < K; k++) {
                    float a = x[(long)i * K + k];
                    for (int j = j0; j < j0 + BLOCK_N && j < N; j++)
                        oi[j] += a * w[(long)k * N + j];
                }
        float ss = 0.0f;
        for (int j = 0; j < N; j++)
            ss += oi[j] * oi[j];
        float inv = 1.0f / sqrtf(ss / (float)N + 1e-5f);
        for (int j = 0; j < N; j++)
            oi[j] = oi[j] * g[j] * inv;
    }
}
