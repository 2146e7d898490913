/* baseline.cu - rope_single_freq_apply: a first straightforward CUDA port,
 * one thread per rotated pair (or a few), global memory only, with knobs */

/* Tunable knobs: `#define NAME value` with the allowed values after
 * "knob:"; a tool may change the value, nothing else. */
#define BLOCK 256    /* knob: 64 128 256 512 1024 (threads per block) */
#define PER_THREAD 1 /* knob: 1 2 4 8 (pairs per thread) */

static __global__ void rope_kernel(const float *x, const float *c_, const float *s_, float *out,
                                   long n)
{
    long first = ((long)blockIdx.x * BLOCK + threadIdx.x) * PER_THREAD;
    for (int u = 0; u < PER_THREAD; u++) {
        long top = first + u, bot = top + n;
        if (top >= n)
            return;
        float x0 = x[top], x1 = x[bot], c = c_[top], s = s_[top];
        out[top] = x0 * c - x1 * s;
        out[bot] = x0 * s + x1 * c;
    }
}

extern "C" void kernel(const float *x, const float *cos, const float *sin, float *out, int R, int L,
                       int H)
{
    long n = (long)H * L, per_block = (long)BLOCK * PER_THREAD;
    (void)R;
    rope_kernel<<<(unsigned)((n + per_block - 1) / per_block), BLOCK>>>(x, cos, sin, out, n);
}
