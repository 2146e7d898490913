/* expect: rejected - finds the harness's shared page and raises "done" before computing, from its
 * seventh call on: the runner, back from the call, finds a `done` it did not raise (issue 46; before,
 * a loaded machine could pass it, its outputs whole by the time they were read) */
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
