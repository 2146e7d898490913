/* reference.cu - matmul on the GPU, trusted: each output a plain sum over
 * k in double, in k's order, as reference.c computes it (tests/cli/
 * 98-cuda-gpu.sh checks the two agree on every input set).  Tiles of both
 * operands pass through shared memory, so each input is read from memory
 * once per tile rather than once per output row: a row-per-block version
 * read rhs (252 MB at paper) 4096 times, about a second a call. */
#define TILE 64 /* outputs per block side: 256 threads, 4x4 outputs each */
#define KTILE 16

static __global__ void matmul_ref(const float *lhs, const float *rhs, float *out, int M, int K,
                                  int N)
{
    __shared__ double a[TILE][KTILE + 1], b[KTILE][TILE];
    int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
    long i0 = (long)blockIdx.y * TILE, j0 = (long)blockIdx.x * TILE;
    double acc[4][4];

    for (int x = 0; x < 4; x++)
        for (int y = 0; y < 4; y++)
            acc[x][y] = 0.0;
    for (int k0 = 0; k0 < K; k0 += KTILE) {
        for (int e = threadIdx.x; e < TILE * KTILE; e += 256) {
            long i = i0 + e / KTILE;
            int k = k0 + e % KTILE;
            a[e / KTILE][e % KTILE] = i < M && k < K ? (double)lhs[i * K + k] : 0.0;
        }
        for (int e = threadIdx.x; e < KTILE * TILE; e += 256) {
            int k = k0 + e / TILE;
            long j = j0 + e % TILE;
            b[e / TILE][e % TILE] = k < K && j < N ? (double)rhs[(long)k * N + j] : 0.0;
        }
        __syncthreads();
        /* each output's terms added one k after another, as in reference.c */
        for (int kk = 0; kk < KTILE && k0 + kk < K; kk++)
            for (int x = 0; x < 4; x++)
                for (int y = 0; y < 4; y++)
                    acc[x][y] += a[ty * 4 + x][kk] * b[kk][tx * 4 + y];
        __syncthreads();
    }
    for (int x = 0; x < 4; x++)
        for (int y = 0; y < 4; y++) {
            long i = i0 + ty * 4 + x, j = j0 + tx * 4 + y;
            if (i < M && j < N)
                out[i * N + j] = (float)acc[x][y];
        }
}

extern "C" void kernel(const float *lhs, const float *rhs, float *out, int M, int K, int N)
{
    dim3 grid((unsigned)((N + TILE - 1) / TILE), (unsigned)((M + TILE - 1) / TILE));
    matmul_ref<<<grid, 256>>>(lhs, rhs, out, M, K, N);
}
