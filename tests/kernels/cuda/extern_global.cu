/* expect: rejected at build - a __global__ kernel left external (nvcc's host stub is exported) */
__global__ void fill(float *out, long n)
{
    long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
    if (i < n) out[i] = 0;
}
extern "C" void kernel(const float *lhs, const float *rhs, float *out, int M, int K, int N)
{
    fill<<<(M * N + 255) / 256, 256>>>(out, (long)M * N);
}
