/* silu_spin.cu - silu, then the first thread waits SPIN_NS of the GPU's
 * own clock (%globaltimer) before its block ends: a kernel of a known
 * least length, to hold the profiler's host clock against the runner's
 * CUDA events at that length (tests/bench/gpu-session.sh, issue 26: the
 * host clock stayed 24-47 µs above the events at the paper size over two
 * leases, docs/BENCHMARKS.md). */
#define SPIN_NS 200000

static __global__ void silu_spin(const float *x, float *out, long n)
{
    long i = (long)blockIdx.x * blockDim.x + threadIdx.x;

    if (i < n)
        out[i] = x[i] / (1.0f + expf(-x[i]));
    if (i == 0) {
        unsigned long long t0, t;
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
        do
            asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
        while (t - t0 < SPIN_NS);
    }
}

extern "C" void kernel(const float *x, float *out, int M, int N)
{
    long n = (long)M * N;
    silu_spin<<<(unsigned)((n + 255) / 256), 256>>>(x, out, n);
}
