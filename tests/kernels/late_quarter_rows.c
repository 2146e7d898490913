/* expect: rejected|incorrect|ok-nogain - honest (and uneven, so timing goes on) for its first 20 calls with new inputs, then computes a quarter of the rows; ok only when a loaded machine gave it so few timed calls that its cut ones cannot move the median (then it is not faster than honest) */
static int fresh;
static float last0, last1;
static volatile float sink;
void kernel(const float *lhs, const float *rhs, float *out, int M, int K, int N)
{
    int rows = M;
    if (lhs[0] != last0 || lhs[1] != last1)
        fresh++;
    last0 = lhs[0];
    last1 = lhs[1];
    if (fresh > 20)
        rows = M / 4; /* the other rows keep the poison, or stale values */
    for (int i = 0; i < rows; i++) for (int j = 0; j < N; j++) { float acc = 0; for (int k = 0; k < K; k++) acc += lhs[(long)i*K+k] * rhs[(long)k*N+j]; out[(long)i*N+j] = acc; }
    if (fresh % 3 == 0) /* uneven: the spread never settles */
        for (int r = 0; r < 3; r++) for (int i = 0; i < rows; i++) for (int k = 0; k < K; k++) sink += lhs[(long)i*K+k];
}
