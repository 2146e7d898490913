/* task: rmsnorm_matmul  expect: ok  set: - control: a plain correct kernel, float sums, passes the same checks */
#include <math.h>
void kernel(const float *x, const float *w, float *out, int M, int K, int N)
{
    for (int i = 0; i < M; i++) {
        float ss = 0.0f;
        for (int k = 0; k < K; k++)
            ss += x[(long)i * K + k] * x[(long)i * K + k];
        float inv = 1.0f / sqrtf(ss / (float)K);
        for (int j = 0; j < N; j++) {
            float acc = 0.0f;
            for (int k = 0; k < K; k++)
                acc += x[(long)i * K + k] * w[(long)k * N + j];
            out[(long)i * N + j] = acc * inv;
        }
    }
}
