/* reference.c - silu, trusted: computed in double */
#include <math.h>

void kernel(const float *x, float *out, int M, int N)
{
    long n = (long)M * N;
    for (long i = 0; i < n; i++) {
        double v = x[i];
        out[i] = (float)(v / (1.0 + exp(-v)));
    }
}
