/* baseline.cu - silu: a first straightforward CUDA port, one thread per
 * element (or a few), global memory only, with knobs */

/* Tunable knobs: `#define NAME value` with the allowed values after
 * "knob:"; a tool may change the value, nothing else. */
#define BLOCK 256 /* knob: 64 128 256 512 1024 (threads per block) */
#define PER_THREAD 1 /* knob: 1 2 4 8 (elements per thread) */

static __global__ void silu_kernel(const float *x, float *out, long n)
{
    long first = ((long)blockIdx.x * BLOCK + threadIdx.x) * PER_THREAD;
    for (int u = 0; u < PER_THREAD; u++) {
        long i = first + u;
        if (i < n)
            out[i] = x[i] / (1.0f + expf(-x[i]));
    }
}

extern "C" void kernel(const float *x, float *out, int M, int N)
{
    long n = (long)M * N;
    long per_block = (long)BLOCK * PER_THREAD;
    silu_kernel<<<(unsigned)((n + per_block - 1) / per_block), BLOCK>>>(x, out, n);
}
