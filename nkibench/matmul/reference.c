/* reference.c - matmul, trusted: plain loops, double accumulation */
void kernel(const float *lhs, const float *rhs, float *out, int M, int K, int N)
{
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double acc = 0.0;
            for (int k = 0; k < K; k++)
                acc += (double)lhs[(long)i * K + k] * (double)rhs[(long)k * N + j];
            out[(long)i * N + j] = (float)acc;
        }
}
