/* reference.c - adamw, trusted: one element at a time, in double */
#include <math.h>

void kernel(const float *theta, const float *grad, const float *m, const float *v, float *out,
            int R, int C)
{
    long n = (long)R * C;
    for (long i = 0; i < n; i++) {
        double t1 = (double)theta[i] - 1e-5 * theta[i];
        double m1 = 0.9 * m[i] + 0.1 * grad[i];
        double v1 = 0.999 * v[i] + 0.001 * (double)grad[i] * grad[i];
        out[i] = (float)(t1 - 0.01 * m1 / (sqrt(1000.0 * v1) + 1e-8));
    }
}
