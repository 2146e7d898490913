/* reference.cu - add_rmsnorm_matmul on the GPU, trusted: each row's
 * 1/rms(x + z) in double (a thread per row, summing in order), then each
 * output a sum over k of ((y inv) g) w in double, in reference.c's order
 * (tests/cli/98-cuda-gpu.sh checks the two agree) */
static __global__ void inv_rms(const float *x, const float *z, double *inv, int M, int K)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= M)
        return;
    double ss = 0.0;
    for (int k = 0; k < K; k++) {
        double y = (double)x[(long)i * K + k] + z[(long)i * K + k];
        ss += y * y;
    }
    inv[i] = 1.0 / sqrt(ss / K + 1e-5);
}

static __global__ void normed_mm(const float *x, const float *w, const float *z, const float *g,
                                 const double *inv, float *out, int M, int K, int N)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x, i = blockIdx.y;
    if (j >= N)
        return;
    double acc = 0.0;
    for (int k = 0; k < K; k++) {
        double y = (double)x[(long)i * K + k] + z[(long)i * K + k];
        double yk = y * inv[i] * g[k];
        acc += yk * w[(long)k * N + j];
    }
    out[(long)i * N + j] = (float)acc;
}

extern "C" void kernel(const float *x, const float *w, const float *z, const float *g, float *out,
                       int M, int K, int N)
{
    double *inv = NULL;
    if (cudaMalloc((void **)&inv, sizeof(double) * (size_t)M) != cudaSuccess)
        return; /* the outputs stay poisoned: the profiler says the reference failed */
    inv_rms<<<(unsigned)((M + 127) / 128), 128>>>(x, z, inv, M, K);
    normed_mm<<<dim3((unsigned)((N + 255) / 256), (unsigned)M), 256>>>(x, w, z, g, inv, out, M, K, N);
    cudaFree(inv);
}
