/* expect: ok - pragmas models like to write */
#pragma GCC optimize("O3")
#pragma GCC push_options
void kernel(const float *lhs, const float *rhs, float *out, int M, int K, int N)
{
    for (int i = 0; i < M; i++) {
        for (int j = 0; j < N; j++)
            out[(long)i * N + j] = 0;
        for (int k = 0; k < K; k++) {
            float a = lhs[(long)i * K + k];
#pragma GCC unroll 4
#pragma GCC ivdep
            for (int j = 0; j < N; j++)
                out[(long)i * N + j] += a * rhs[(long)k * N + j];
        }
    }
}
#pragma GCC pop_options
