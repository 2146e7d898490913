/* reference.c - bmm_softmax, trusted: scores in double (each one's sum
 * over k in ascending order, as the textbook loop makes it, in i-k-j
 * order so rhs streams through memory), max-subtracted softmax */
#include <math.h>
#include <stdlib.h>

void kernel(const float *lhs, const float *rhs, float *out, int B, int M, int K, int N)
{
    double *s = malloc(sizeof(double) * (size_t)N);
    if (!s)
        abort();
    for (int b = 0; b < B; b++)
        for (int i = 0; i < M; i++) {
            const float *l = lhs + ((long)b * M + i) * K;
            double mx = -INFINITY, sum = 0.0;
            for (int j = 0; j < N; j++)
                s[j] = 0.0;
            for (int k = 0; k < K; k++) {
                double a = l[k];
                const float *r = rhs + ((long)b * K + k) * N;
                for (int j = 0; j < N; j++)
                    s[j] += a * (double)r[j];
            }
            for (int j = 0; j < N; j++)
                mx = s[j] > mx ? s[j] : mx;
            for (int j = 0; j < N; j++) {
                s[j] = exp(s[j] - mx);
                sum += s[j];
            }
            for (int j = 0; j < N; j++)
                out[((long)b * M + i) * N + j] = (float)(s[j] / sum);
        }
    free(s);
}
