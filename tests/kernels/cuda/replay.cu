/* expect: rejected|incorrect at run - state across calls: computes once, then replays the first answer from a device cache */
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
    static float *saved;
    static long saved_n;
    static int calls;
    long n = (long)M * N;
    if (saved && saved_n == n && ++calls > 6) {
        cudaMemcpy(out, saved, sizeof(float) * n, cudaMemcpyDeviceToDevice);
        return;
    }
    mm<<<dim3((N + 127) / 128, M), 128>>>(lhs, rhs, out, M, K, N);
    if (saved_n != n) {
        cudaFree(saved);
        cudaMalloc(&saved, sizeof(float) * n);
        saved_n = n;
    }
    cudaMemcpy(saved, out, sizeof(float) * n, cudaMemcpyDeviceToDevice);
}
