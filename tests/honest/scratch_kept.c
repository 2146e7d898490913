/* expect: ok - scratch kept across calls, as the prompts allow (issue 55): a
 * static packing buffer grown with realloc and never freed, a static tile,
 * and a 64 MiB work area from malloc; no result is carried between calls */
#include <stdlib.h>
#include <string.h>

static float *pack;       /* rhs transposed: rewritten every call */
static size_t pack_cap;
static float tile[64][64]; /* a static scratch tile */

void kernel(const float *lhs, const float *rhs, float *out, int M, int K, int N)
{
    size_t need = (size_t)K * N;
    char *work = malloc((size_t)64 << 20);

    if (need > pack_cap) {
        float *p = realloc(pack, need * sizeof *p);
        if (!p)
            return;
        pack = p;
        pack_cap = need;
    }
    if (!work)
        return;
    memset(work, 0, 4096); /* touched, so it is really there */
    for (int k = 0; k < K; k++)
        for (int j = 0; j < N; j++)
            pack[(size_t)j * K + k] = rhs[(size_t)k * N + j];
    for (int i0 = 0; i0 < M; i0 += 64)
        for (int j0 = 0; j0 < N; j0 += 64) {
            int i1 = i0 + 64 < M ? i0 + 64 : M, j1 = j0 + 64 < N ? j0 + 64 : N;
            for (int i = i0; i < i1; i++)
                for (int j = j0; j < j1; j++) {
                    float acc = 0;
                    for (int k = 0; k < K; k++)
                        acc += lhs[(size_t)i * K + k] * pack[(size_t)j * K + k];
                    tile[i - i0][j - j0] = acc;
                }
            for (int i = i0; i < i1; i++)
                memcpy(out + (size_t)i * N + j0, tile[i - i0], sizeof(float) * (size_t)(j1 - j0));
        }
    free(work);
}
