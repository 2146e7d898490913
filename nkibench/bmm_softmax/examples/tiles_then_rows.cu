/* tiles_then_rows.cu - bmm_softmax in two kernels.  The scores of each
 * head come from fp32 SIMT tiles (128x128 per block, k through shared
 * memory 8 at a time, an 8x8 patch per thread, every product an fp32 FMA
 * in k order) and are written to out; then one block per row takes the
 * row's maximum and sum with warp shuffles and rewrites it normalized.
 * Rows of up to 4096 floats stay in registers between the passes, so out
 * is read once and written twice; longer rows (or odd lengths) are read
 * again from cache.  Any shape works: tile edges are zero-filled and
 * masked, float4 is used only where a row's length keeps it aligned. */

#define BM 128
#define BN 128
#define BK 8
#define THREADS 256
#define ROW_VECTORS 4 /* float4s a thread holds: rows up to 4*4*256 = 4096 */

static __device__ __forceinline__ int part(int t, int i)
{
    return (i < 4 ? 0 : 64) + t * 4 + (i & 3); /* two groups of four, 64 apart */
}

static __global__ void __launch_bounds__(THREADS)
    scores(const float *__restrict__ lhs, const float *__restrict__ rhs, float *__restrict__ out,
           int M, int K, int N)
{
    __shared__ __align__(16) float as[BK][BM]; /* lhs slice, transposed */
    __shared__ __align__(16) float bs[BK][BN];
    const int tid = threadIdx.x, ty = tid / 16, tx = tid % 16;
    const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
    const float *l = lhs + (long)blockIdx.z * M * K, *r = rhs + (long)blockIdx.z * K * N;
    float *o = out + (long)blockIdx.z * M * N;
    const int ar = m0 + (tid >> 1), ak0 = (tid & 1) * 4, bk0 = tid >> 5, bc = n0 + (tid & 31) * 4;
    float acc[8][8] = {};

    for (int k0 = 0; k0 < K; k0 += BK) {
        int ak = k0 + ak0, bk = k0 + bk0;
        float a[4], b[4];
        if (ar < M && (K & 3) == 0 && ak < K) {
            float4 v = *(const float4 *)(l + (long)ar * K + ak);
            a[0] = v.x, a[1] = v.y, a[2] = v.z, a[3] = v.w;
        } else {
            for (int q = 0; q < 4; q++)
                a[q] = ar < M && ak + q < K ? l[(long)ar * K + ak + q] : 0.0f;
        }
        if (bk < K && (N & 3) == 0 && bc < N) {
            float4 v = *(const float4 *)(r + (long)bk * N + bc);
            b[0] = v.x, b[1] = v.y, b[2] = v.z, b[3] = v.w;
        } else {
            for (int q = 0; q < 4; q++)
                b[q] = bk < K && bc + q < N ? r[(long)bk * N + bc + q] : 0.0f;
        }
        __syncthreads(); /* everyone is done with the previous slice */
        for (int q = 0; q < 4; q++)
            as[ak0 + q][tid >> 1] = a[q];
        *(float4 *)&bs[bk0][(tid & 31) * 4] = make_float4(b[0], b[1], b[2], b[3]);
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BK; k++) {
            float x[8], y[8];
            float4 lo = *(const float4 *)&as[k][part(ty, 0)], hi = *(const float4 *)&as[k][part(ty, 4)];
            x[0] = lo.x, x[1] = lo.y, x[2] = lo.z, x[3] = lo.w;
            x[4] = hi.x, x[5] = hi.y, x[6] = hi.z, x[7] = hi.w;
            lo = *(const float4 *)&bs[k][part(tx, 0)];
            hi = *(const float4 *)&bs[k][part(tx, 4)];
            y[0] = lo.x, y[1] = lo.y, y[2] = lo.z, y[3] = lo.w;
            y[4] = hi.x, y[5] = hi.y, y[6] = hi.z, y[7] = hi.w;
#pragma unroll
            for (int i = 0; i < 8; i++)
#pragma unroll
                for (int j = 0; j < 8; j++)
                    acc[i][j] = fmaf(x[i], y[j], acc[i][j]);
        }
    }
    for (int i = 0; i < 8; i++) {
        int row = m0 + part(ty, i);
        if (row >= M)
            continue;
        for (int h = 0; h < 8; h += 4) {
            int col = n0 + part(tx, h);
            if ((N & 3) == 0 && col + 3 < N) {
                *(float4 *)(o + (long)row * N + col) =
                    make_float4(acc[i][h], acc[i][h + 1], acc[i][h + 2], acc[i][h + 3]);
            } else {
                for (int q = 0; q < 4; q++)
                    if (col + q < N)
                        o[(long)row * N + col + q] = acc[i][h + q];
            }
        }
    }
}

/* The block's maximum (want_max) or sum of v, in every thread. */
static __device__ __forceinline__ float block_reduce(float v, int want_max, float *spare)
{
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    for (int d = 16; d > 0; d >>= 1) {
        float o = __shfl_xor_sync(0xffffffffu, v, d);
        v = want_max ? fmaxf(v, o) : v + o;
    }
    __syncthreads(); /* spare may still hold the previous reduction's values */
    if (lane == 0)
        spare[warp] = v;
    __syncthreads();
    v = spare[0];
    for (int w = 1; w < THREADS / 32; w++)
        v = want_max ? fmaxf(v, spare[w]) : v + spare[w];
    return v;
}

static __global__ void __launch_bounds__(THREADS) softmax_rows(float *out, int N)
{
    __shared__ float spare[THREADS / 32];
    float *s = out + (long)blockIdx.x * N;
    const int tid = threadIdx.x;
    float mx = -INFINITY, sum = 0.0f;

    if ((N & 3) == 0 && N <= ROW_VECTORS * 4 * THREADS) {
        float4 v[ROW_VECTORS];
        const int nv = N / 4;
#pragma unroll
        for (int u = 0; u < ROW_VECTORS; u++) {
            int i = tid + u * THREADS;
            v[u] = i < nv ? ((const float4 *)s)[i] : make_float4(-INFINITY, -INFINITY, -INFINITY, -INFINITY);
            mx = fmaxf(mx, fmaxf(fmaxf(v[u].x, v[u].y), fmaxf(v[u].z, v[u].w)));
        }
        mx = block_reduce(mx, 1, spare);
#pragma unroll
        for (int u = 0; u < ROW_VECTORS; u++) {
            if (tid + u * THREADS < nv) {
                v[u] = make_float4(expf(v[u].x - mx), expf(v[u].y - mx), expf(v[u].z - mx),
                                   expf(v[u].w - mx));
                sum += (v[u].x + v[u].y) + (v[u].z + v[u].w);
            }
        }
        float inv = 1.0f / block_reduce(sum, 0, spare);
#pragma unroll
        for (int u = 0; u < ROW_VECTORS; u++) {
            int i = tid + u * THREADS;
            if (i < nv)
                ((float4 *)s)[i] = make_float4(v[u].x * inv, v[u].y * inv, v[u].z * inv, v[u].w * inv);
        }
        return;
    }
    for (int j = tid; j < N; j += THREADS)
        mx = fmaxf(mx, s[j]);
    mx = block_reduce(mx, 1, spare);
    for (int j = tid; j < N; j += THREADS)
        sum += expf(s[j] - mx);
    float inv = 1.0f / block_reduce(sum, 0, spare);
    for (int j = tid; j < N; j += THREADS)
        s[j] = expf(s[j] - mx) * inv;
}

extern "C" void kernel(const float *lhs, const float *rhs, float *out, int B, int M, int K, int N)
{
    dim3 grid((unsigned)((N + BN - 1) / BN), (unsigned)((M + BM - 1) / BM), (unsigned)B);
    scores<<<grid, THREADS>>>(lhs, rhs, out, M, K, N);
    softmax_rows<<<(unsigned)((long)B * M), THREADS>>>(out, N);
}
