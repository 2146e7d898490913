/* packed_avx512.c - matmul, hand-written: how far % of peak can rise on one
 * core.  BLIS-style: B is packed into KC x 32 strips, A into 6 x KC strips,
 * and a 6 x 32 register tile (12 vector accumulators) runs over each pair;
 * the blocks keep a strip of B in L1, the block of A in L2.  GCC vector
 * extensions give 512-bit FMAs under -march=native on AVX-512 cores. */
#include <stdlib.h>
#include <string.h>

typedef float v16 __attribute__((vector_size(64)));
typedef float v16u __attribute__((vector_size(64), aligned(4)));

#define MR 6
#define NR 32
#define KC 256
#define MC 120 /* a multiple of MR */
#define NC 1024 /* a multiple of NR */

static void pack_b(const float *rhs, int N, int k0, int kc, int j0, int nc, float *bp)
{
    for (int jr = 0; jr < nc; jr += NR, bp += (long)kc * NR) {
        int w = nc - jr < NR ? nc - jr : NR;
        for (int k = 0; k < kc; k++) {
            const float *src = rhs + (long)(k0 + k) * N + j0 + jr;
            float *dst = bp + (long)k * NR;
            memcpy(dst, src, sizeof(float) * (size_t)w);
            if (w < NR)
                memset(dst + w, 0, sizeof(float) * (size_t)(NR - w));
        }
    }
}

static void pack_a(const float *lhs, int K, int i0, int mc, int k0, int kc, float *ap)
{
    for (int ir = 0; ir < mc; ir += MR, ap += (long)kc * MR) {
        int h = mc - ir < MR ? mc - ir : MR;
        for (int k = 0; k < kc; k++)
            for (int r = 0; r < MR; r++)
                ap[(long)k * MR + r] = r < h ? lhs[(long)(i0 + ir + r) * K + k0 + k] : 0.0f;
    }
}

/* c[0:h][0:w] (+)= a-strip (kc x MR) times b-strip (kc x NR) */
static void tile(int kc, const float *a, const float *b, float *c, int ldc, int h, int w,
                 int accumulate)
{
    v16 c00 = {0}, c01 = {0}, c10 = {0}, c11 = {0}, c20 = {0}, c21 = {0};
    v16 c30 = {0}, c31 = {0}, c40 = {0}, c41 = {0}, c50 = {0}, c51 = {0};

    for (int k = 0; k < kc; k++, a += MR, b += NR) {
        v16 b0 = *(const v16 *)b, b1 = *(const v16 *)(b + 16);
        c00 += b0 * a[0], c01 += b1 * a[0];
        c10 += b0 * a[1], c11 += b1 * a[1];
        c20 += b0 * a[2], c21 += b1 * a[2];
        c30 += b0 * a[3], c31 += b1 * a[3];
        c40 += b0 * a[4], c41 += b1 * a[4];
        c50 += b0 * a[5], c51 += b1 * a[5];
    }
    {
        v16 acc[MR][2] = {{c00, c01}, {c10, c11}, {c20, c21},
                          {c30, c31}, {c40, c41}, {c50, c51}};
        if (h == MR && w == NR) {
            for (int r = 0; r < MR; r++) {
                v16u *p = (v16u *)(c + (long)r * ldc);
                if (accumulate) {
                    p[0] += acc[r][0];
                    p[1] += acc[r][1];
                } else {
                    p[0] = acc[r][0];
                    p[1] = acc[r][1];
                }
            }
        } else {
            for (int r = 0; r < h; r++)
                for (int j = 0; j < w; j++) {
                    float v = acc[r][j / 16][j % 16];
                    c[(long)r * ldc + j] = accumulate ? c[(long)r * ldc + j] + v : v;
                }
        }
    }
}

void kernel(const float *lhs, const float *rhs, float *out, int M, int K, int N)
{
    float *bp = aligned_alloc(64, sizeof(float) * KC * NC);
    float *ap = aligned_alloc(64, sizeof(float) * KC * MC);

    if (!bp || !ap) {
        free(bp);
        free(ap);
        return;
    }
    for (int j0 = 0; j0 < N; j0 += NC) {
        int nc = N - j0 < NC ? N - j0 : NC;
        for (int k0 = 0; k0 < K; k0 += KC) {
            int kc = K - k0 < KC ? K - k0 : KC;
            pack_b(rhs, N, k0, kc, j0, nc, bp);
            for (int i0 = 0; i0 < M; i0 += MC) {
                int mc = M - i0 < MC ? M - i0 : MC;
                pack_a(lhs, K, i0, mc, k0, kc, ap);
                for (int jr = 0; jr < nc; jr += NR)
                    for (int ir = 0; ir < mc; ir += MR)
                        tile(kc, ap + (long)ir * kc, bp + (long)jr * kc,
                             out + (long)(i0 + ir) * N + j0 + jr, N,
                             mc - ir < MR ? mc - ir : MR, nc - jr < NR ? nc - jr : NR, k0 > 0);
            }
        }
    }
    free(bp);
    free(ap);
}
