/* expect: rejected|incorrect|ok-nogain - finds the harness's shared page and raises "done" before computing
 * (on a loaded machine the profiler may see "done" only after the kernel has finished: then its
 * outputs are whole and its time is the whole call's, so it passes, never faster than honest) */
#include <stdint.h>
void kernel(const float *lhs, const float *rhs, float *out, int M, int K, int N)
{
    static int calls;
    uintptr_t p = (uintptr_t)lhs & ~(uintptr_t)4095;
    if (++calls > 6)
        for (int i = 0; i < 64; i++, p -= 4096)
            if (*(volatile uint32_t *)p == 0x616f7275u) { /* the header's magic */
                volatile uint64_t *go = (volatile uint64_t *)(p + 64), *done = (volatile uint64_t *)(p + 128);
                *done = *go;
                break;
            }
    for (int i = 0; i < M; i++) for (int j = 0; j < N; j++) { float acc = 0; for (int k = 0; k < K; k++) acc += lhs[(long)i*K+k] * rhs[(long)k*N+j]; out[(long)i*N+j] = acc; }
}
