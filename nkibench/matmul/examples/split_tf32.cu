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
 * Each block of 256 threads (8 warps) computes a 128x128 tile of out,
 * taking k 32 at a time through shared memory; each warp owns a 64x32
 * patch: 4x2 WMMA accumulators of 16x16.  The next slice is read from
 * memory into registers while the tensor cores work on the current one.
 * Any shape works: edges are zero-filled on load and masked on store
 * (each warp's results go through shared memory to be masked). */
#include <mma.h>

using namespace nvcuda;

#define BM 128
#define BN 128
#define BK 32
#define THREADS 256
#define APAD 4 /* row padding of the shared tiles, in floats: no bank conflicts */
#define BPAD 4
#define PER_THREAD (BM * BK / THREADS) /* elements of each operand a thread loads: 16 */

typedef wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major> frag_a;
typedef wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::row_major> frag_b;
typedef wmma::fragment<wmma::accumulator, 16, 16, 8, float> frag_c;

struct tiles {
    float a[BM][BK + APAD]; /* lhs rows m0.., k0.. */
    float b[BK][BN + BPAD]; /* rhs rows k0.., columns n0.. */
};

/* One thread's share of the slice at k0, zero outside the matrices:
 * consecutive threads read consecutive addresses of a row. */
static __device__ __forceinline__ void fetch(float *ra, float *rb, const float *__restrict__ lhs,
                                             const float *__restrict__ rhs, int M, int K, int N,
                                             int m0, int n0, int k0)
{
#pragma unroll
    for (int r = 0; r < PER_THREAD; r++) {
        int e = threadIdx.x + r * THREADS;
        int am = m0 + e / BK, ak = k0 + e % BK; /* lhs: 128 rows of 32 */
        int bk = k0 + e / BN, bn = n0 + e % BN; /* rhs: 32 rows of 128 */
        ra[r] = am < M && ak < K ? lhs[(long)am * K + ak] : 0.0f;
        rb[r] = bk < K && bn < N ? rhs[(long)bk * N + bn] : 0.0f;
    }
}

static __device__ __forceinline__ void store(struct tiles *s, const float *ra, const float *rb)
{
#pragma unroll
    for (int r = 0; r < PER_THREAD; r++) {
        int e = threadIdx.x + r * THREADS;
        s->a[e / BK][e % BK] = ra[r];
        s->b[e / BN][e % BN] = rb[r];
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

static __global__ void __launch_bounds__(THREADS)
    matmul_3xtf32(const float *__restrict__ lhs, const float *__restrict__ rhs, float *__restrict__ out,
                  int M, int K, int N)
{
    extern __shared__ __align__(128) unsigned char smem[];
    struct tiles *s = (struct tiles *)smem;
    int warp = threadIdx.x / 32, wm = warp / 4, wn = warp % 4; /* 2 x 4 warps */
    int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
    float ra[PER_THREAD], rb[PER_THREAD];
    frag_c acc[4][2];

#pragma unroll
    for (int i = 0; i < 4; i++)
#pragma unroll
        for (int j = 0; j < 2; j++)
            wmma::fill_fragment(acc[i][j], 0.0f);
    fetch(ra, rb, lhs, rhs, M, K, N, m0, n0, 0);
    for (int k0 = 0; k0 < K; k0 += BK) {
        __syncthreads(); /* every warp is done with the last slice */
        store(s, ra, rb);
        __syncthreads();
        if (k0 + BK < K) /* the next slice on its way while this one is used */
            fetch(ra, rb, lhs, rhs, M, K, N, m0, n0, k0 + BK);
        frag_c part[4][2];
#pragma unroll
        for (int i = 0; i < 4; i++)
#pragma unroll
            for (int j = 0; j < 2; j++)
                wmma::fill_fragment(part[i][j], 0.0f);
#pragma unroll
        for (int kk = 0; kk < BK; kk += 8) {
            frag_a ah[4], al[4];
            frag_b bh[2], bl[2];
#pragma unroll
            for (int i = 0; i < 4; i++) {
                wmma::load_matrix_sync(ah[i], &s->a[wm * 64 + i * 16][kk], BK + APAD);
                split(ah[i], al[i]);
            }
#pragma unroll
            for (int j = 0; j < 2; j++) {
                wmma::load_matrix_sync(bh[j], &s->b[kk][wn * 32 + j * 16], BN + BPAD);
                split(bh[j], bl[j]);
            }
#pragma unroll
            for (int i = 0; i < 4; i++)
#pragma unroll
                for (int j = 0; j < 2; j++) {
                    wmma::mma_sync(part[i][j], al[i], bh[j], part[i][j]);
                    wmma::mma_sync(part[i][j], ah[i], bl[j], part[i][j]);
                    wmma::mma_sync(part[i][j], ah[i], bh[j], part[i][j]);
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
    __syncthreads();
    float *mine = (float *)smem + warp * 16 * 16;
#pragma unroll
    for (int i = 0; i < 4; i++)
#pragma unroll
        for (int j = 0; j < 2; j++) {
            int r0 = m0 + wm * 64 + i * 16, c0 = n0 + wn * 32 + j * 16;
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
    int bytes = (int)sizeof(struct tiles);
    dim3 grid((unsigned)((N + BN - 1) / BN), (unsigned)((M + BM - 1) / BM));

    cudaFuncSetAttribute(matmul_3xtf32, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
    matmul_3xtf32<<<grid, THREADS, bytes>>>(lhs, rhs, out, M, K, N);
}
