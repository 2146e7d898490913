/* baseline.c - lora: a first straightforward port, with knobs */
#include <stdlib.h>
#include <string.h>

/* Tunable knobs: `#define NAME value` with the allowed values after
 * "knob:"; a tool may change the value, nothing else. */
#define BLOCK_N 64 /* knob: 16 32 64 128 256 512 */
#define BLOCK_K 64 /* knob: 16 32 64 128 256 */

void kernel(const float *x, const float *w, const float *a, const float *b, float *out, int M,
            int K, int N, int R)
{
    float *xa = malloc(sizeof(float) * (size_t)R);
    if (!xa)
        return;
    for (int i = 0; i < M; i++) {
        const float *xi = x + (long)i * K;
        float *oi = out + (long)i * N;
        memset(oi, 0, sizeof(float) * (size_t)N);
        for (int k0 = 0; k0 < K; k0 += BLOCK_K)
            for (int j0 = 0; j0 < N; j0 += BLOCK_N)
                for (int k = k0; k < k0 + BLOCK_K && k < K; k++)
                    for (int j = j0; j < j0 + BLOCK_N && j < N; j++)
                        oi[j] += xi[k] * w[(long)k * N + j];
        /* the adapter: x @ a first (rank R), then @ b */
        memset(xa, 0, sizeof(float) * (size_t)R);
        for (int k = 0; k < K; k++)
            for (int r = 0; r < R; r++)
                xa[r] += xi[k] * a[(long)k * R + r];
        for (int r = 0; r < R; r++)
            for (int j = 0; j < N; j++)
                oi[j] += xa[r] * b[(long)r * N + j];
    }
    free(xa);
}
