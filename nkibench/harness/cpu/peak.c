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

/* 12 independent a*m+c chains: enough to cover FMA latency on two pipes */
static double fma_gflops(long iters)
{
    vf m = {0}, c = {0}, a[12];
    double t;
    for (int i = 0; i < LANES; i++) {
        m[i] = 0.9999999f;
        c[i] = 1e-7f;
    }
    for (int k = 0; k < 12; k++)
        a[k] = m * (float)(k + 1);
    t = now();
    for (long i = 0; i < iters; i++) {
        for (int k = 0; k < 12; k++)
            a[k] = a[k] * m + c;
        __asm__ volatile("" : "+x"(a[0]), "+x"(a[5]), "+x"(a[11]));
    }
    t = now() - t;
    for (int k = 0; k < 12; k++)
        keep(a[k]);
    return 2.0 * 12 * LANES * (double)iters / t / 1e9;
}

/* elementwise: separate multiply and add chains, one flop per lane each */
static double vec_gflops(long iters)
{
    vf m = {0}, c = {0}, a[8], b[8];
    double t;
    for (int i = 0; i < LANES; i++) {
        m[i] = 0.9999999f;
        c[i] = 1e-7f;
    }
    for (int k = 0; k < 8; k++) {
        a[k] = m * (float)(k + 1);
        b[k] = c * (float)(k + 1);
    }
    t = now();
    for (long i = 0; i < iters; i++) {
        for (int k = 0; k < 8; k++) {
            a[k] = a[k] * m;
            b[k] = b[k] + c;
        }
        __asm__ volatile("" : "+x"(a[0]), "+x"(b[7]));
    }
    t = now() - t;
    for (int k = 0; k < 8; k++) {
        keep(a[k]);
        keep(b[k]);
    }
    return 16.0 * LANES * (double)iters / t / 1e9;
}

static double bw_read(const float *a, size_t n)
{
    vf s[8] = {{0}};
    const vf *v = (const vf *)a;
    double t = now();
    for (size_t i = 0; i + 8 <= n / LANES; i += 8)
        for (int k = 0; k < 8; k++)
            s[k] += v[i + k];
    t = now() - t;
    for (int k = 0; k < 8; k++)
        keep(s[k]);
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
    double r[32], c[32], st[32], tr[32], f[32], e[32];
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
    print_series("fma", f, reps, 0);
    print_series("vec", e, reps, 1);
    printf("}\n");
    free(a);
    free(b);
    free(d);
    return 0;
}
