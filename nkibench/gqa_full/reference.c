/* reference.c - gqa_full, trusted: scores and weighted sums in double */
#include <math.h>
#include <stdlib.h>

void kernel(const float *q, const float *k, const float *v, float *out, int B, int N, int H,
            int D, int KH)
{
    double *s = malloc(sizeof(double) * (size_t)N), *acc = malloc(sizeof(double) * (size_t)D);
    double scale = 1.0 / sqrt((double)D);
    if (!s || !acc)
        abort();
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++) {
            int kh = h / (H / KH); /* H / KH query heads share a kv head */
            for (int i = 0; i < N; i++) {
                const float *qi = q + (((long)b * N + i) * H + h) * D;
                double mx = -INFINITY, sum = 0.0;
                for (int j = 0; j < N; j++) {
                    const float *kj = k + (((long)b * N + j) * KH + kh) * D;
                    double dot = 0.0;
                    for (int d = 0; d < D; d++)
                        dot += (double)qi[d] * kj[d];
                    s[j] = dot * scale;
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
}
