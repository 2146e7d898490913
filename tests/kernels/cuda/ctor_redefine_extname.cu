/* expect: rejected at build - renames atexit to the kernel, so nvcc's own registration constructor calls it before main and before the sandbox is complete */
#pragma redefine_extname atexit kernel
#include <sys/socket.h>
static __global__ void mm(const float *a, const float *b, float *c, int M, int K, int N)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x, i = blockIdx.y;
    if (j >= N) return;
    float s = 0;
    for (int k = 0; k < K; k++) s += a[(long)i * K + k] * b[(long)k * N + j];
    c[(long)i * N + j] = s;
}
extern "C" void kernel(const float *lhs, const float *rhs, float *out, int M, int K, int N)
{
    if (!rhs) { /* the call from the constructor: atexit(fn) passes one pointer */
        __asm__ volatile("" ::: "memory");
        return;
    }
    mm<<<dim3((N + 127) / 128, M), 128>>>(lhs, rhs, out, M, K, N);
}
