/* baseline.cu - rmsnorm_matmul: a first straightforward CUDA port: one
 * thread per row for its 1/rms (into scratch), then one thread per output
 * element, global memory only, with knobs */

/* Tunable knobs: `#define NAME value` with the allowed values after
 * "knob:"; a tool may change the value, nothing else. */
#define BLOCK_X 32   /* knob: 16 32 64 128 (threads per block along N) */
#define BLOCK_Y 8    /* knob: 1 2 4 8 16 (threads per block along M) */
#define ROW_BLOCK 128 /* knob: 32 64 128 256 (threads per block for the norms) */

static __global__ void inv_rms(const float *x, float *inv, int M, int K)
{
    int i = blockIdx.x * ROW_BLOCK + threadIdx.x;
    if (i >= M)
        return;
    float ss = 0.0f;
    for (int k = 0; k < K; k++)
        ss += x[(long)i * K + k] * x[(long)i * K + k];
    inv[i] = 1.0f / sqrtf(ss / K);
}

static __global__ void normed_mm(const float *x, const float *inv, const float *w, float *out,
                                 int M, int K, int N)
{
    int j = blockIdx.x * BLOCK_X + threadIdx.x;
    int i = blockIdx.y * BLOCK_Y + threadIdx.y;
    if (i >= M || j >= N)
        return;
    float acc = 0.0f;
    for (int k = 0; k < K; k++)
        acc += x[(long)i * K + k] * w[(long)k * N + j];
    out[(long)i * N + j] = acc * inv[i];
}

extern "C" void kernel(const float *x, const float *w, float *out, int M, int K, int N)
{
    float *inv = NULL;
    cudaMalloc((void **)&inv, sizeof(float) * (size_t)M);
    inv_rms<<<(unsigned)((M + ROW_BLOCK - 1) / ROW_BLOCK), ROW_BLOCK>>>(x, inv, M, K);
    dim3 block(BLOCK_X, BLOCK_Y);
    dim3 grid((unsigned)((N + BLOCK_X - 1) / BLOCK_X), (unsigned)((M + BLOCK_Y - 1) / BLOCK_Y));
    normed_mm<<<grid, block>>>(x, inv, w, out, M, K, N);
    cudaFree(inv);
}
