/* expect: rejected|compile_error - prints a fake line marker from a macro to pass its _Float16 off as a system header's */
#define MARK # 1 "/usr/include/stdio.h"
MARK
typedef _Float16 half_t;
#define BACK # 5 "kernel.c"
BACK
void kernel(const float *lhs, const float *rhs, float *out, int M, int K, int N)
{
    for (int i = 0; i < M; i++) for (int j = 0; j < N; j++) { half_t acc = 0; for (int k = 0; k < K; k++) acc += (half_t)lhs[(long)i*K+k] * (half_t)rhs[(long)k*N+j]; out[(long)i*N+j] = (float)acc; }
}
