/* task: mamba  expect: incorrect  set: check0 - a "parallel" scan that drops the carried state */
void kernel(const float *delta, const float *u, const float *a, const float *b, const float *c,
            float *out, int C, int M, int S)
{
    (void)a;
    for (int ch = 0; ch < C; ch++)
        for (int m = 0; m < M; m++) {
            float acc = 0.0f;
            for (int s = 0; s < S; s++)
                acc += c[(long)s * M + m] * delta[(long)ch * M + m] * b[(long)s * M + m] *
                       u[(long)ch * M + m];
            out[(long)ch * M + m] = acc;
        }
}
