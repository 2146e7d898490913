/* expect: ok - watches for inputs it has already seen shifted (the rotated copies a memo could replay) and makes a forbidden system call if it ever sees one: timed inputs must be fresh, so it never does */
#include <stdlib.h>
#include <string.h>
#define KEEP 6
static float *seen[KEEP];
static long seen_n[KEEP];
static int nseen;
static void tell(void) { long r, nr = 110; /* getppid: forbidden, so the verdict shows it */ __asm__ volatile("syscall" : "=a"(r) : "a"(nr) : "rcx", "r11", "memory"); (void)r; }
void kernel(const float *lhs, const float *rhs, float *out, int M, int K, int N)
{
    long n = (long)M * K;
    for (int s = 0; s < nseen; s++)
        for (long o = 1; o + 4 <= seen_n[s]; o++)
            if (memcmp(seen[s] + o, lhs, 4 * sizeof(float)) == 0)
                tell();
    if (nseen < KEEP && (seen[nseen] = malloc(n * sizeof(float)))) {
        memcpy(seen[nseen], lhs, n * sizeof(float));
        seen_n[nseen++] = n;
    }
    for (int i = 0; i < M; i++) for (int j = 0; j < N; j++) { float acc = 0; for (int k = 0; k < K; k++) acc += lhs[(long)i*K+k] * rhs[(long)k*N+j]; out[(long)i*N+j] = acc; }
}
