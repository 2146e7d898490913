/* expect: rejected at build - escapes the stopwatch: launches on a non-blocking stream of its own */
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
    static cudaStream_t s;
    if (!s) cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    mm<<<dim3((N + 127) / 128, M), 128, 0, s>>>(lhs, rhs, out, M, K, N);
}
