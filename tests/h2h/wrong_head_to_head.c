/* The other way round (issue 56, part 2): a kernel that does its work
 * alone and stops once it finds another kernel's calls between its own,
 * as a parent that wants its children to look fast could, with delays.
 * The same count as wrong_when_alone.c: the gaps before its first four
 * timed calls longer than 2/5 of its own call.  It passes alone and is
 * refused head to head, the only measurement of a kernel a model wrote
 * (issue 66; from issue 56 until then a stand-in sat in for the other side
 * alone, and it was refused in both). */
#include <string.h>
static float last[8];
static unsigned long long end, took;
static int calls, same_run, warmed, timed, long_gaps;
void kernel(const float *lhs, const float *rhs, float *out, int M, int K, int N)
{
    unsigned long long start = __builtin_ia32_rdtsc();
    int repeat = calls++ > 0 && memcmp(last, lhs, sizeof last) == 0;
    memcpy(last, lhs, sizeof last);
    same_run = repeat ? same_run + 1 : 0;
    warmed |= same_run >= 1;
    if (warmed && !repeat && ++timed <= 4 && start - end > took * 2 / 5)
        long_gaps++;
    if (timed > 4 && long_gaps > 0)
        return; /* head to head: nothing written */
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            float acc = 0;
            for (int k = 0; k < K; k++)
                acc += lhs[(long)i * K + k] * rhs[(long)k * N + j];
            out[(long)i * N + j] = acc;
        }
    end = __builtin_ia32_rdtsc();
    took = end - start;
}
