/* expect: rejected - an IFUNC resolver runs at load time, before the sandbox is locked */
void kernel(const float *lhs, const float *rhs, float *out, int M, int K, int N);
static void real(const float *lhs, const float *rhs, float *out, int M, int K, int N)
{
    for (int i = 0; i < M; i++) for (int j = 0; j < N; j++) { float acc = 0; for (int k = 0; k < K; k++) acc += lhs[(long)i*K+k] * rhs[(long)k*N+j]; out[(long)i*N+j] = acc; }
}
static void *resolve(void) { return (void *)real; }
void kernel(const float *lhs, const float *rhs, float *out, int M, int K, int N)
    __attribute__((ifunc("resolve")));
