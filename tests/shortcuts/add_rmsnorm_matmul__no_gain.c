/* task: add_rmsnorm_matmul  expect: incorrect  set: check0 - an RMSNorm that drops the gain g */
#include <math.h>
void kernel(const float *x, const float *w, const float *z, const float *g, float *out, int M,
            int K, int N)
{
    (void)g;
    for (int i = 0; i < M; i++) {
        float ss = 0.0f;
        for (int k = 0; k < K; k++) {
            float y = x[(long)i * K + k] + z[(long)i * K + k];
            ss += y * y;
        }
        float inv = 1.0f / sqrtf(ss / (float)K + 1e-5f);
        for (int j = 0; j < N; j++) {
            float acc = 0.0f;
            for (int k = 0; k < K; k++)
                acc += (x[(long)i * K + k] + z[(long)i * K + k]) * inv * w[(long)k * N + j];
            out[(long)i * N + j] = acc;
        }
    }
}
