/* expect: ok - a static table and a static const string (that mentions "__fp16" in text only) */
static const int block[4] = {64, 32, 16, 8};
static const char note[] = "this kernel avoids __fp16 and _Float16: float32 only";
void kernel(const float *lhs, const float *rhs, float *out, int M, int K, int N)
{
    int bk = block[(note[0] == 't') ? 0 : 1];
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++)
            out[(long)i * N + j] = 0;
    for (int k0 = 0; k0 < K; k0 += bk)
        for (int i = 0; i < M; i++)
            for (int k = k0; k < k0 + bk && k < K; k++) {
                float a = lhs[(long)i * K + k];
                for (int j = 0; j < N; j++)
                    out[(long)i * N + j] += a * rhs[(long)k * N + j];
            }
}
