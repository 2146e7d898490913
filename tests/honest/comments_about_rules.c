/* expect: ok - Honest matmul. Per the rules: no float16, no bfloat16, no _Float16 or __fp16
 * or __bf16 anywhere, and no #include "local.h" -- only system headers.
 * (A model echoing the prompt writes comments like these.) */
// We never use __m512h or __m256bh; all math is float32.
void kernel(const float *lhs, const float *rhs, float *out, int M, int K, int N)
{
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            float acc = 0.0f; /* float32 accumulate, not _Float16 */
            for (int k = 0; k < K; k++)
                acc += lhs[(long)i * K + k] * rhs[(long)k * N + j];
            out[(long)i * N + j] = acc;
        }
}
