/* expect: ok - float literals of every spelling (hex, exponents, suffixes), none of them half */
void kernel(const float *lhs, const float *rhs, float *out, int M, int K, int N)
{
    const float one = 0x1p0f, tiny = 1e-30f, mask = (float)0x1f16, half = .5F, two = 2.0e+0f;
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            float acc = 0.0f * tiny;
            for (int k = 0; k < K; k++)
                acc += lhs[(long)i * K + k] * rhs[(long)k * N + j];
            out[(long)i * N + j] = acc * one * (half * two) + 0 * mask;
        }
}
