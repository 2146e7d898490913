/* reference.c - gqa_full, trusted: scores and weighted sums in double.
 * Each score's sum over d runs in ascending order, as one dot product at
 * a time makes it, but for a whole row of keys at once (the keys of the
 * head transposed first), so the sums vectorize across keys: a dot
 * product's chain of dependent adds made the reference 5x the kernel's
 * time, and its checks half of a profile's (issue 53). */
#include <math.h>
#include <stdlib.h>

void kernel(const float *q, const float *k, const float *v, float *out, int B, int N, int H,
            int D, int KH)
{
    double *s = malloc(sizeof(double) * (size_t)N), *acc = malloc(sizeof(double) * (size_t)D);
    float *kt = malloc(sizeof(float) * (size_t)N * (size_t)D);
    double scale = 1.0 / sqrt((double)D);
    if (!s || !acc || !kt)
        abort();
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++) {
            int kh = h / (H / KH); /* H / KH query heads share a kv head */
            for (int j = 0; j < N; j++)
                for (int d = 0; d < D; d++)
                    kt[(long)d * N + j] = k[(((long)b * N + j) * KH + kh) * D + d];
            for (int i = 0; i < N; i++) {
                const float *qi = q + (((long)b * N + i) * H + h) * D;
                double mx = -INFINITY, sum = 0.0;
                for (int j = 0; j < N; j++)
                    s[j] = 0.0;
                for (int d = 0; d < D; d++) {
                    double a = qi[d];
                    const float *kd = kt + (long)d * N;
                    for (int j = 0; j < N; j++)
                        s[j] += a * (double)kd[j];
                }
                for (int j = 0; j < N; j++) {
                    s[j] = s[j] * scale;
                    mx = s[j] > mx ? s[j] : mx;
                }
                for (int d = 0; d < D; d++)
                    acc[d] = 0.0;
                for (int j = 0; j < N; j++) {
                    const float *vj = v + (((long)b * N + j) * KH + kh) * D;
                    double p = exp(s[j] - mx);
                    sum += p;
                    for (int d = 0; d < D; d++)
                        acc[d] += p * vj[d];
                }
                for (int d = 0; d < D; d++)
                    out[(((long)b * H + h) * N + i) * D + d] = (float)(acc[d] / sum);
            }
        }
    free(s);
    free(acc);
    free(kt);
}
