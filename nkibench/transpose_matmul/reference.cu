/* reference.cu - transpose_matmul on the GPU, trusted: out = lhs^T rhs, each
 * output a plain sum over k in double, as reference.c computes it
 * (tests/cli/98-cuda-gpu.sh checks the two agree) */
static __global__ void tmm_ref(const float *lhs, const float *rhs, float *out, int K, int M, int N)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x, i = blockIdx.y;
    if (j >= N)
        return;
    double acc = 0.0;
    for (int k = 0; k < K; k++)
        acc += (double)lhs[(long)k * M + i] * (double)rhs[(long)k * N + j];
    out[(long)i * N + j] = (float)acc;
}

extern "C" void kernel(const float *lhs, const float *rhs, float *out, int K, int M, int N)
{
    tmm_ref<<<dim3((unsigned)((N + 255) / 256), (unsigned)M), 256>>>(lhs, rhs, out, K, M, N);
}
