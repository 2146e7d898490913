/* baseline.cu - transpose_matmul (out = lhs^T rhs, lhs stored K x M): a first
 * straightforward CUDA port, one thread per output element, global memory
 * only, with knobs */

/* Tunable knobs: `#define NAME value` with the allowed values after
 * "knob:"; a tool may change the value, nothing else. */
#define BLOCK_X 32 /* knob: 16 32 64 128 (threads per block along N) */
#define BLOCK_Y 8  /* knob: 1 2 4 8 16 (threads per block along M) */

static __global__ void tmm_kernel(const float *lhs, const float *rhs, float *out, int K, int M, int N)
{
    int j = blockIdx.x * BLOCK_X + threadIdx.x;
    int i = blockIdx.y * BLOCK_Y + threadIdx.y;
    if (i >= M || j >= N)
        return;
    float acc = 0.0f;
    for (int k = 0; k < K; k++)
        acc += lhs[(long)k * M + i] * rhs[(long)k * N + j];
    out[(long)i * N + j] = acc;
}

extern "C" void kernel(const float *lhs, const float *rhs, float *out, int K, int M, int N)
{
    dim3 block(BLOCK_X, BLOCK_Y);
    dim3 grid((unsigned)((N + BLOCK_X - 1) / BLOCK_X), (unsigned)((M + BLOCK_Y - 1) / BLOCK_Y));
    tmm_kernel<<<grid, block>>>(lhs, rhs, out, K, M, N);
}
