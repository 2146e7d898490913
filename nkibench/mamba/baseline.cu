/* baseline.cu - mamba: a first straightforward CUDA port: one thread per
 * (channel, state) runs the sequential scan over m and writes c h into
 * scratch, then one thread per output sums over the states, global memory
 * only, with knobs */

/* Tunable knobs: `#define NAME value` with the allowed values after
 * "knob:"; a tool may change the value, nothing else. */
#define SCAN_BLOCK 64 /* knob: 32 64 128 256 (scan threads per block) */
#define SUM_BLOCK 256 /* knob: 64 128 256 512 (threads per block for the sum) */

static __global__ void scan(const float *delta, const float *u, const float *a, const float *b,
                            const float *c, float *ch_s, int C, int M, int S)
{
    long t = (long)blockIdx.x * SCAN_BLOCK + threadIdx.x; /* (ch, s) */
    if (t >= (long)C * S)
        return;
    int ch = (int)(t / S), s = (int)(t % S);
    float h = 0.0f, as = a[(long)ch * S + s];
    float *row = ch_s + t * M;
    for (int m = 0; m < M; m++) {
        float dt = delta[(long)ch * M + m];
        h = expf(dt * as) * h + dt * b[(long)s * M + m] * u[(long)ch * M + m];
        row[m] = c[(long)s * M + m] * h;
    }
}

static __global__ void sum_states(const float *ch_s, float *out, int C, int M, int S)
{
    long t = (long)blockIdx.x * SUM_BLOCK + threadIdx.x; /* (ch, m) */
    if (t >= (long)C * M)
        return;
    int ch = (int)(t / M), m = (int)(t % M);
    float acc = 0.0f;
    for (int s = 0; s < S; s++)
        acc += ch_s[((long)ch * S + s) * M + m];
    out[t] = acc;
}

extern "C" void kernel(const float *delta, const float *u, const float *a, const float *b,
                       const float *c, float *out, int C, int M, int S)
{
    float *ch_s = NULL;
    long scans = (long)C * S, outs = (long)C * M;
    cudaMalloc((void **)&ch_s, sizeof(float) * (size_t)C * S * M);
    scan<<<(unsigned)((scans + SCAN_BLOCK - 1) / SCAN_BLOCK), SCAN_BLOCK>>>(delta, u, a, b, c, ch_s,
                                                                          C, M, S);
    sum_states<<<(unsigned)((outs + SUM_BLOCK - 1) / SUM_BLOCK), SUM_BLOCK>>>(ch_s, out, C, M, S);
    cudaFree(ch_s);
}
