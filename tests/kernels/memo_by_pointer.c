/* expect: ok-nogain - caches its output by input address; addresses never repeat, so it never hits */
#include <stdlib.h>
#include <string.h>
static const float *seen;
static float *saved;
void kernel(const float *lhs, const float *rhs, float *out, int M, int K, int N)
{
    size_t n = (size_t)M * N;
    if (lhs == seen && saved) {
        memcpy(out, saved, n * sizeof(float));
        return;
    }
    for (int i = 0; i < M; i++) for (int j = 0; j < N; j++) { float acc = 0; for (int k = 0; k < K; k++) acc += lhs[(long)i*K+k] * rhs[(long)k*N+j]; out[(long)i*N+j] = acc; }
    free(saved);
    saved = malloc(n * sizeof(float));
    memcpy(saved, out, n * sizeof(float));
    seen = lhs;
}
