/* vector_loads.cu - silu: a memory-bound kernel written for bandwidth.
 * Each thread moves 16-byte vectors (float4) through a grid-stride loop,
 * with a grid sized to keep every SM's memory pipeline full, and the
 * arithmetic (one exp and one divide per element) hides under the loads.
 * The tensors start on 64-byte boundaries, so the float4 view of x and out
 * is aligned; a tail of fewer than four elements is done one by one. */

#define THREADS 256
#define BLOCKS_PER_SM 8

static __device__ __forceinline__ float silu(float v)
{
    return v / (1.0f + expf(-v));
}

static __global__ void __launch_bounds__(THREADS)
    silu_vectors(const float4 *__restrict__ x, float4 *__restrict__ out, long vectors,
                 const float *__restrict__ xs, float *__restrict__ outs, long n)
{
    long stride = (long)gridDim.x * THREADS;
    for (long i = (long)blockIdx.x * THREADS + threadIdx.x; i < vectors; i += stride) {
        float4 v = x[i];
        out[i] = make_float4(silu(v.x), silu(v.y), silu(v.z), silu(v.w));
    }
    /* the tail: at most three elements, by the first threads of block 0 */
    long t = vectors * 4 + threadIdx.x;
    if (blockIdx.x == 0 && t < n)
        outs[t] = silu(xs[t]);
}

extern "C" void kernel(const float *x, float *out, int M, int N)
{
    long n = (long)M * N, vectors = n / 4;
    int sms = 0;
    if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0) != cudaSuccess || sms < 1)
        sms = 132;
    long want = (vectors + THREADS - 1) / THREADS, blocks = (long)sms * BLOCKS_PER_SM;
    if (want < blocks)
        blocks = want > 0 ? want : 1;
    silu_vectors<<<(unsigned)blocks, THREADS>>>((const float4 *)x, (float4 *)out, vectors, x, out,
                                                n);
}
