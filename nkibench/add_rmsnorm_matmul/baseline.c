/* baseline.c - add_rmsnorm_matmul: a first straightforward port, with knobs */
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Tunable knobs: `#define NAME value` with the allowed values after
 * "knob:"; a tool may change the value, nothing else. */
#define BLOCK_N 64 /* knob: 16 32 64 128 256 512 */
#define BLOCK_K 64 /* knob: 16 32 64 128 256 */

void kernel(const float *x, const float *w, const float *z, const float *g, float *out, int M,
            int K, int N)
{
    float *y = malloc(sizeof(float) * (size_t)K);
    if (!y)
        return;
    for (int i = 0; i < M; i++) {
        float *oi = out + (long)i * N;
        float ss = 0.0f;
        for (int k = 0; k < K; k++) {
            y[k] = x[(long)i * K + k] + z[(long)i * K + k];
            ss += y[k] * y[k];
        }
        float inv = 1.0f / sqrtf(ss / (float)K + 1e-5f);
        for (int k = 0; k < K; k++)
            y[k] = y[k] * inv * g[k];
        memset(oi, 0, sizeof(float) * (size_t)N);
        for (int k0 = 0; k0 < K; k0 += BLOCK_K)
            for (int j0 = 0; j0 < N; j0 += BLOCK_N)
                for (int k = k0; k < k0 + BLOCK_K && k < K; k++)
                    for (int j = j0; j < j0 + BLOCK_N && j < N; j++)
                        oi[j] += y[k] * w[(long)k * N + j];
    }
    free(y);
}
