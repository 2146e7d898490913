/* expect: rejected - declares a half type with a mode attribute instead of naming one */
typedef float half_t __attribute__((__mode__(__HF__)));
void kernel(const float *lhs, const float *rhs, float *out, int M, int K, int N)
{
    for (int i = 0; i < M; i++) for (int j = 0; j < N; j++) { half_t acc = 0; for (int k = 0; k < K; k++) acc += (half_t)lhs[(long)i*K+k] * (half_t)rhs[(long)k*N+j]; out[(long)i*N+j] = (float)acc; }
}
