/* expect: rejected|incorrect at run - honest (and uneven, so timing goes on) for its first 20 calls with new inputs, then computes a quarter of the rows */
static __global__ void mm(const float *a, const float *b, float *c, int M, int K, int N, int reps)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x, i = blockIdx.y;
    if (j >= N) return;
    float s = 0;
    for (int r = 0; r < reps; r++) { s = 0; for (int k = 0; k < K; k++) s += a[(long)i * K + k] * b[(long)k * N + j]; }
    c[(long)i * N + j] = s;
}
extern "C" void kernel(const float *lhs, const float *rhs, float *out, int M, int K, int N)
{
    static int fresh;
    static float last[2];
    float now[2];
    int rows = M;
    cudaMemcpy(now, lhs, sizeof now, cudaMemcpyDeviceToHost); /* is this call's input new? */
    if (now[0] != last[0] || now[1] != last[1])
        fresh++;
    last[0] = now[0];
    last[1] = now[1];
    if (fresh > 20)
        rows = M / 4;
    mm<<<dim3((N + 127) / 128, rows), 128>>>(lhs, rhs, out, M, K, N, fresh % 3 == 0 ? 4 : 1);
}
