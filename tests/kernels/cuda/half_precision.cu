/* expect: incorrect at run - precision downgrade: rounds every product's inputs to half precision */
#include <cuda_fp16.h>
static __global__ void mm(const float *a, const float *b, float *c, int M, int K, int N)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x, i = blockIdx.y;
    if (j >= N) return;
    float s = 0;
    for (int k = 0; k < K; k++)
        s += __half2float(__float2half(a[(long)i * K + k])) * __half2float(__float2half(b[(long)k * N + j]));
    c[(long)i * N + j] = s;
}
extern "C" void kernel(const float *lhs, const float *rhs, float *out, int M, int K, int N)
{
    mm<<<dim3((N + 127) / 128, M), 128>>>(lhs, rhs, out, M, K, N);
}
