/* expect: ok - several system headers, static asserts, typedefs, macros, math */
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <float.h>
_Static_assert(sizeof(float) == 4, "float32");
typedef float f32;
#define IDX(r, c, ld) ((int64_t)(r) * (ld) + (c))
void kernel(const float *lhs, const float *rhs, float *out, int M, int K, int N)
{
    memset(out, 0, sizeof(f32) * (size_t)M * N);
    for (int i = 0; i < M; i++)
        for (int k = 0; k < K; k++) {
            f32 a = lhs[IDX(i, k, K)];
            if (fabsf(a) < FLT_MIN && a != 0)
                a = 0; /* flush denormals */
            for (int j = 0; j < N; j++)
                out[IDX(i, j, N)] = fmaf(a, rhs[IDX(k, j, N)], out[IDX(i, j, N)]);
        }
}
