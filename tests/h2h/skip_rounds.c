/* A kernel that skips its work on about 55% of its calls past the check
 * sets, in every measurement alike.  Given straight to a head-to-head (a
 * kernel message with the baseline's source, no measurement of its own
 * before), it must be refused there: by the roofline (a skipped round is
 * faster than the machine) or by the sampled rounds, CHECKED_H2H of them
 * whatever the load (issue 46, part 3): 0.45^12 to pass them all. */
static int calls;
void kernel(const float *lhs, const float *rhs, float *out, int M, int K, int N)
{
    if (++calls > 12 && (unsigned)(calls * 2654435761u) % 100 < 55)
        return;
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            float acc = 0;
            for (int k = 0; k < K; k++)
                acc += lhs[(long)i * K + k] * rhs[(long)k * N + j];
            out[(long)i * N + j] = acc;
        }
}
