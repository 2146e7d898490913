/* baseline.cu - matmul_add_rmsnorm (y = x w + z; out = y g / rms(y)): a
 * first straightforward CUDA port: one thread per element of y (written to
 * the output), one thread per row for its 1/rms, then one thread per
 * element to scale it, global memory only, with knobs */

/* Tunable knobs: `#define NAME value` with the allowed values after
 * "knob:"; a tool may change the value, nothing else. */
#define BLOCK_X 32    /* knob: 16 32 64 128 (threads per block along N) */
#define BLOCK_Y 8     /* knob: 1 2 4 8 16 (threads per block along M) */
#define ROW_BLOCK 128 /* knob: 32 64 128 256 (threads per block for the norms) */

static __global__ void mm_add(const float *x, const float *w, const float *z, float *y, int M,
                              int K, int N)
{
    int j = blockIdx.x * BLOCK_X + threadIdx.x;
    int i = blockIdx.y * BLOCK_Y + threadIdx.y;
    if (i >= M || j >= N)
        return;
    float acc = z[(long)i * N + j];
    for (int k = 0; k < K; k++)
        acc += x[(long)i * K + k] * w[(long)k * N + j];
    y[(long)i * N + j] = acc;
}

static __global__ void inv_rms(const float *y, float *inv, int M, int N)
{
    int i = blockIdx.x * ROW_BLOCK + threadIdx.x;
    if (i >= M)
        return;
    float ss = 0.0f;
    for (int j = 0; j < N; j++)
        ss += y[(long)i * N + j] * y[(long)i * N + j];
    inv[i] = 1.0f / sqrtf(ss / N + 1e-5f);
}

static __global__ void scale(float *y, const float *g, const float *inv, int M, int N)
{
    int j = blockIdx.x * BLOCK_X + threadIdx.x;
    int i = blockIdx.y * BLOCK_Y + threadIdx.y;
    if (i < M && j < N)
        y[(long)i * N + j] *= g[j] * inv[i];
}

extern "C" void kernel(const float *x, const float *w, const float *z, const float *g, float *out,
                       int M, int K, int N)
{
    float *inv = NULL;
    dim3 block(BLOCK_X, BLOCK_Y);
    dim3 grid((unsigned)((N + BLOCK_X - 1) / BLOCK_X), (unsigned)((M + BLOCK_Y - 1) / BLOCK_Y));
    cudaMalloc((void **)&inv, sizeof(float) * (size_t)M);
    mm_add<<<grid, block>>>(x, w, z, out, M, K, N);
    inv_rms<<<(unsigned)((M + ROW_BLOCK - 1) / ROW_BLOCK), ROW_BLOCK>>>(out, inv, M, N);
    scale<<<grid, block>>>(out, g, inv, M, N);
    cudaFree(inv);
}
