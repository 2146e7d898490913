/* matmul_long_calls.c - an honest matmul whose every call takes about a
 * third of a second at any size: it computes the product, then waits on
 * the time-stamp counter until 10^9 cycles have passed since it began
 * (0.2-0.5 s at the clocks machines have).  Tests use it where calls must
 * be long and alike on both sides of a head-to-head (its opening round,
 * issue 66). */
void kernel(const float *lhs, const float *rhs, float *out, int M, int K, int N)
{
    unsigned long long t0 = __builtin_ia32_rdtsc();

    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            float acc = 0;
            for (int k = 0; k < K; k++)
                acc += lhs[(long)i * K + k] * rhs[(long)k * N + j];
            out[(long)i * N + j] = acc;
        }
    while (__builtin_ia32_rdtsc() - t0 < 1000000000ull)
        __builtin_ia32_pause();
}
