/* baseline.cu - lora (out = x w + (x a) b): a first straightforward CUDA
 * port: x a into scratch, then one thread per output element, global memory
 * only, with knobs */

/* Tunable knobs: `#define NAME value` with the allowed values after
 * "knob:"; a tool may change the value, nothing else. */
#define BLOCK_X 32 /* knob: 16 32 64 128 (threads per block along N) */
#define BLOCK_Y 8  /* knob: 1 2 4 8 16 (threads per block along M) */

static __global__ void x_times_a(const float *x, const float *a, float *xa, int M, int K, int R)
{
    int r = blockIdx.x * BLOCK_X + threadIdx.x;
    int i = blockIdx.y * BLOCK_Y + threadIdx.y;
    if (i >= M || r >= R)
        return;
    float acc = 0.0f;
    for (int k = 0; k < K; k++)
        acc += x[(long)i * K + k] * a[(long)k * R + r];
    xa[(long)i * R + r] = acc;
}

static __global__ void lora_kernel(const float *x, const float *w, const float *xa, const float *b,
                                   float *out, int M, int K, int N, int R)
{
    int j = blockIdx.x * BLOCK_X + threadIdx.x;
    int i = blockIdx.y * BLOCK_Y + threadIdx.y;
    if (i >= M || j >= N)
        return;
    float acc = 0.0f;
    for (int k = 0; k < K; k++)
        acc += x[(long)i * K + k] * w[(long)k * N + j];
    for (int r = 0; r < R; r++)
        acc += xa[(long)i * R + r] * b[(long)r * N + j];
    out[(long)i * N + j] = acc;
}

extern "C" void kernel(const float *x, const float *w, const float *a, const float *b, float *out,
                       int M, int K, int N, int R)
{
    float *xa = NULL;
    dim3 block(BLOCK_X, BLOCK_Y);
    cudaMalloc((void **)&xa, sizeof(float) * (size_t)M * R);
    x_times_a<<<dim3((unsigned)((R + BLOCK_X - 1) / BLOCK_X), (unsigned)((M + BLOCK_Y - 1) / BLOCK_Y)),
                block>>>(x, a, xa, M, K, R);
    lora_kernel<<<dim3((unsigned)((N + BLOCK_X - 1) / BLOCK_X), (unsigned)((M + BLOCK_Y - 1) / BLOCK_Y)),
                  block>>>(x, w, xa, b, out, M, K, N, R);
    cudaFree(xa);
}
