/* reference.cu - adamw on the GPU, trusted: the step in double, as
 * reference.c computes it (tests/cli/98-cuda-gpu.sh checks the two agree) */
static __global__ void adamw_ref(const float *theta, const float *grad, const float *m,
                                 const float *v, float *out, long n)
{
    for (long i = (long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) {
        double t1 = (double)theta[i] - 1e-5 * theta[i];
        double m1 = 0.9 * m[i] + 0.1 * grad[i];
        double v1 = 0.999 * v[i] + 0.001 * (double)grad[i] * grad[i];
        out[i] = (float)(t1 - 0.01 * m1 / (sqrt(1000.0 * v1) + 1e-8));
    }
}

extern "C" void kernel(const float *theta, const float *grad, const float *m, const float *v,
                       float *out, int R, int C)
{
    adamw_ref<<<1024, 256>>>(theta, grad, m, v, out, (long)R * C);
}
