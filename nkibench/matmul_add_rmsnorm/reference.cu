/* reference.cu - matmul_add_rmsnorm on the GPU, trusted: y = x w + z in
 * double (scratch), each row's 1/rms(y) in double (a thread per row), then
 * out = y g inv, in reference.c's order (tests/cli/98-cuda-gpu.sh checks
 * the two agree) */
static __global__ void mm_add(const float *x, const float *w, const float *z, double *y, int M,
                              int K, int N)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x, i = blockIdx.y;
    if (j >= N)
        return;
    double acc = z[(long)i * N + j];
    for (int k = 0; k < K; k++)
        acc += (double)x[(long)i * K + k] * w[(long)k * N + j];
    y[(long)i * N + j] = acc;
}

static __global__ void inv_rms(const double *y, double *inv, int M, int N)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= M)
        return;
    double ss = 0.0;
    for (int j = 0; j < N; j++)
        ss += y[(long)i * N + j] * y[(long)i * N + j];
    inv[i] = 1.0 / sqrt(ss / N + 1e-5);
}

static __global__ void scale(const double *y, const float *g, const double *inv, float *out, int M,
                             int N)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x, i = blockIdx.y;
    if (j < N)
        out[(long)i * N + j] = (float)(y[(long)i * N + j] * g[j] * inv[i]);
}

extern "C" void kernel(const float *x, const float *w, const float *z, const float *g, float *out,
                       int M, int K, int N)
{
    double *y = NULL, *inv = NULL;
    if (cudaMalloc((void **)&y, sizeof(double) * (size_t)M * N) != cudaSuccess ||
        cudaMalloc((void **)&inv, sizeof(double) * (size_t)M) != cudaSuccess) {
        cudaFree(y);
        return; /* the outputs stay poisoned: the profiler says the reference failed */
    }
    mm_add<<<dim3((unsigned)((N + 255) / 256), (unsigned)M), 256>>>(x, w, z, y, M, K, N);
    inv_rms<<<(unsigned)((M + 127) / 128), 128>>>(y, inv, M, N);
    scale<<<dim3((unsigned)((N + 255) / 256), (unsigned)M), 256>>>(y, g, inv, out, M, N);
    cudaFree(y);
    cudaFree(inv);
}
