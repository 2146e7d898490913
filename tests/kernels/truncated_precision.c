/* expect: incorrect - drops mantissa bits of the inputs (a 16-bit brain float in disguise) */
#include <string.h>
#include <stdint.h>
static float chop(float x) { uint32_t u; memcpy(&u, &x, 4); u &= 0xffff0000u; memcpy(&x, &u, 4); return x; }
void kernel(const float *lhs, const float *rhs, float *out, int M, int K, int N)
{
    for (int i = 0; i < M; i++) for (int j = 0; j < N; j++) {
        float acc = 0;
        for (int k = 0; k < K; k++) acc += chop(lhs[(long)i*K+k]) * chop(rhs[(long)k*N+j]);
        out[(long)i*N+j] = acc;
    }
}
