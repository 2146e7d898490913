/* baseline.c - mamba: a first straightforward port, with knobs */
#include <math.h>
#include <string.h>

/* Tunable knobs: `#define NAME value` with the allowed values after
 * "knob:"; a tool may change the value, nothing else. */
#define CHANNEL_BLOCK 1 /* knob: 1 2 4 8 (channels scanned side by side) */
#define STATE_OUTER 1   /* knob: 0 1 (1: one state at a time over the sequence; 0: all states per step) */
#define MAX_S 64

void kernel(const float *delta, const float *u, const float *a, const float *b, const float *c,
            float *out, int C, int M, int S)
{
    for (int c0 = 0; c0 < C; c0 += CHANNEL_BLOCK) {
        int nc = C - c0 < CHANNEL_BLOCK ? C - c0 : CHANNEL_BLOCK;
        memset(out + (long)c0 * M, 0, sizeof(float) * (size_t)nc * (size_t)M);
#if STATE_OUTER
        for (int s = 0; s < S; s++) {
            float h[CHANNEL_BLOCK] = {0};
            for (int m = 0; m < M; m++)
                for (int r = 0; r < nc; r++) {
                    long i = (long)(c0 + r) * M + m;
                    float dt = delta[i];
                    h[r] = expf(dt * a[(long)(c0 + r) * S + s]) * h[r] + dt * b[(long)s * M + m] * u[i];
                    out[i] += c[(long)s * M + m] * h[r];
                }
        }
#else
        float h[CHANNEL_BLOCK][MAX_S] = {{0}};
        if (S > MAX_S)
            return;
        for (int m = 0; m < M; m++)
            for (int r = 0; r < nc; r++) {
                long i = (long)(c0 + r) * M + m;
                float dt = delta[i], acc = 0.0f;
                for (int s = 0; s < S; s++) {
                    h[r][s] = expf(dt * a[(long)(c0 + r) * S + s]) * h[r][s] + dt * b[(long)s * M + m] * u[i];
                    acc += c[(long)s * M + m] * h[r][s];
                }
                out[i] = acc;
            }
#endif
    }
}
