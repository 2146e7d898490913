/* expect: incorrect - adds into the output without clearing it (relies on zeroed memory) */
void kernel(const float *lhs, const float *rhs, float *out, int M, int K, int N)
{
    for (int i = 0; i < M; i++)
        for (int k = 0; k < K; k++)
            for (int j = 0; j < N; j++)
                out[(long)i * N + j] += lhs[(long)i * K + k] * rhs[(long)k * N + j];
}
