/* baseline.c - silu: a first straightforward port, with knobs */
#include <math.h>

/* Tunable knobs: `#define NAME value` with the allowed values after
 * "knob:"; a tool may change the value, nothing else. */
#define UNROLL 1     /* knob: 1 2 4 8 */
#define ROW_BLOCK 1  /* knob: 1 4 16 64 (rows handled per outer step) */

void kernel(const float *x, float *out, int M, int N)
{
    for (int r0 = 0; r0 < M; r0 += ROW_BLOCK)
        for (int r = r0; r < r0 + ROW_BLOCK && r < M; r++) {
            const float *xr = x + (long)r * N;
            float *yr = out + (long)r * N;
            int j = 0;
            for (; j + UNROLL <= N; j += UNROLL)
                for (int u = 0; u < UNROLL; u++)
                    yr[j + u] = xr[j + u] / (1.0f + expf(-xr[j + u]));
            for (; j < N; j++)
                yr[j] = xr[j] / (1.0f + expf(-xr[j]));
        }
}
