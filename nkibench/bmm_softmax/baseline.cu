/* baseline.cu - bmm_softmax: a first straightforward CUDA port: one thread
 * per score (written to the output), then one thread per row for the
 * softmax over it, global memory only, with knobs */

/* Tunable knobs: `#define NAME value` with the allowed values after
 * "knob:"; a tool may change the value, nothing else. */
#define BLOCK_X 32     /* knob: 16 32 64 128 (score threads per block along N) */
#define BLOCK_Y 8      /* knob: 1 2 4 8 16 (score threads per block along M) */
#define ROW_BLOCK 128  /* knob: 32 64 128 256 512 (softmax threads per block) */

static __global__ void scores(const float *lhs, const float *rhs, float *out, int B, int M, int K,
                              int N)
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

static __global__ void softmax_rows(float *out, long rows, int N)
{
    long row = (long)blockIdx.x * ROW_BLOCK + threadIdx.x;
    if (row >= rows)
        return;
    float *s = out + row * N;
    float mx = -INFINITY, sum = 0.0f;
    for (int j = 0; j < N; j++)
        mx = fmaxf(mx, s[j]);
    for (int j = 0; j < N; j++) {
        float e = expf(s[j] - mx);
        s[j] = e;
        sum += e;
    }
    float inv = 1.0f / sum;
    for (int j = 0; j < N; j++)
        s[j] *= inv;
}

extern "C" void kernel(const float *lhs, const float *rhs, float *out, int B, int M, int K, int N)
{
    dim3 block(BLOCK_X, BLOCK_Y);
    dim3 grid((unsigned)((N + BLOCK_X - 1) / BLOCK_X), (unsigned)((M + BLOCK_Y - 1) / BLOCK_Y),
              (unsigned)B);
    long rows = (long)B * M;
    scores<<<grid, block>>>(lhs, rhs, out, B, M, K, N);
    softmax_rows<<<(unsigned)((rows + ROW_BLOCK - 1) / ROW_BLOCK), ROW_BLOCK>>>(out, rows, N);
}
