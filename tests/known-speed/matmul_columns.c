/* matmul_columns.c - an honest matmul about 10x slower than the baseline at
 * tiny on any machine: j-i-k loops walk rhs down its columns, in double.
 * Tests use it where the answer must be beyond any noise (a lesson the
 * run always learns, a head-to-head whose sign is known). */
void kernel(const float *lhs, const float *rhs, float *out, int M, int K, int N)
{
    for (int j = 0; j < N; j++)
        for (int i = 0; i < M; i++) {
            double acc = 0;
            for (int k = 0; k < K; k++)
                acc += (double)lhs[(long)i * K + k] * rhs[(long)k * N + j];
            out[(long)i * N + j] = (float)acc;
        }
}
