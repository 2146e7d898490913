/* baseline.c - rope_single_freq_apply: a first straightforward port, with knobs */

/* Tunable knobs: `#define NAME value` with the allowed values after
 * "knob:"; a tool may change the value, nothing else. */
#define BLOCK_L 0      /* knob: 0 256 1024 4096 (0: whole rows) */
#define SPLIT_HALVES 1 /* knob: 0 1 (1: top half then bottom half, in two passes) */

void kernel(const float *x, const float *cos, const float *sin, float *out, int R, int L, int H)
{
    int bl = BLOCK_L ? BLOCK_L : L;
    (void)R;
    for (int r = 0; r < H; r++) {
        const float *x0 = x + (long)r * L, *x1 = x + (long)(r + H) * L;
        const float *c = cos + (long)r * L, *s = sin + (long)r * L;
        float *o0 = out + (long)r * L, *o1 = out + (long)(r + H) * L;
        for (int l0 = 0; l0 < L; l0 += bl) {
            int l1 = l0 + bl < L ? l0 + bl : L;
#if SPLIT_HALVES
            for (int l = l0; l < l1; l++)
                o0[l] = x0[l] * c[l] - x1[l] * s[l];
            for (int l = l0; l < l1; l++)
                o1[l] = x0[l] * s[l] + x1[l] * c[l];
#else
            for (int l = l0; l < l1; l++) {
                o0[l] = x0[l] * c[l] - x1[l] * s[l];
                o1[l] = x0[l] * s[l] + x1[l] * c[l];
            }
#endif
        }
    }
}
