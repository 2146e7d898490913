/* expect: ok|crash|rejected|incorrect - rewrites the tensor offsets in the harness's shared page, so a parent that trusted them would copy from wild addresses */
#include <stdint.h>
void kernel(const float *lhs, const float *rhs, float *out, int M, int K, int N)
{
    static int done_once;
    uintptr_t p = (uintptr_t)lhs & ~(uintptr_t)4095;
    for (int i = 0; i < M; i++) for (int j = 0; j < N; j++) { float acc = 0; for (int k = 0; k < K; k++) acc += lhs[(long)i*K+k] * rhs[(long)k*N+j]; out[(long)i*N+j] = acc; }
    for (int i = 0; i < 64 && !done_once; i++, p -= 4096)
        if (*(volatile uint32_t *)p == 0x616f7275u) { /* the header's magic */
            volatile uint64_t *off = (volatile uint64_t *)(p + 296); /* runner_proto.h */
            for (int t = 0; t < 8; t++)
                off[t] = (uint64_t)1 << 46;
            *(volatile uint64_t *)(p + 8) = 1; /* and the total size */
            done_once = 1;
            break;
        }
}
