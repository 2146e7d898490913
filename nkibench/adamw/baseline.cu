/* baseline.cu - adamw: a first straightforward CUDA port, one thread per
 * element (or a few), global memory only, with knobs */

/* Tunable knobs: `#define NAME value` with the allowed values after
 * "knob:"; a tool may change the value, nothing else. */
#define BLOCK 256    /* knob: 64 128 256 512 1024 (threads per block) */
#define PER_THREAD 1 /* knob: 1 2 4 8 (elements per thread) */

static __global__ void adamw_kernel(const float *theta, const float *grad, const float *m,
                                    const float *v, float *out, long n)
{
    long first = ((long)blockIdx.x * BLOCK + threadIdx.x) * PER_THREAD;
    for (int u = 0; u < PER_THREAD; u++) {
        long i = first + u;
        if (i >= n)
            return;
        float t1 = theta[i] - 1e-5f * theta[i];
        float m1 = 0.9f * m[i] + 0.1f * grad[i];
        float v1 = 0.999f * v[i] + 0.001f * grad[i] * grad[i];
        out[i] = t1 - 0.01f * m1 / (sqrtf(1000.0f * v1) + 1e-8f);
    }
}

extern "C" void kernel(const float *theta, const float *grad, const float *m, const float *v,
                       float *out, int R, int C)
{
    long n = (long)R * C, per_block = (long)BLOCK * PER_THREAD;
    adamw_kernel<<<(unsigned)((n + per_block - 1) / per_block), BLOCK>>>(theta, grad, m, v, out, n);
}
