/* baseline.cu - swiglu (out = (silu(x w_gate) * (x w_up)) w_down): a first
 * straightforward CUDA port: the hidden layer into scratch, one thread per
 * element, then one thread per output element, global memory only, with
 * knobs */

/* Tunable knobs: `#define NAME value` with the allowed values after
 * "knob:"; a tool may change the value, nothing else. */
#define BLOCK_X 32 /* knob: 16 32 64 128 (threads per block along the row) */
#define BLOCK_Y 8  /* knob: 1 2 4 8 16 (threads per block along M) */

static __global__ void hidden(const float *x, const float *w_up, const float *w_gate, float *h,
                              int M, int D, int F)
{
    int f = blockIdx.x * BLOCK_X + threadIdx.x;
    int i = blockIdx.y * BLOCK_Y + threadIdx.y;
    if (i >= M || f >= F)
        return;
    float up = 0.0f, gate = 0.0f;
    for (int d = 0; d < D; d++) {
        float xd = x[(long)i * D + d];
        up += xd * w_up[(long)d * F + f];
        gate += xd * w_gate[(long)d * F + f];
    }
    h[(long)i * F + f] = gate / (1.0f + expf(-gate)) * up;
}

static __global__ void down(const float *h, const float *w_down, float *out, int M, int D, int F)
{
    int d = blockIdx.x * BLOCK_X + threadIdx.x;
    int i = blockIdx.y * BLOCK_Y + threadIdx.y;
    if (i >= M || d >= D)
        return;
    float acc = 0.0f;
    for (int f = 0; f < F; f++)
        acc += h[(long)i * F + f] * w_down[(long)f * D + d];
    out[(long)i * D + d] = acc;
}

extern "C" void kernel(const float *x, const float *w_up, const float *w_gate, const float *w_down,
                       float *out, int M, int D, int F)
{
    float *h = NULL;
    dim3 block(BLOCK_X, BLOCK_Y);
    cudaMalloc((void **)&h, sizeof(float) * (size_t)M * F);
    hidden<<<dim3((unsigned)((F + BLOCK_X - 1) / BLOCK_X), (unsigned)((M + BLOCK_Y - 1) / BLOCK_Y)),
             block>>>(x, w_up, w_gate, h, M, D, F);
    down<<<dim3((unsigned)((D + BLOCK_X - 1) / BLOCK_X), (unsigned)((M + BLOCK_Y - 1) / BLOCK_Y)),
           block>>>(h, w_down, out, M, D, F);
    cudaFree(h);
}
