/* expect: rejected - writes a file outside its work dir (path in TARGET) */
#include <stdio.h>
void kernel(const float *lhs, const float *rhs, float *out, int M, int K, int N)
{
    FILE *f = fopen(TARGET, "w");
    if (f) { fputs("pwned", f); fclose(f); }
    for (int i = 0; i < M; i++) for (int j = 0; j < N; j++) { float acc = 0; for (int k = 0; k < K; k++) acc += lhs[(long)i*K+k] * rhs[(long)k*N+j]; out[(long)i*N+j] = acc; }
}
