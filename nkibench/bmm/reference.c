/* reference.c - bmm, trusted: one dot product at a time, in double */
void kernel(const float *lhs, const float *rhs, float *out, int B, int M, int K, int N)
{
    for (int b = 0; b < B; b++)
        for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++) {
                double acc = 0.0;
                for (int k = 0; k < K; k++)
                    acc += (double)lhs[((long)b * M + i) * K + k] * rhs[((long)b * K + k) * N + j];
                out[((long)b * M + i) * N + j] = (float)acc;
            }
}
