/* task: gqa_full  expect: incorrect  set: check0 - query head h reads kv head h % KH instead of h / (H / KH) */
#include <math.h>
#include <stdlib.h>
void kernel(const float *q, const float *k, const float *v, float *out, int B, int N, int H,
            int D, int KH)
{
    float *p = malloc(sizeof(float) * (size_t)N);
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++)
            for (int i = 0; i < N; i++) {
                int kh = h % KH;
                const float *qi = q + (((long)b * N + i) * H + h) * D;
                float mx = -INFINITY, sum = 0.0f, *o = out + (((long)b * H + h) * N + i) * D;
                for (int j = 0; j < N; j++) {
                    const float *kj = k + (((long)b * N + j) * KH + kh) * D;
                    float s = 0.0f;
                    for (int d = 0; d < D; d++)
                        s += qi[d] * kj[d];
                    p[j] = s / sqrtf((float)D);
                    mx = p[j] > mx ? p[j] : mx;
                }
                for (int j = 0; j < N; j++) {
                    p[j] = expf(p[j] - mx);
                    sum += p[j];
                }
                for (int d = 0; d < D; d++) {
                    float acc = 0.0f;
                    for (int j = 0; j < N; j++)
                        acc += p[j] * v[(((long)b * N + j) * KH + kh) * D + d];
                    o[d] = acc / sum;
                }
            }
    free(p);
}
