/* task: adamw  expect: incorrect  set: check0 - an AdamW step that drops the weight decay (1e-5 relative) */
#include <math.h>
void kernel(const float *theta, const float *grad, const float *m, const float *v, float *out,
            int R, int C)
{
    for (long i = 0; i < (long)R * C; i++) {
        float m1 = 0.9f * m[i] + 0.1f * grad[i];
        float v1 = 0.999f * v[i] + 0.001f * grad[i] * grad[i];
        out[i] = theta[i] - 0.01f * m1 / (sqrtf(1000.0f * v1) + 1e-8f);
    }
}
