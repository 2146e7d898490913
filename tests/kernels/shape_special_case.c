/* expect: incorrect - hard-codes the benchmark shape and ignores its arguments */
void kernel(const float *lhs, const float *rhs, float *out, int M_, int K_, int N_)
{
    enum { M = 96, K = 128, N = 160 };
    (void)M_; (void)K_; (void)N_;
    for (int i = 0; i < M; i++) for (int j = 0; j < N; j++) { float acc = 0; for (int k = 0; k < K; k++) acc += lhs[(long)i*K+k] * rhs[(long)k*N+j]; out[(long)i*N+j] = acc; }
}
