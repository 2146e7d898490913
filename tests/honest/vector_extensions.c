/* expect: ok - GCC vector extensions, 16 floats wide, with an unaligned tail */
typedef float v16 __attribute__((vector_size(64), aligned(4)));
void kernel(const float *lhs, const float *rhs, float *out, int M, int K, int N)
{
    for (int i = 0; i < M; i++) {
        float *o = out + (long)i * N;
        for (int j = 0; j < N; j++)
            o[j] = 0;
        for (int k = 0; k < K; k++) {
            float a = lhs[(long)i * K + k];
            const float *r = rhs + (long)k * N;
            int j = 0;
            for (; j + 16 <= N; j += 16) {
                v16 x = *(const v16 *)(r + j), y = *(v16 *)(o + j);
                *(v16 *)(o + j) = y + a * x;
            }
            for (; j < N; j++)
                o[j] += a * r[j];
        }
    }
}
