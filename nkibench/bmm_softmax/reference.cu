/* reference.cu - bmm_softmax on the GPU, trusted: one block per row, the
 * row's scores in double in shared memory, max-subtracted softmax in
 * double, as reference.c computes it (tests/cli/97-cuda.sh checks the two
 * agree at tiny) */
#define THREADS 256

static __global__ void bmm_softmax_ref(const float *lhs, const float *rhs, float *out, int M,
                                       int K, int N)
{
    extern __shared__ double s[]; /* N scores, then THREADS partials */
    double *part = s + N;
    long row = blockIdx.x; /* b * M + i */
    int b = (int)(row / M);
    const float *l = lhs + row * K;
    double mx = -INFINITY, sum = 0.0;

    for (int j = threadIdx.x; j < N; j += THREADS) {
        double acc = 0.0;
        for (int k = 0; k < K; k++)
            acc += (double)l[k] * (double)rhs[((long)b * K + k) * N + j];
        s[j] = acc;
    }
    __syncthreads();
    /* every thread scans the whole row for the maximum and the sum: slow,
     * and the same order of additions in every thread */
    if (threadIdx.x == 0) {
        for (int j = 0; j < N; j++)
            mx = s[j] > mx ? s[j] : mx;
        for (int j = 0; j < N; j++) {
            s[j] = exp(s[j] - mx);
            sum += s[j];
        }
        part[0] = sum;
    }
    __syncthreads();
    sum = part[0];
    for (int j = threadIdx.x; j < N; j += THREADS)
        out[row * N + j] = (float)(s[j] / sum);
}

extern "C" void kernel(const float *lhs, const float *rhs, float *out, int B, int M, int K, int N)
{
    size_t smem = sizeof(double) * ((size_t)N + THREADS);
    cudaFuncSetAttribute(bmm_softmax_ref, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    bmm_softmax_ref<<<(unsigned)((long)B * M), THREADS, smem>>>(lhs, rhs, out, M, K, N);
}
