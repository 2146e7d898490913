/* expect: crash|incorrect - allocates and touches 4 GiB */
#include <stdlib.h>
void kernel(const float *lhs, const float *rhs, float *out, int M, int K, int N)
{
    size_t n = (size_t)4 << 30;
    volatile char *p = malloc(n);
    float sum = 0;
    for (size_t i = 0; i < n; i += 4096) {
        p[i] = 1;
        sum += p[i];
    }
    (void)lhs; (void)rhs; (void)K;
    for (long i = 0; i < (long)M * N; i++)
        out[i] = sum;
}
