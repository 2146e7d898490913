/* task: rope_single_freq_apply  expect: incorrect  set: check0 - the rotation with the sign on the wrong half */
void kernel(const float *x, const float *cos, const float *sin, float *out, int R, int L, int H)
{
    (void)R;
    for (long i = 0; i < (long)H * L; i++) {
        float x0 = x[i], x1 = x[i + (long)H * L];
        out[i] = x0 * cos[i] + x1 * sin[i];
        out[i + (long)H * L] = x1 * cos[i] - x0 * sin[i];
    }
}
