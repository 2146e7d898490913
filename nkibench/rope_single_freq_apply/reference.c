/* reference.c - rope_single_freq_apply, trusted: one element at a time, in double */
void kernel(const float *x, const float *cos, const float *sin, float *out, int R, int L, int H)
{
    (void)R;
    for (int r = 0; r < H; r++)
        for (int l = 0; l < L; l++) {
            long top = (long)r * L + l, bot = (long)(r + H) * L + l;
            double x0 = x[top], x1 = x[bot], c = cos[top], s = sin[top];
            out[top] = (float)(x0 * c - x1 * s);
            out[bot] = (float)(x0 * s + x1 * c);
        }
}
