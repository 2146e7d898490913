/* split_tf32.cu - matmul on the tensor cores at fp32's accuracy (3xTF32).
 * A TF32 product keeps 10 bits of each operand's mantissa: alone it misses
 * the 2e-5 tolerance.  Each operand is split into a TF32 head and the TF32
 * rounding of what the head left out, x = hi + lo, and
 *     a*b ~ a_hi*b_hi + a_hi*b_lo + a_lo*b_hi
 * (a_lo*b_lo is below fp32's rounding), every product accumulated in fp32
 * on the tensor cores: three tensor-core products cost less than one
 * product on the CUDA cores.  The small terms go first, so the large one
 * does not swamp them.  The tensor cores' own sums are not rounded to
 * nearest: over all of k (5120 at paper) their error grew to 7e-5, so
 * each slice of 32 k is summed on the tensor cores from zero and added to
 * the running sums in fp32 on the CUDA cores.
 *
 * Each block of 256 threads (8 warps) computes a 128x128 tile of out;
 * each warp a 64x32 patch, 4x2 WMMA tiles of 16x16 (64 running sums and
 * 64 of the slice's a thread, and one row of tiles' lhs fragments at a
 * time, so nothing spills).  k comes 32 at a time through a ring of four
 * shared-memory stages filled by asynchronous copies (cp.async), three
 * slices in flight while the tensor cores work on the fourth: the first
 * version of this example loaded through registers and spilled at 255 of
 * them.  Blocks run in groups of eight block-rows, so the ones in the GPU
 * at once share their rows of lhs and columns of rhs in the L2.
 *
 * Any shape works: a copy out of bounds fills zeros, and stores are
 * masked (each warp's results go through shared memory).  16-byte copies
 * where K and N keep the rows aligned (every tensor starts on a 64-byte
 * boundary), 4-byte ones otherwise. */
#include <cuda_pipeline.h>
#include <mma.h>
#include <stdint.h>

using namespace nvcuda;

#define BM 128
#define BN 128
#define BK 32
#define STAGES 4
#define THREADS 256
#define GROUP_M 8
#define AS (BK + 4) /* a shared row of lhs, in floats: 36 (WMMA wants a multiple of 4) */
#define BS (BN + 8) /* of rhs: 136 */
#define STAGE_FLOATS (BM * AS + BK * BS)

typedef wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major> frag_a;
typedef wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::row_major> frag_b;
typedef wmma::fragment<wmma::accumulator, 16, 16, 8, float> frag_c;

/* The slice at k0 into stage s: lhs rows m0.. (128 x 32), rhs rows k0..
 * (32 x 128), V floats a copy, zeros outside the matrices.  Each thread's
 * copies are rows apart from its first, so it keeps one address of each. */
template <int V>
static __device__ __forceinline__ void load_slice(float *s, const float *__restrict__ lhs,
                                                  const float *__restrict__ rhs, int M, int K, int N,
                                                  int m0, int n0, int k0)
{
    float *a = s, *b = s + BM * AS;
    int arow = threadIdx.x / (BK / V), acol = threadIdx.x % (BK / V) * V;
    int brow = threadIdx.x / (BN / V), bcol = threadIdx.x % (BN / V) * V;
    const float *pa = lhs + (long)(m0 + arow) * K + k0 + acol, *pb = rhs + (long)(k0 + brow) * N + n0 + bcol;
    const int astep = THREADS / (BK / V), bstep = THREADS / (BN / V);

#pragma unroll
    for (int r = 0; r < BM * BK / V / THREADS; r++) {
        bool ok = m0 + arow + r * astep < M && k0 + acol < K;
        __pipeline_memcpy_async(a + (arow + r * astep) * AS + acol, ok ? pa + (long)r * astep * K : lhs,
                                4 * V, ok ? 0 : 4 * V);
    }
#pragma unroll
    for (int r = 0; r < BK * BN / V / THREADS; r++) {
        bool ok = k0 + brow + r * bstep < K && n0 + bcol < N;
        __pipeline_memcpy_async(b + (brow + r * bstep) * BS + bcol, ok ? pb + (long)r * bstep * N : rhs,
                                4 * V, ok ? 0 : 4 * V);
    }
}

/* x = hi + lo, each a TF32 value */
template <typename F> static __device__ __forceinline__ void split(F &hi, F &lo)
{
#pragma unroll
    for (int i = 0; i < hi.num_elements; i++) {
        float x = hi.x[i], h = wmma::__float_to_tf32(x);
        hi.x[i] = h;
        lo.x[i] = wmma::__float_to_tf32(x - h);
    }
}

template <int V>
static __global__ void __launch_bounds__(THREADS, 1)
    matmul_3xtf32(const float *__restrict__ lhs, const float *__restrict__ rhs, float *__restrict__ out,
                  int M, int K, int N)
{
    extern __shared__ __align__(128) float smem[];
    int warp = threadIdx.x / 32, wm = warp / 4 * 64, wn = warp % 4 * 32; /* 2 x 4 warps */
    /* the block's tile: groups of GROUP_M block-rows, column by column */
    int tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN, id = blockIdx.x;
    int first = id / (GROUP_M * tiles_n) * GROUP_M, in = id % (GROUP_M * tiles_n);
    int rows = tiles_m - first < GROUP_M ? tiles_m - first : GROUP_M;
    int m0 = (first + in % rows) * BM, n0 = in / rows * BN;
    int slices = (K + BK - 1) / BK;
    frag_c acc[4][2], part[4][2];

#pragma unroll
    for (int i = 0; i < 4; i++)
#pragma unroll
        for (int j = 0; j < 2; j++)
            wmma::fill_fragment(acc[i][j], 0.0f);
    /* the first STAGES-1 slices on their way */
#pragma unroll
    for (int s = 0; s < STAGES - 1; s++) {
        if (s < slices)
            load_slice<V>(smem + s * STAGE_FLOATS, lhs, rhs, M, K, N, m0, n0, s * BK);
        __pipeline_commit();
    }
    for (int kt = 0; kt < slices; kt++) {
        __pipeline_wait_prior(STAGES - 2); /* slice kt has landed (our copies) */
        __syncthreads();                   /* everyone's; and slice kt-1's stage is free */
        if (kt + STAGES - 1 < slices)
            load_slice<V>(smem + (kt + STAGES - 1) % STAGES * STAGE_FLOATS, lhs, rhs, M, K, N, m0, n0,
                          (kt + STAGES - 1) * BK);
        __pipeline_commit();
        const float *a = smem + kt % STAGES * STAGE_FLOATS, *b = a + BM * AS;
#pragma unroll
        for (int i = 0; i < 4; i++)
#pragma unroll
            for (int j = 0; j < 2; j++)
                wmma::fill_fragment(part[i][j], 0.0f);
#pragma unroll
        for (int kk = 0; kk < BK; kk += 8) {
            frag_a ah, al;
            frag_b bh[2], bl[2];
#pragma unroll
            for (int j = 0; j < 2; j++) {
                wmma::load_matrix_sync(bh[j], b + kk * BS + wn + j * 16, BS);
                split(bh[j], bl[j]);
            }
            /* one row of tiles at a time: fewer fragments live */
#pragma unroll
            for (int i = 0; i < 4; i++) {
                wmma::load_matrix_sync(ah, a + (wm + i * 16) * AS + kk, AS);
                split(ah, al);
#pragma unroll
                for (int j = 0; j < 2; j++) {
                    wmma::mma_sync(part[i][j], al, bh[j], part[i][j]);
                    wmma::mma_sync(part[i][j], ah, bl[j], part[i][j]);
                    wmma::mma_sync(part[i][j], ah, bh[j], part[i][j]);
                }
            }
        }
#pragma unroll
        for (int i = 0; i < 4; i++)
#pragma unroll
            for (int j = 0; j < 2; j++)
#pragma unroll
                for (int e = 0; e < acc[i][j].num_elements; e++)
                    acc[i][j].x[e] += part[i][j].x[e];
    }
    /* each warp's 16x16 results through its own corner of shared memory,
     * then to out where they fall inside it */
    __pipeline_wait_prior(0);
    __syncthreads();
    float *mine = smem + warp * 16 * 16;
#pragma unroll
    for (int i = 0; i < 4; i++)
#pragma unroll
        for (int j = 0; j < 2; j++) {
            int r0 = m0 + wm + i * 16, c0 = n0 + wn + j * 16;
            wmma::store_matrix_sync(mine, acc[i][j], 16, wmma::mem_row_major);
            __syncwarp();
            for (int e = threadIdx.x % 32; e < 256; e += 32) {
                int r = r0 + e / 16, c = c0 + e % 16;
                if (r < M && c < N)
                    out[(long)r * N + c] = mine[e];
            }
            __syncwarp();
        }
}

extern "C" void kernel(const float *lhs, const float *rhs, float *out, int M, int K, int N)
{
    int bytes = STAGES * STAGE_FLOATS * (int)sizeof(float);
    unsigned blocks = (unsigned)(((M + BM - 1) / BM) * ((N + BN - 1) / BN));
    /* 16-byte copies where every row starts on a 16-byte boundary */
    bool v4 = K % 4 == 0 && N % 4 == 0 && (uintptr_t)lhs % 16 == 0 && (uintptr_t)rhs % 16 == 0;
    /* once per process: asked every call, it waits on the device (a
     * 28 us call at tiny took 250 us more on the host) */
    static bool sized;

    if (blocks == 0)
        return;
    if (!sized) {
        cudaFuncSetAttribute(matmul_3xtf32<4>, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
        cudaFuncSetAttribute(matmul_3xtf32<1>, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
        sized = true;
    }
    if (v4)
        matmul_3xtf32<4><<<blocks, THREADS, bytes>>>(lhs, rhs, out, M, K, N);
    else
        matmul_3xtf32<1><<<blocks, THREADS, bytes>>>(lhs, rhs, out, M, K, N);
}
