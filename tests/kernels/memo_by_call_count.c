/* expect: rejected|incorrect - honest for its first seven calls, then replays its last output: refused by the sampled timed calls, or by the check sets where they come after them (issue 56) */
#include <stdlib.h>
#include <string.h>
static int calls;
static float *saved;
void kernel(const float *lhs, const float *rhs, float *out, int M, int K, int N)
{
    size_t n = (size_t)M * N;
    if (++calls > 7 && saved) {
        memcpy(out, saved, n * sizeof(float));
        return;
    }
    for (int i = 0; i < M; i++) for (int j = 0; j < N; j++) { float acc = 0; for (int k = 0; k < K; k++) acc += lhs[(long)i*K+k] * rhs[(long)k*N+j]; out[(long)i*N+j] = acc; }
    free(saved);
    saved = malloc(n * sizeof(float));
    memcpy(saved, out, n * sizeof(float));
}
