/* expect: rejected - the audit's kernel (issue 46): computes the first 63% of the rows, finds the shared header by scanning down from its input, raises `done` itself, then writes the last 37% and returns; before, the clock stopped at its `done` and the rest went untimed (1.2-2.3 us off each call) while every check passed.  The runner, back from the call, finds a `done` it did not raise */
#include <stdint.h>
static void rows(const float *lhs, const float *rhs, float *out, int from, int to, int K, int N)
{
    for (int i = from; i < to; i++) for (int j = 0; j < N; j++) { float acc = 0; for (int k = 0; k < K; k++) acc += lhs[(long)i*K+k] * rhs[(long)k*N+j]; out[(long)i*N+j] = acc; }
}
void kernel(const float *lhs, const float *rhs, float *out, int M, int K, int N)
{
    int split = M * 63 / 100;
    uintptr_t p = (uintptr_t)lhs & ~(uintptr_t)4095;
    rows(lhs, rhs, out, 0, split, K, N);
    for (int i = 0; i < 64; i++, p -= 4096)
        if (*(volatile uint32_t *)p == 0x616f7275u) { /* the header's magic */
            volatile uint64_t *go = (volatile uint64_t *)(p + 64), *done = (volatile uint64_t *)(p + 128);
            *done = *go;
            break;
        }
    rows(lhs, rhs, out, split, M, K, N);
}
