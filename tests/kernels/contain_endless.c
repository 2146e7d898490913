/* expect: timeout - never returns */
void kernel(const float *lhs, const float *rhs, float *out, int M, int K, int N)
{
    volatile int spin = 1;
    while (spin)
        ;
    for (int i = 0; i < M; i++) for (int j = 0; j < N; j++) { float acc = 0; for (int k = 0; k < K; k++) acc += lhs[(long)i*K+k] * rhs[(long)k*N+j]; out[(long)i*N+j] = acc; }
}
