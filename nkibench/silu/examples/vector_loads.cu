/* vector_loads.cu - silu: a memory-bound kernel written for bandwidth.
 * Each thread moves UNROLL 16-byte vectors (float4): it issues all of its
 * loads before it computes, so every thread keeps several loads in flight
 * and HBM's latency is covered by far fewer resident warps than one load a
 * thread needs.  Loads and stores are marked streaming (each byte is
 * touched once: no use keeping it in the caches).  The grid covers the
 * tensor once, consecutive threads on consecutive vectors at each step, so
 * every warp's accesses are whole 512-byte runs.  The arithmetic (one exp
 * and one divide per element) hides under the memory traffic.  The tensors
 * start on 64-byte boundaries, so the float4 view of x and out is aligned;
 * a tail of fewer than four elements is done one by one. */

#define THREADS 256
#define UNROLL 4

static __device__ __forceinline__ float silu(float v)
{
    return v / (1.0f + expf(-v));
}

static __global__ void __launch_bounds__(THREADS)
    silu_vectors(const float4 *__restrict__ x, float4 *__restrict__ out, long vectors,
                 const float *__restrict__ xs, float *__restrict__ outs, long n)
{
    /* block b covers vectors [b * THREADS * UNROLL, (b + 1) * THREADS * UNROLL) */
    long base = (long)blockIdx.x * THREADS * UNROLL + threadIdx.x;
    float4 v[UNROLL];

#pragma unroll
    for (int u = 0; u < UNROLL; u++) {
        long i = base + (long)u * THREADS;
        if (i < vectors)
            v[u] = __ldcs(x + i);
    }
#pragma unroll
    for (int u = 0; u < UNROLL; u++) {
        long i = base + (long)u * THREADS;
        if (i < vectors)
            __stcs(out + i, make_float4(silu(v[u].x), silu(v[u].y), silu(v[u].z), silu(v[u].w)));
    }
    /* the tail: at most three elements, by the first threads of block 0 */
    long t = vectors * 4 + threadIdx.x;
    if (blockIdx.x == 0 && t < n)
        outs[t] = silu(xs[t]);
}

extern "C" void kernel(const float *x, float *out, int M, int N)
{
    long n = (long)M * N, vectors = n / 4;
    long per_block = (long)THREADS * UNROLL;
    long blocks = (vectors + per_block - 1) / per_block;

    silu_vectors<<<(unsigned)(blocks > 0 ? blocks : 1), THREADS>>>((const float4 *)x, (float4 *)out,
                                                                  vectors, x, out, n);
}
