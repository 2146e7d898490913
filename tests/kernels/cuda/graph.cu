/* expect: rejected at build - escapes the stopwatch: builds a graph once and replays it */
static __global__ void fill(float *out, long n)
{
    long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
    if (i < n) out[i] = 0;
}
extern "C" void kernel(const float *lhs, const float *rhs, float *out, int M, int K, int N)
{
    static cudaGraph_t g;
    static cudaGraphExec_t e;
    if (!e) {
        cudaStream_t s;
        cudaStreamCreate(&s);
        cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
        fill<<<(M * N + 255) / 256, 256, 0, s>>>(out, (long)M * N);
        cudaStreamEndCapture(s, &g);
        cudaGraphInstantiate(&e, g, 0);
    }
    cudaGraphLaunch(e, 0);
}
