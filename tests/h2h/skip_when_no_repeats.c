/* A kernel honest in every normal measurement, which it tells by the
 * warm-up calls that repeat one input three times and more; where no input
 * ever repeats like that (the final head-to-head draws fresh inputs every
 * round), it skips its work on about 55% of the calls past the check sets.
 * Issue 46, part 3: the head-to-head holds the roofline as every
 * measurement does, so the skipped calls (faster than the machine) refuse
 * it whatever the sampled rounds catch. */
#include <string.h>
static float last[8];
static int calls, same_run, warm_repeats;
void kernel(const float *lhs, const float *rhs, float *out, int M, int K, int N)
{
    calls++;
    same_run = calls > 1 && memcmp(last, lhs, sizeof last) == 0 ? same_run + 1 : 0;
    warm_repeats |= same_run >= 2;
    memcpy(last, lhs, sizeof last);
    if (!warm_repeats && calls > 12 && (unsigned)(calls * 2654435761u) % 100 < 55)
        return;
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            float acc = 0;
            for (int k = 0; k < K; k++)
                acc += lhs[(long)i * K + k] * rhs[(long)k * N + j];
            out[(long)i * N + j] = acc;
        }
}
