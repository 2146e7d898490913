/* baseline.c - gqa_full: a first straightforward port, with knobs */
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Tunable knobs: `#define NAME value` with the allowed values after
 * "knob:"; a tool may change the value, nothing else. */
#define QUERY_BLOCK 4 /* knob: 1 2 4 8 16 (queries sharing one pass over k and v) */
#define RECIPROCAL 0  /* knob: 0 1 (1: multiply by 1/sum instead of dividing) */

void kernel(const float *q, const float *k, const float *v, float *out, int B, int N, int H,
            int D, int KH)
{
    float *s = malloc(sizeof(float) * (size_t)QUERY_BLOCK * (size_t)N);
    float scale = 1.0f / sqrtf((float)D);
    if (!s)
        return;
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++) {
            int kh = h / (H / KH); /* H / KH query heads share a kv head */
            for (int i0 = 0; i0 < N; i0 += QUERY_BLOCK) {
                int nq = N - i0 < QUERY_BLOCK ? N - i0 : QUERY_BLOCK;
                for (int j = 0; j < N; j++) {
                    const float *kj = k + (((long)b * N + j) * KH + kh) * D;
                    for (int r = 0; r < nq; r++) {
                        const float *qi = q + (((long)b * N + i0 + r) * H + h) * D;
                        float dot = 0.0f;
                        for (int d = 0; d < D; d++)
                            dot += qi[d] * kj[d];
                        s[(long)r * N + j] = dot * scale;
                    }
                }
                for (int r = 0; r < nq; r++) {
                    float *sr = s + (long)r * N, mx = sr[0], sum = 0.0f;
                    float *o = out + (((long)b * H + h) * N + i0 + r) * D;
                    for (int j = 1; j < N; j++)
                        mx = sr[j] > mx ? sr[j] : mx;
                    for (int j = 0; j < N; j++) {
                        sr[j] = expf(sr[j] - mx);
                        sum += sr[j];
                    }
                    memset(o, 0, sizeof(float) * (size_t)D);
                    for (int j = 0; j < N; j++) {
                        const float *vj = v + (((long)b * N + j) * KH + kh) * D;
                        for (int d = 0; d < D; d++)
                            o[d] += sr[j] * vj[d];
                    }
#if RECIPROCAL
                    float inv = 1.0f / sum;
                    for (int d = 0; d < D; d++)
                        o[d] *= inv;
#else
                    for (int d = 0; d < D; d++)
                        o[d] /= sum;
#endif
                }
            }
        }
    free(s);
}
