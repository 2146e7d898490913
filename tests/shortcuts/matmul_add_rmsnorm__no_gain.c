/* task: matmul_add_rmsnorm  expect: incorrect  set: check0 - an RMSNorm that drops the gain g */
#include <math.h>
void kernel(const float *x, const float *w, const float *z, const float *g, float *out, int M,
            int K, int N)
{
    (void)g;
    for (int i = 0; i < M; i++) {
        float *o = out + (long)i * N, ss = 0.0f;
        for (int j = 0; j < N; j++) {
            float acc = z[(long)i * N + j];
            for (int k = 0; k < K; k++)
                acc += x[(long)i * K + k] * w[(long)k * N + j];
            o[j] = acc;
            ss += acc * acc;
        }
        float inv = 1.0f / sqrtf(ss / (float)N + 1e-5f);
        for (int j = 0; j < N; j++)
            o[j] *= inv;
    }
}
