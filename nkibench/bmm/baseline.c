/* baseline.c - bmm: a first straightforward port, with knobs */
#include <string.h>

/* Tunable knobs: `#define NAME value` with the allowed values after
 * "knob:"; a tool may change the value, nothing else. */
#define BLOCK_M 16   /* knob: 4 8 16 32 64 */
#define BLOCK_N 256  /* knob: 64 128 256 512 1024 */
#define LOOP_ORDER 0 /* knob: 0 1 (0: i-k-j inner loops, 1: i-j-k inner loops) */

static int min_int(int a, int b) { return a < b ? a : b; }

void kernel(const float *lhs, const float *rhs, float *out, int B, int M, int K, int N)
{
    for (int b = 0; b < B; b++) {
        const float *l = lhs + (long)b * M * K, *r = rhs + (long)b * K * N;
        float *o = out + (long)b * M * N;
        for (int i0 = 0; i0 < M; i0 += BLOCK_M)
            for (int j0 = 0; j0 < N; j0 += BLOCK_N) {
                int i1 = min_int(i0 + BLOCK_M, M), j1 = min_int(j0 + BLOCK_N, N);
                for (int i = i0; i < i1; i++) {
#if LOOP_ORDER == 0
                    memset(o + (long)i * N + j0, 0, sizeof(float) * (size_t)(j1 - j0));
                    for (int k = 0; k < K; k++) {
                        float a = l[(long)i * K + k];
                        for (int j = j0; j < j1; j++)
                            o[(long)i * N + j] += a * r[(long)k * N + j];
                    }
#else
                    for (int j = j0; j < j1; j++) {
                        float acc = 0.0f;
                        for (int k = 0; k < K; k++)
                            acc += l[(long)i * K + k] * r[(long)k * N + j];
                        o[(long)i * N + j] = acc;
                    }
#endif
                }
            }
    }
}
