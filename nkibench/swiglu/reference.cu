/* reference.cu - swiglu on the GPU, trusted: h = silu(x w_gate) * (x w_up)
 * per row in double (scratch), then out = h w_down in double, each sum in
 * reference.c's order (tests/cli/98-cuda-gpu.sh checks the two agree) */
static __global__ void hidden_ref(const float *x, const float *w_up, const float *w_gate, double *h,
                                  int M, int D, int F)
{
    int f = blockIdx.x * blockDim.x + threadIdx.x, i = blockIdx.y;
    if (f >= F)
        return;
    double up = 0.0, gate = 0.0;
    for (int d = 0; d < D; d++) {
        double xd = x[(long)i * D + d];
        up += xd * w_up[(long)d * F + f];
        gate += xd * w_gate[(long)d * F + f];
    }
    h[(long)i * F + f] = gate / (1.0 + exp(-gate)) * up;
}

static __global__ void down_ref(const double *h, const float *w_down, float *out, int M, int D, int F)
{
    int d = blockIdx.x * blockDim.x + threadIdx.x, i = blockIdx.y;
    if (d >= D)
        return;
    double acc = 0.0;
    for (int f = 0; f < F; f++)
        acc += h[(long)i * F + f] * w_down[(long)f * D + d];
    out[(long)i * D + d] = (float)acc;
}

extern "C" void kernel(const float *x, const float *w_up, const float *w_gate, const float *w_down,
                       float *out, int M, int D, int F)
{
    double *h = NULL;
    if (cudaMalloc((void **)&h, sizeof(double) * (size_t)M * F) != cudaSuccess)
        return; /* the outputs stay poisoned: the profiler says the reference failed */
    hidden_ref<<<dim3((unsigned)((F + 255) / 256), (unsigned)M), 256>>>(x, w_up, w_gate, h, M, D, F);
    down_ref<<<dim3((unsigned)((D + 255) / 256), (unsigned)M), 256>>>(h, w_down, out, M, D, F);
    cudaFree(h);
}
