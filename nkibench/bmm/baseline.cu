/* baseline.cu - bmm: a first straightforward CUDA port, one thread per
 * output element, global memory only, with knobs */

/* Tunable knobs: `#define NAME value` with the allowed values after
 * "knob:"; a tool may change the value, nothing else. */
#define BLOCK_X 32 /* knob: 16 32 64 128 (threads per block along N) */
#define BLOCK_Y 8  /* knob: 1 2 4 8 16 (threads per block along M) */

static __global__ void bmm_kernel(const float *lhs, const float *rhs, float *out, int M, int K, int N)
{
    int j = blockIdx.x * BLOCK_X + threadIdx.x;
    int i = blockIdx.y * BLOCK_Y + threadIdx.y;
    int b = blockIdx.z;
    if (i >= M || j >= N)
        return;
    const float *l = lhs + ((long)b * M + i) * K;
    const float *r = rhs + (long)b * K * N;
    float acc = 0.0f;
    for (int k = 0; k < K; k++)
        acc += l[k] * r[(long)k * N + j];
    out[((long)b * M + i) * N + j] = acc;
}

extern "C" void kernel(const float *lhs, const float *rhs, float *out, int B, int M, int K, int N)
{
    dim3 block(BLOCK_X, BLOCK_Y);
    dim3 grid((unsigned)((N + BLOCK_X - 1) / BLOCK_X), (unsigned)((M + BLOCK_Y - 1) / BLOCK_Y),
              (unsigned)B);
    bmm_kernel<<<grid, block>>>(lhs, rhs, out, M, K, N);
}
