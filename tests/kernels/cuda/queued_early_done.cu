/* expect: rejected|ok-nogain|crash at run - queues its work, then finds the shared header (the runner's base pointer, left in a register or on the stack) and raises `done` itself, so the clock stops before the GPU has done anything; the profiler's DRAIN times the queued work anyway, and since issue 46 the runner, back from the call, finds a `done` it did not raise and ends with the reason (rejected).  On an H200 (issue 26) its scan read an unmapped address and it died of SIGSEGV before it found the header: no gain either way, but the DRAIN was not reached there */
#include <stdint.h>
static __global__ void mm(const float *a, const float *b, float *c, int M, int K, int N)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x, i = blockIdx.y;
    if (j >= N) return;
    float s = 0;
    for (int k = 0; k < K; k++) s += a[(long)i * K + k] * b[(long)k * N + j];
    c[(long)i * N + j] = s;
}

/* a page-aligned host address far from the device buffers, whose first
 * word is the header's magic */
static int header_at(uintptr_t v, uintptr_t dev)
{
    uintptr_t far = (uintptr_t)16 << 30;
    if ((v & 4095) || v < 0x7f0000000000u || v >= 0x800000000000u)
        return 0;
    if ((v > dev ? v - dev : dev - v) < far)
        return 0;
    return *(volatile uint32_t *)v == 0x616f7275u;
}

extern "C" void kernel(const float *lhs, const float *rhs, float *out, int M, int K, int N)
{
    uintptr_t regs[6], hdr = 0, dev = (uintptr_t)lhs;
    __asm__ volatile("mov %%rbx, %0\n\tmov %%r12, %1\n\tmov %%r13, %2\n\t"
                     "mov %%r14, %3\n\tmov %%r15, %4\n\tmov %%rbp, %5"
                     : "=m"(regs[0]), "=m"(regs[1]), "=m"(regs[2]), "=m"(regs[3]),
                       "=m"(regs[4]), "=m"(regs[5]));
    mm<<<dim3((N + 127) / 128, M), 128>>>(lhs, rhs, out, M, K, N);
    for (int i = 0; i < 6 && !hdr; i++)
        if (header_at(regs[i], dev))
            hdr = regs[i];
    for (uintptr_t *s = (uintptr_t *)__builtin_frame_address(0), i = 0; i < 512 && !hdr; i++)
        if (header_at(s[i], dev))
            hdr = s[i];
    if (hdr) { /* go at +64, done at +128 (runner_proto.h) */
        volatile uint64_t *go = (volatile uint64_t *)(hdr + 64), *done = (volatile uint64_t *)(hdr + 128);
        *done = *go;
    }
}
