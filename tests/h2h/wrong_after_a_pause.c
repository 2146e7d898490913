/* A kernel that looks for the auditor's first tell (issue 56, part 2): a
 * head-to-head ran the other side's warm-up, 0.1 s, between the kernel's
 * check sets and its own warm-up, where a lone measurement has none.  It
 * keeps the gap before each call; at its first repeated input (its
 * warm-up's third call: the first two draw fresh inputs) it looks at the
 * gap before the warm-up's first, and past its warm-up writes nothing
 * where that gap was over 50 ms (half of a 0.1 s warm-up: a busy machine's
 * preemptions stay under it).  Then each side's check sets and warm-up
 * ran back to back, as alone, and it passed both kinds.  Since issue 66 a
 * head-to-head opens with both sides' first calls, and a second side's
 * warm-up comes after the first side's check sets and warm-up: it finds a
 * pause there and is refused, in the one kind a model's kernel is
 * measured in; alone it passes. */
#include <string.h>
static float last[8];
static unsigned long long end, gap[3];
static int calls, warmed, paused;
void kernel(const float *lhs, const float *rhs, float *out, int M, int K, int N)
{
    unsigned long long start = __builtin_ia32_rdtsc();
    int repeat = calls > 0 && memcmp(last, lhs, sizeof last) == 0;
    memcpy(last, lhs, sizeof last);
    gap[calls % 3] = calls > 0 ? start - end : 0;
    if (repeat && !warmed) { /* the gap before this call's two before */
        warmed = 1;
        paused = gap[(calls + 1) % 3] > 130000000ull; /* 50 ms at 2.6 GHz: half a warm-up */
    }
    calls++;
    if (warmed && !repeat && paused)
        return; /* head to head, it thinks: nothing written */
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            float acc = 0;
            for (int k = 0; k < K; k++)
                acc += lhs[(long)i * K + k] * rhs[(long)k * N + j];
            out[(long)i * N + j] = acc;
        }
    end = __builtin_ia32_rdtsc();
}
