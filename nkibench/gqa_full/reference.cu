/* reference.cu - gqa_full on the GPU, trusted: a thread per query row, in
 * double: the scores' maximum in one pass, then the exponentials, their sum
 * and the weighted values in a second (the same scores recomputed the same
 * way), each sum in reference.c's order (tests/cli/98-cuda-gpu.sh checks the
 * two agree) */
#define MAX_D 256

static __global__ void gqa_ref(const float *q, const float *k, const float *v, float *out, int B,
                               int N, int H, int D, int KH)
{
    long row = (long)blockIdx.x * blockDim.x + threadIdx.x; /* (b, h, i) */
    if (row >= (long)B * H * N)
        return;
    int i = (int)(row % N), h = (int)(row / N % H), b = (int)(row / N / H);
    int kh = h / (H / KH);
    const float *qi = q + (((long)b * N + i) * H + h) * D;
    double scale = 1.0 / sqrt((double)D), mx = -INFINITY, sum = 0.0, acc[MAX_D];

    for (int j = 0; j < N; j++) {
        const float *kj = k + (((long)b * N + j) * KH + kh) * D;
        double dot = 0.0;
        for (int d = 0; d < D; d++)
            dot += (double)qi[d] * kj[d];
        mx = dot * scale > mx ? dot * scale : mx;
    }
    for (int d = 0; d < D; d++)
        acc[d] = 0.0;
    for (int j = 0; j < N; j++) {
        const float *kj = k + (((long)b * N + j) * KH + kh) * D;
        const float *vj = v + (((long)b * N + j) * KH + kh) * D;
        double dot = 0.0;
        for (int d = 0; d < D; d++)
            dot += (double)qi[d] * kj[d];
        double p = exp(dot * scale - mx);
        sum += p;
        for (int d = 0; d < D; d++)
            acc[d] += p * vj[d];
    }
    for (int d = 0; d < D; d++)
        out[(((long)b * H + h) * N + i) * D + d] = (float)(acc[d] / sum);
}

extern "C" void kernel(const float *q, const float *k, const float *v, float *out, int B, int N,
                       int H, int D, int KH)
{
    long rows = (long)B * H * N;
    if (D > MAX_D)
        return; /* the outputs stay poisoned: the profiler says the reference failed */
    gqa_ref<<<(unsigned)((rows + 127) / 128), 128>>>(q, k, v, out, B, N, H, D, KH);
}
