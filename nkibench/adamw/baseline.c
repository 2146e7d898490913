/* baseline.c - adamw: a first straightforward port, with knobs */
#include <math.h>

/* Tunable knobs: `#define NAME value` with the allowed values after
 * "knob:"; a tool may change the value, nothing else. */
#define UNROLL 1      /* knob: 1 2 4 8 */
#define FUSED_SCALE 0 /* knob: 0 1 (1: sqrt(1000*v) computed as sqrt(1000)*sqrt(v)) */

static float step(float t, float g, float m, float v)
{
    float t1 = t - 1e-5f * t;
    float m1 = 0.9f * m + 0.1f * g;
    float v1 = 0.999f * v + 0.001f * g * g;
#if FUSED_SCALE
    float den = 31.6227766f * sqrtf(v1) + 1e-8f;
#else
    float den = sqrtf(1000.0f * v1) + 1e-8f;
#endif
    return t1 - 0.01f * m1 / den;
}

void kernel(const float *theta, const float *grad, const float *m, const float *v, float *out,
            int R, int C)
{
    long n = (long)R * C, i = 0;
    for (; i + UNROLL <= n; i += UNROLL)
        for (int u = 0; u < UNROLL; u++)
            out[i + u] = step(theta[i + u], grad[i + u], m[i + u], v[i + u]);
    for (; i < n; i++)
        out[i] = step(theta[i], grad[i], m[i], v[i]);
}
