/* reference.cu - rope_single_freq_apply on the GPU, trusted: the rotation in
 * double, as reference.c computes it (tests/cli/98-cuda-gpu.sh checks the
 * two agree) */
static __global__ void rope_ref(const float *x, const float *c_, const float *s_, float *out, int L,
                                int H)
{
    long n = (long)H * L;
    for (long t = (long)blockIdx.x * blockDim.x + threadIdx.x; t < n; t += (long)gridDim.x * blockDim.x) {
        long top = t, bot = t + (long)H * L;
        double x0 = x[top], x1 = x[bot], c = c_[top], s = s_[top];
        out[top] = (float)(x0 * c - x1 * s);
        out[bot] = (float)(x0 * s + x1 * c);
    }
}

extern "C" void kernel(const float *x, const float *cos, const float *sin, float *out, int R, int L,
                       int H)
{
    (void)R;
    rope_ref<<<1024, 256>>>(x, cos, sin, out, L, H);
}
