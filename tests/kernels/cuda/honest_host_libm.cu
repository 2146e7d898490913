/* expect: ok at build - honest host code: an assert, lround and fmod are the C library the message allows */
#include <assert.h>
#include <math.h>
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
    assert(M > 0 && K > 0 && N > 0);
    int threads = (int)lround(fmod(128.0 + N * 0.0, 1024.0)); /* 128 */
    mm<<<dim3((N + threads - 1) / threads, M), threads>>>(lhs, rhs, out, M, K, N);
}
