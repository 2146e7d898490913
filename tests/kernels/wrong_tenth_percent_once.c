/* expect: incorrect|rejected - honest on every call but one: on its fourteenth call with new inputs (a timed one: past the five check sets, the two warm-up calls and a few timed calls) one output in a thousand (every 1009th: over all rows and columns) is off by 1 (issue 66: a single wrong call among many escaped a sample of six; every timed call is now checked at about 8000 secret positions, so 0.1% of them wrong escapes with about e^-6) */
static int fresh;
static float last0, last1;
void kernel(const float *lhs, const float *rhs, float *out, int M, int K, int N)
{
    if (lhs[0] != last0 || lhs[1] != last1)
        fresh++;
    last0 = lhs[0];
    last1 = lhs[1];
    for (int i = 0; i < M; i++) for (int j = 0; j < N; j++) { float acc = 0; for (int k = 0; k < K; k++) acc += lhs[(long)i*K+k] * rhs[(long)k*N+j]; out[(long)i*N+j] = acc; }
    if (fresh == 14)
        for (long x = 997; x < (long)M * N; x += 1009) /* spread over rows and columns */
            out[x] += 1.0f;
}
