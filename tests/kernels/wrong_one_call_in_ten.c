/* expect: incorrect|rejected - honest, but on every tenth call with new inputs it computes only the first half of the rows and leaves the rest at zero (issue 66: with six of the timed calls checked whole it passed about half the time; every timed call is now checked at secret positions) */
#include <string.h>
static int fresh;
static float last0, last1;
void kernel(const float *lhs, const float *rhs, float *out, int M, int K, int N)
{
    int rows = M;
    if (lhs[0] != last0 || lhs[1] != last1)
        fresh++;
    last0 = lhs[0];
    last1 = lhs[1];
    if (fresh % 10 == 0) {
        rows = M / 2;
        memset(out + (long)rows * N, 0, sizeof(float) * (size_t)(M - rows) * (size_t)N);
    }
    for (int i = 0; i < rows; i++) for (int j = 0; j < N; j++) { float acc = 0; for (int k = 0; k < K; k++) acc += lhs[(long)i*K+k] * rhs[(long)k*N+j]; out[(long)i*N+j] = acc; }
}
