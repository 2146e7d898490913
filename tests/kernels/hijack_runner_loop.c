/* expect: ok - takes over the runner's loop on its first call and serves every later command itself, watching the inputs while it waits (if it ever sees a call's inputs before the command that starts the clock, it makes a forbidden system call), and answers the empty commands the profiler times the wake-up on 50 us late, so that more would be taken off its calls (the minimum, first taken before it ran, ignores that) */
#include <stdint.h>
#include <string.h>
#define GO 64
#define DONE 128
#define PARENT_SLEEPING 192
#define CMD 256
#define DIMS 260
#define OFF 296
static void sys3(long nr, long a, long b, long c) { long r; register long r10 __asm__("r10") = 0; __asm__ volatile("syscall" : "=a"(r) : "a"(nr), "D"(a), "S"(b), "d"(c), "r"(r10) : "rcx", "r11", "memory"); (void)r; }
static void tell(void) { sys3(110, 0, 0, 0); /* getppid: forbidden */ }
static void matmul(const float *lhs, const float *rhs, float *out, int M, int K, int N)
{
    for (int i = 0; i < M; i++) for (int j = 0; j < N; j++) { float acc = 0; for (int k = 0; k < K; k++) acc += lhs[(long)i*K+k] * rhs[(long)k*N+j]; out[(long)i*N+j] = acc; }
}
void kernel(const float *lhs, const float *rhs, float *out, int M, int K, int N)
{
    uintptr_t p = (uintptr_t)lhs & ~(uintptr_t)4095;
    char *h = 0;
    matmul(lhs, rhs, out, M, K, N);
    for (int i = 0; i < 64; i++, p -= 4096)
        if (*(volatile uint32_t *)p == 0x616f7275u) { h = (char *)p; break; }
    if (!h)
        return;
    /* finish this call as the runner would, then be the runner */
    volatile uint64_t *go = (volatile uint64_t *)(h + GO), *done = (volatile uint64_t *)(h + DONE);
    uint64_t seq = *go;
    *done = seq;
    sys3(202, (long)(h + DONE), 1 /* FUTEX_WAKE */, 1);
    for (;;) {
        volatile uint64_t *off = (volatile uint64_t *)(h + OFF);
        const float *in = (const float *)(h + off[0]);
        float before[16];
        memcpy(before, (const void *)in, sizeof before);
        while (*go == seq)
            if (memcmp(before, (const void *)(h + off[0]), sizeof before) != 0) {
                __asm__ volatile("" ::: "memory");
                if (*go == seq)
                    tell(); /* new inputs, and the clock has not started */
                memcpy(before, (const void *)(h + off[0]), sizeof before);
            }
        seq = *go;
        if (*(volatile uint32_t *)(h + CMD) == 3) { /* an empty command: answered late */
            for (volatile long spin = 0; spin < 100000; spin++)
                ;
            *done = seq;
            if (*(volatile uint32_t *)(h + PARENT_SLEEPING))
                sys3(202, (long)(h + DONE), 1, 1);
            continue;
        }
        if (*(volatile uint32_t *)(h + CMD) == 6) { /* DRAIN: nothing left to wait for */
            *done = seq;
            continue;
        }
        if (*(volatile uint32_t *)(h + CMD) != 1) /* EXIT, or a command run before the clock */
            sys3(231, 0, 0, 0); /* exit_group(0) */
        {
            volatile int32_t *d = (volatile int32_t *)(h + DIMS);
            matmul((const float *)(h + off[0]), (const float *)(h + off[1]), (float *)(h + off[2]), d[0], d[1], d[2]);
        }
        *done = seq;
        if (*(volatile uint32_t *)(h + PARENT_SLEEPING))
            sys3(202, (long)(h + DONE), 1, 1);
    }
}
