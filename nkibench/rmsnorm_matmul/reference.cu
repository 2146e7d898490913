/* reference.cu - rmsnorm_matmul on the GPU, trusted: each row's 1/rms in
 * double (a thread per row, summing in order), then each output a plain sum
 * over k in double, as reference.c computes it (tests/cli/98-cuda-gpu.sh
 * checks the two agree) */
static __global__ void inv_rms(const float *x, double *inv, int M, int K)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= M)
        return;
    double ss = 0.0;
    for (int k = 0; k < K; k++)
        ss += (double)x[(long)i * K + k] * x[(long)i * K + k];
    inv[i] = 1.0 / sqrt(ss / K);
}

static __global__ void normed_mm(const float *x, const double *inv, const float *w, float *out,
                                 int M, int K, int N)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x, i = blockIdx.y;
    if (j >= N)
        return;
    double acc = 0.0;
    for (int k = 0; k < K; k++)
        acc += (x[(long)i * K + k] * inv[i]) * (double)w[(long)k * N + j];
    out[(long)i * N + j] = (float)acc;
}

extern "C" void kernel(const float *x, const float *w, float *out, int M, int K, int N)
{
    double *inv = NULL;
    if (cudaMalloc((void **)&inv, sizeof(double) * (size_t)M) != cudaSuccess)
        return; /* the outputs stay poisoned: the profiler says the reference failed */
    inv_rms<<<(unsigned)((M + 127) / 128), 128>>>(x, inv, M, K);
    normed_mm<<<dim3((unsigned)((N + 255) / 256), (unsigned)M), 256>>>(x, inv, w, out, M, K, N);
    cudaFree(inv);
}
