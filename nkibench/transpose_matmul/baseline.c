/* baseline.c - transpose_matmul: a first straightforward port, with knobs */
#include <string.h>

/* Tunable knobs: `#define NAME value` with the allowed values after
 * "knob:"; a tool may change the value, nothing else. */
#define BLOCK_M 16 /* knob: 4 8 16 32 64 128 */
#define BLOCK_N 64 /* knob: 16 32 64 128 256 512 */
#define BLOCK_K 64 /* knob: 16 32 64 128 256 */

static int min_int(int a, int b) { return a < b ? a : b; }

void kernel(const float *lhs, const float *rhs, float *out, int K, int M, int N)
{
    memset(out, 0, sizeof(float) * (size_t)M * (size_t)N);
    for (int i0 = 0; i0 < M; i0 += BLOCK_M)
        for (int k0 = 0; k0 < K; k0 += BLOCK_K)
            for (int j0 = 0; j0 < N; j0 += BLOCK_N) {
                int i1 = min_int(i0 + BLOCK_M, M), k1 = min_int(k0 + BLOCK_K, K);
                int j1 = min_int(j0 + BLOCK_N, N);
                for (int i = i0; i < i1; i++)
                    for (int k = k0; k < k1; k++) {
                        float a = lhs[(long)k * M + i];
                        for (int j = j0; j < j1; j++)
                            out[(long)i * N + j] += a * rhs[(long)k * N + j];
                    }
            }
}
