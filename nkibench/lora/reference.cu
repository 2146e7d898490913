/* reference.cu - lora on the GPU, trusted: x a per row in double, then each
 * output the sum over k of x w, then over r of (x a) b, in double and in
 * reference.c's order (tests/cli/98-cuda-gpu.sh checks the two agree) */
static __global__ void xa_ref(const float *x, const float *a, double *xa, int M, int K, int R)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x, i = blockIdx.y;
    if (r >= R)
        return;
    double acc = 0.0;
    for (int k = 0; k < K; k++)
        acc += (double)x[(long)i * K + k] * a[(long)k * R + r];
    xa[(long)i * R + r] = acc;
}

static __global__ void lora_ref(const float *x, const float *w, const double *xa, const float *b,
                                float *out, int M, int K, int N, int R)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x, i = blockIdx.y;
    if (j >= N)
        return;
    double acc = 0.0;
    for (int k = 0; k < K; k++)
        acc += (double)x[(long)i * K + k] * w[(long)k * N + j];
    for (int r = 0; r < R; r++)
        acc += xa[(long)i * R + r] * b[(long)r * N + j];
    out[(long)i * N + j] = (float)acc;
}

extern "C" void kernel(const float *x, const float *w, const float *a, const float *b, float *out,
                       int M, int K, int N, int R)
{
    double *xa = NULL;
    if (cudaMalloc((void **)&xa, sizeof(double) * (size_t)M * R) != cudaSuccess)
        return; /* the outputs stay poisoned: the profiler says the reference failed */
    xa_ref<<<dim3((unsigned)((R + 127) / 128), (unsigned)M), 128>>>(x, a, xa, M, K, R);
    lora_ref<<<dim3((unsigned)((N + 255) / 256), (unsigned)M), 256>>>(x, w, xa, b, out, M, K, N, R);
    cudaFree(xa);
}
