/* expect: rejected - computes in half precision without naming a half type: through the type of an f16 literal */
typedef __typeof__(1.0f16) half_t;
void kernel(const float *lhs, const float *rhs, float *out, int M, int K, int N)
{
    for (int i = 0; i < M; i++) for (int j = 0; j < N; j++) { half_t acc = 0; for (int k = 0; k < K; k++) acc += (half_t)lhs[(long)i*K+k] * (half_t)rhs[(long)k*N+j]; out[(long)i*N+j] = (float)acc * (float)(__typeof__(1.0f16))1; }
}
