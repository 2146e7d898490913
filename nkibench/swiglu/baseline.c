/* baseline.c - swiglu: a first straightforward port, with knobs */
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Tunable knobs: `#define NAME value` with the allowed values after
 * "knob:"; a tool may change the value, nothing else. */
#define BLOCK_F 128   /* knob: 32 64 128 256 512 */
#define FUSE_UP_GATE 1 /* knob: 0 1 (1: one pass over x computes both projections) */

void kernel(const float *x, const float *w_up, const float *w_gate, const float *w_down,
            float *out, int M, int D, int F)
{
    float *up = malloc(sizeof(float) * (size_t)F), *gate = malloc(sizeof(float) * (size_t)F);
    if (!up || !gate) {
        free(up);
        return;
    }
    for (int i = 0; i < M; i++) {
        const float *xi = x + (long)i * D;
        float *oi = out + (long)i * D;
        memset(up, 0, sizeof(float) * (size_t)F);
        memset(gate, 0, sizeof(float) * (size_t)F);
        for (int f0 = 0; f0 < F; f0 += BLOCK_F) {
            int f1 = f0 + BLOCK_F < F ? f0 + BLOCK_F : F;
#if FUSE_UP_GATE
            for (int d = 0; d < D; d++)
                for (int f = f0; f < f1; f++) {
                    up[f] += xi[d] * w_up[(long)d * F + f];
                    gate[f] += xi[d] * w_gate[(long)d * F + f];
                }
#else
            for (int d = 0; d < D; d++)
                for (int f = f0; f < f1; f++)
                    up[f] += xi[d] * w_up[(long)d * F + f];
            for (int d = 0; d < D; d++)
                for (int f = f0; f < f1; f++)
                    gate[f] += xi[d] * w_gate[(long)d * F + f];
#endif
        }
        for (int f = 0; f < F; f++)
            up[f] *= gate[f] / (1.0f + expf(-gate[f]));
        memset(oi, 0, sizeof(float) * (size_t)D);
        for (int f = 0; f < F; f++)
            for (int d = 0; d < D; d++)
                oi[d] += up[f] * w_down[(long)f * D + d];
    }
    free(up);
    free(gate);
}
