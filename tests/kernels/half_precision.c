/* expect: rejected - computes in _Float16 */
void kernel(const float *lhs, const float *rhs, float *out, int M, int K, int N)
{
    for (int i = 0; i < M; i++) for (int j = 0; j < N; j++) {
        _Float16 acc = 0;
        for (int k = 0; k < K; k++) acc += (_Float16)lhs[(long)i*K+k] * (_Float16)rhs[(long)k*N+j];
        out[(long)i*N+j] = (float)acc;
    }
}
