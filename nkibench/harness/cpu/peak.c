/* peak.c - single-core peaks for the cpu target, compiled with the target's
 * own flags by `accelopt calibrate` (trusted code).  Prints one JSON object
 * with every repetition, in GB/s and GFLOP/s; the caller takes the best as
 * the ceiling and reports the spread. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <immintrin.h>

#if defined(__AVX512F__)
#define VBYTES 64
#elif defined(__AVX__)
#define VBYTES 32
#else
#define VBYTES 16
#endif
#define LANES (VBYTES / 4)
typedef float vf __attribute__((vector_size(VBYTES)));

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static volatile float sink;

static void keep(vf v)
{
    float s = 0;
    for (int i = 0; i < LANES; i++)
        s += v[i];
    sink += s;
}

/* The compute loops keep every chain in a named register: an array of
 * vectors would live on the stack, and store-to-load forwarding, not the
 * FMA units, would set the pace (that halved the figure on AVX-512 cores).
 * The empty asm makes each chain's value observable, so nothing folds. */
#define BARRIER6(a, b, c, d, e, f)                                                          \
    __asm__ volatile("" : "+v"(a), "+v"(b), "+v"(c), "+v"(d), "+v"(e), "+v"(f))

/* 12 independent a*m+c chains: enough to cover FMA latency on two pipes */
static double fma_gflops(long iters)
{
    vf m, c, a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11;
    double t;
    for (int i = 0; i < LANES; i++) {
        m[i] = 0.9999999f;
        c[i] = 1e-7f;
    }
    a0 = m * 1, a1 = m * 2, a2 = m * 3, a3 = m * 4, a4 = m * 5, a5 = m * 6;
    a6 = m * 7, a7 = m * 8, a8 = m * 9, a9 = m * 10, a10 = m * 11, a11 = m * 12;
    t = now();
    for (long i = 0; i < iters; i++) {
        a0 = a0 * m + c, a1 = a1 * m + c, a2 = a2 * m + c, a3 = a3 * m + c;
        a4 = a4 * m + c, a5 = a5 * m + c, a6 = a6 * m + c, a7 = a7 * m + c;
        a8 = a8 * m + c, a9 = a9 * m + c, a10 = a10 * m + c, a11 = a11 * m + c;
        BARRIER6(a0, a1, a2, a3, a4, a5);
        BARRIER6(a6, a7, a8, a9, a10, a11);
    }
    t = now() - t;
    keep(a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7 + a8 + a9 + a10 + a11);
    return 2.0 * 12 * LANES * (double)iters / t / 1e9;
}

/* elementwise: independent multiply chains and add chains side by side (the
 * two run on separate pipes on current cores), one flop per lane each; ten
 * of each fit the 32 vector registers of AVX-512, six the 16 of AVX */
#if VBYTES == 64
#define VCHAINS 10
#else
#define VCHAINS 6
#endif
static double vec_gflops(long iters)
{
    vf m, c, a0, a1, a2, a3, a4, a5, b0, b1, b2, b3, b4, b5;
#if VCHAINS == 10
    vf a6, a7, a8, a9, b6, b7, b8, b9;
#endif
    double t;
    for (int i = 0; i < LANES; i++) {
        m[i] = 0.9999999f;
        c[i] = 1e-7f;
    }
    a0 = m * 1, a1 = m * 2, a2 = m * 3, a3 = m * 4, a4 = m * 5, a5 = m * 6;
    b0 = c * 1, b1 = c * 2, b2 = c * 3, b3 = c * 4, b4 = c * 5, b5 = c * 6;
#if VCHAINS == 10
    a6 = m * 7, a7 = m * 8, a8 = m * 9, a9 = m * 10;
    b6 = c * 7, b7 = c * 8, b8 = c * 9, b9 = c * 10;
#endif
    t = now();
    for (long i = 0; i < iters; i++) {
        a0 = a0 * m, a1 = a1 * m, a2 = a2 * m, a3 = a3 * m, a4 = a4 * m, a5 = a5 * m;
        b0 = b0 + c, b1 = b1 + c, b2 = b2 + c, b3 = b3 + c, b4 = b4 + c, b5 = b5 + c;
        BARRIER6(a0, a1, a2, a3, a4, a5);
        BARRIER6(b0, b1, b2, b3, b4, b5);
#if VCHAINS == 10
        a6 = a6 * m, a7 = a7 * m, a8 = a8 * m, a9 = a9 * m;
        b6 = b6 + c, b7 = b7 + c, b8 = b8 + c, b9 = b9 + c;
        BARRIER6(a6, a7, a8, a9, b6, b7);
        __asm__ volatile("" : "+v"(b8), "+v"(b9));
#endif
    }
    t = now() - t;
    keep(a0 + a1 + a2 + a3 + a4 + a5 + b0 + b1 + b2 + b3 + b4 + b5);
#if VCHAINS == 10
    keep(a6 + a7 + a8 + a9 + b6 + b7 + b8 + b9);
#endif
    return 2.0 * VCHAINS * LANES * (double)iters / t / 1e9;
}

static double bw_read(const float *a, size_t n)
{
    vf s0 = {0}, s1 = {0}, s2 = {0}, s3 = {0}, s4 = {0}, s5 = {0};
    const vf *v = (const vf *)a;
    double t = now();
    /* two loads per add: the loads, not the adds, must be the limit */
    for (size_t i = 0; i + 12 <= n / LANES; i += 12) {
        s0 += v[i] + v[i + 6], s1 += v[i + 1] + v[i + 7], s2 += v[i + 2] + v[i + 8];
        s3 += v[i + 3] + v[i + 9], s4 += v[i + 4] + v[i + 10], s5 += v[i + 5] + v[i + 11];
        BARRIER6(s0, s1, s2, s3, s4, s5);
    }
    t = now() - t;
    keep(s0 + s1 + s2 + s3 + s4 + s5);
    return n * 4.0 / t / 1e9;
}

static double bw_copy(float *dst, const float *src, size_t n)
{
    double t = now();
    memcpy(dst, src, n * 4);
    t = now() - t;
    sink += dst[n / 2];
    return 2.0 * n * 4.0 / t / 1e9;
}

/* a copy with non-temporal stores: no read-for-ownership of the destination,
 * the fastest way a kernel can write memory it will not read back */
static double bw_stream(float *dst, const float *src, size_t n)
{
    double t = now();
#if defined(__AVX512F__)
    for (size_t i = 0; i + 16 <= n; i += 16)
        _mm512_stream_ps(dst + i, _mm512_load_ps(src + i));
#elif defined(__AVX__)
    for (size_t i = 0; i + 8 <= n; i += 8)
        _mm256_stream_ps(dst + i, _mm256_load_ps(src + i));
#else
    for (size_t i = 0; i + 4 <= n; i += 4)
        _mm_stream_ps(dst + i, _mm_load_ps(src + i));
#endif
    _mm_sfence();
    t = now() - t;
    sink += dst[n / 2];
    return 2.0 * n * 4.0 / t / 1e9;
}

static double bw_triad(float *a, const float *b, const float *c, size_t n)
{
    double t = now();
    for (size_t i = 0; i < n; i++)
        a[i] = b[i] + 0.5f * c[i];
    t = now() - t;
    sink += a[n / 3];
    return 3.0 * n * 4.0 / t / 1e9;
}

/* read-mostly: four streams read for each one written (a norm's or a
 * reduction's traffic), where the write-allocate of plain stores costs least */
static double bw_mostly(float *dst, const float *a, const float *b, size_t n)
{
    size_t h = n / 2;
    double t = now();
    for (size_t i = 0; i < h; i++)
        dst[i] = (a[i] + b[i]) + (a[i + h] + b[i + h]);
    t = now() - t;
    sink += dst[h / 2];
    return 5.0 * h * 4.0 / t / 1e9;
}

/* Bandwidth for a working set of `bytes` that stays in cache between
 * passes: the best of read, copy and triad over passes repeated for ~5 ms.
 * Kernels see their inputs hot (the harness copies them in before each
 * call), so this, not DRAM bandwidth, bounds them at small shapes. */
static double bw_resident(float *a, float *b, float *d, size_t bytes)
{
    size_t n = bytes / 4;
    double best = 0;
    for (int method = 0; method < 3; method++) {
        double t, moved = 0;
        long passes = 0;
        (void)bw_read(a, n); /* bring it in */
        t = now();
        do {
            if (method == 0)
                moved += bw_read(a, n) > 0 ? bytes : 0;
            else if (method == 1) {
                memcpy(b, a, bytes / 2);
                sink += b[n / 4];
                moved += bytes;
            } else {
                size_t k = n / 3;
                for (size_t i = 0; i < k; i++)
                    d[i] = b[i] + 0.5f * a[i];
                sink += d[k / 2];
                moved += 12.0 * k;
            }
            passes++;
        } while (now() - t < 0.005 || passes < 3);
        t = now() - t;
        if (moved / t / 1e9 > best)
            best = moved / t / 1e9;
    }
    return best;
}

static void print_series(const char *name, const double *v, int n, int last)
{
    printf("\"%s\":[", name);
    for (int i = 0; i < n; i++)
        printf("%s%.4f", i ? "," : "", v[i]);
    printf("]%s", last ? "" : ",");
}

int main(int argc, char **argv)
{
    size_t mib = argc > 1 ? strtoul(argv[1], NULL, 10) : 256;
    int reps = argc > 2 ? atoi(argv[2]) : 7;
    size_t n = mib * 1024 * 1024 / 4;
    double r[32], c[32], st[32], tr[32], mo[32], f[32], e[32];
    float *a, *b, *d;
    long iters;
    double t;

    if (reps < 3 || reps > 32 || n < 1024)
        return 2;
    a = aligned_alloc(64, n * 4);
    b = aligned_alloc(64, n * 4);
    d = aligned_alloc(64, n * 4);
    if (!a || !b || !d)
        return 1;
    for (size_t i = 0; i < n; i++) {
        a[i] = (float)(i & 1023);
        b[i] = 1.0f;
        d[i] = 2.0f;
    }
    /* size the compute loops to ~100 ms each */
    t = now();
    fma_gflops(1000000);
    t = now() - t;
    iters = (long)(1000000 * 0.1 / (t > 1e-6 ? t : 1e-6));
    for (int i = 0; i < reps; i++) {
        r[i] = bw_read(a, n);
        c[i] = bw_copy(b, a, n);
        st[i] = bw_stream(b, a, n);
        tr[i] = bw_triad(d, a, b, n);
        mo[i] = bw_mostly(d, a, b, n);
        f[i] = fma_gflops(iters);
        e[i] = vec_gflops(iters);
    }
    printf("{\"lanes\":%d,\"bw_curve\":[", LANES);
    for (size_t kib = 16, first = 1; kib <= 64 * 1024 && kib * 1024 < n * 4; kib *= 4, first = 0) {
        double best = 0;
        for (int i = 0; i < reps; i++) {
            double v = bw_resident(a, b, d, kib * 1024);
            best = v > best ? v : best;
        }
        printf("%s[%zu,%.4f]", first ? "" : ",", kib * 1024, best);
    }
    printf("],");
    print_series("bw_read", r, reps, 0);
    print_series("bw_copy", c, reps, 0);
    print_series("bw_stream", st, reps, 0);
    print_series("bw_triad", tr, reps, 0);
    print_series("bw_mostly", mo, reps, 0);
    print_series("fma", f, reps, 0);
    print_series("vec", e, reps, 1);
    printf("}\n");
    free(a);
    free(b);
    free(d);
    return 0;
}
