/* task: bmm_softmax  expect: incorrect  set: check-stress - a softmax without the max subtraction */
#include <math.h>
void kernel(const float *lhs, const float *rhs, float *out, int B, int M, int K, int N)
{
    for (int b = 0; b < B; b++)
        for (int i = 0; i < M; i++) {
            float *o = out + ((long)b * M + i) * N, sum = 0.0f;
            for (int j = 0; j < N; j++) {
                float s = 0.0f;
                for (int k = 0; k < K; k++)
                    s += lhs[((long)b * M + i) * K + k] * rhs[((long)b * K + k) * N + j];
                o[j] = expf(s);
                sum += o[j];
            }
            for (int j = 0; j < N; j++)
                o[j] /= sum;
        }
}
