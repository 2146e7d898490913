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
    /* the row's maximum, then the sum of its exponentials: each thread over
     * its own columns, then across the block (a serial scan by one thread
     * took seconds a call at the paper size) */
    for (int j = threadIdx.x; j < N; j += THREADS)
        mx = s[j] > mx ? s[j] : mx;
    part[threadIdx.x] = mx;
    __syncthreads();
    for (int w = THREADS / 2; w > 0; w /= 2) {
        if (threadIdx.x < w && part[threadIdx.x + w] > part[threadIdx.x])
            part[threadIdx.x] = part[threadIdx.x + w];
        __syncthreads();
    }
    mx = part[0];
    __syncthreads();
    for (int j = threadIdx.x; j < N; j += THREADS) {
        s[j] = exp(s[j] - mx);
        sum += s[j];
    }
    part[threadIdx.x] = sum;
    __syncthreads();
    for (int w = THREADS / 2; w > 0; w /= 2) {
        if (threadIdx.x < w)
            part[threadIdx.x] += part[threadIdx.x + w];
        __syncthreads();
    }
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
