/* baseline.c - bmm_softmax: a first straightforward port, with knobs */
#include <math.h>
#include <string.h>

/* Tunable knobs: `#define NAME value` with the allowed values after
 * "knob:"; a tool may change the value, nothing else. */
#define BLOCK_N 256      /* knob: 64 128 256 512 1024 */
#define RECIPROCAL 0     /* knob: 0 1 (1: multiply by 1/sum instead of dividing) */

void kernel(const float *lhs, const float *rhs, float *out, int B, int M, int K, int N)
{
    for (int b = 0; b < B; b++)
        for (int i = 0; i < M; i++) {
            const float *l = lhs + ((long)b * M + i) * K, *r = rhs + (long)b * K * N;
            float *o = out + ((long)b * M + i) * N;
            memset(o, 0, sizeof(float) * (size_t)N);
            for (int j0 = 0; j0 < N; j0 += BLOCK_N)
                for (int k = 0; k < K; k++)
                    for (int j = j0; j < j0 + BLOCK_N && j < N; j++)
                        o[j] += l[k] * r[(long)k * N + j];
            float mx = o[0], sum = 0.0f;
            for (int j = 1; j < N; j++)
                mx = o[j] > mx ? o[j] : mx;
            for (int j = 0; j < N; j++) {
                o[j] = expf(o[j] - mx);
                sum += o[j];
            }
#if RECIPROCAL
            float inv = 1.0f / sum;
            for (int j = 0; j < N; j++)
                o[j] *= inv;
#else
            for (int j = 0; j < N; j++)
                o[j] /= sum;
#endif
        }
}
