/* reference.cu - silu on the GPU, trusted: computed in double, as
 * reference.c is (tests/cli/97-cuda.sh checks the two agree at tiny) */
static __global__ void silu_ref(const float *x, float *out, long n)
{
    for (long i = (long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) {
        double v = x[i];
        out[i] = (float)(v / (1.0 + exp(-v)));
    }
}

extern "C" void kernel(const float *x, float *out, int M, int N)
{
    long n = (long)M * N;
    silu_ref<<<1024, 256>>>(x, out, n);
}
