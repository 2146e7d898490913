/* expect: rejected|incorrect - takes over the runner's loop on its first call (so no check of the runner's runs again) and serves every command itself: honest for its first 12 calls (the correctness sets among them), then for each call it computes every row into a scratch buffer, copies 63% of them out, raises `done`, answers the DRAIN that follows at once, and only then copies the last 37% (1-2 us).  The profiler copies a sample of the outputs, in an order of its own, the moment it sees the DRAIN's `done`, and compares them once the process is stopped (issue 46) */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#define GO 64
#define DONE 128
#define PARENT_SLEEPING 192
#define CMD 256
#define DIMS 260
#define OFF 296
static void sys3(long nr, long a, long b, long c) { long r; register long r10 __asm__("r10") = 0; __asm__ volatile("syscall" : "=a"(r) : "a"(nr), "D"(a), "S"(b), "d"(c), "r"(r10) : "rcx", "r11", "memory"); (void)r; }
static void rows(const float *lhs, const float *rhs, float *out, int from, int to, int K, int N)
{
    for (int i = from; i < to; i++) for (int j = 0; j < N; j++) { float acc = 0; for (int k = 0; k < K; k++) acc += lhs[(long)i*K+k] * rhs[(long)k*N+j]; out[(long)i*N+j] = acc; }
}
static float *scratch;
static size_t cap;
static void say_done(char *h, uint64_t seq)
{
    *(volatile uint64_t *)(h + DONE) = seq;
    if (*(volatile uint32_t *)(h + PARENT_SLEEPING))
        sys3(202, (long)(h + DONE), 1 /* FUTEX_WAKE */, 1);
}
void kernel(const float *lhs, const float *rhs, float *out, int M, int K, int N)
{
    uintptr_t p = (uintptr_t)lhs & ~(uintptr_t)4095;
    char *h = 0;
    for (int i = 0; i < 64; i++, p -= 4096)
        if (*(volatile uint32_t *)p == 0x616f7275u) { h = (char *)p; break; }
    if (!h) {
        rows(lhs, rhs, out, 0, M, K, N);
        return;
    }
    volatile uint64_t *go = (volatile uint64_t *)(h + GO);
    uint64_t seq = *go;
    for (int calls = 1;; calls++) {
        volatile int32_t *d = (volatile int32_t *)(h + DIMS);
        volatile uint64_t *off = (volatile uint64_t *)(h + OFF);
        const float *a = (const float *)(h + off[0]), *b = (const float *)(h + off[1]);
        float *c = (float *)(h + off[2]);
        int m = d[0], k = d[1], n = d[2];
        size_t all = (size_t)m * n, split = calls > 12 ? all * 63 / 100 : all;
        if (all > cap) {
            free(scratch);
            scratch = malloc(all * sizeof *scratch);
            cap = all;
        }
        rows(a, b, scratch, 0, m, k, n);
        memcpy(c, scratch, split * sizeof *c);
        say_done(h, seq);
        while (*go == seq)
            ;
        seq = *go;
        if (*(volatile uint32_t *)(h + CMD) == 6) /* the DRAIN: answered at once */
            say_done(h, seq);
        memcpy(c + split, scratch + split, (all - split) * sizeof *c);
        /* the next command: empty ones answered, EXIT obeyed */
        for (;;) {
            while (*go == seq)
                ;
            seq = *go;
            uint32_t cmd = *(volatile uint32_t *)(h + CMD);
            if (cmd == 1)
                break;
            if (cmd != 3 && cmd != 6)
                sys3(231, 0, 0, 0); /* exit_group(0) */
            say_done(h, seq);
        }
    }
}
