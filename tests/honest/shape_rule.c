/* expect: ok - the check shapes are the ones the problem states (issue 55):
 * at the tiny size (M=96 K=128 N=160) every call, the unannounced shape's
 * included, has each size between half the timed one and the timed one,
 * never zero; a shape outside that traps.  42-honest profiles it at tiny. */
#include <string.h>
void kernel(const float *lhs, const float *rhs, float *out, int M, int K, int N)
{
    if (M < 48 || M > 96 || K < 64 || K > 128 || N < 80 || N > 160)
        __builtin_trap();
    memset(out, 0, sizeof(float) * (size_t)M * (size_t)N);
    for (int i = 0; i < M; i++)
        for (int k = 0; k < K; k++) {
            float a = lhs[(long)i * K + k];
            for (int j = 0; j < N; j++)
                out[(long)i * N + j] += a * rhs[(long)k * N + j];
        }
}
