/* expect: rejected - sleeps in futex() with a timeout before its work: a parent padding its own calls to flatter its child (issue 68) */
#include <linux/futex.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
static uint32_t word;
void kernel(const float *lhs, const float *rhs, float *out, int M, int K, int N)
{
    struct timespec pad = {0, 200000};
    syscall(SYS_futex, &word, FUTEX_WAIT_PRIVATE, 0, &pad, NULL, 0);
    for (int i = 0; i < M; i++) for (int j = 0; j < N; j++) { float acc = 0; for (int k = 0; k < K; k++) acc += lhs[(long)i*K+k] * rhs[(long)k*N+j]; out[(long)i*N+j] = acc; }
}
