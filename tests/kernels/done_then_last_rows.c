/* expect: rejected - the audit's kernel (issue 46): computes every row into a scratch buffer and copies the first 63% out, finds the shared header by scanning down from its input, raises `done` itself, then copies the last 37% and returns.  Before, the clock stopped at its `done` and the copy (1-2 us) went untimed while every check passed.  The runner, back from the call, finds a `done` it did not raise */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
static float *scratch;
static size_t cap;
void kernel(const float *lhs, const float *rhs, float *out, int M, int K, int N)
{
    size_t n = (size_t)M * N, split = n * 63 / 100;
    uintptr_t p = (uintptr_t)lhs & ~(uintptr_t)4095;
    if (n > cap) {
        free(scratch);
        scratch = malloc(n * sizeof *scratch);
        cap = n;
    }
    for (int i = 0; i < M; i++) for (int j = 0; j < N; j++) { float acc = 0; for (int k = 0; k < K; k++) acc += lhs[(long)i*K+k] * rhs[(long)k*N+j]; scratch[(long)i*N+j] = acc; }
    memcpy(out, scratch, split * sizeof *out);
    for (int i = 0; i < 64; i++, p -= 4096)
        if (*(volatile uint32_t *)p == 0x616f7275u) { /* the header's magic */
            volatile uint64_t *go = (volatile uint64_t *)(p + 64), *done = (volatile uint64_t *)(p + 128);
            *done = *go;
            break;
        }
    memcpy(out + split, scratch + split, (n - split) * sizeof *out);
}
