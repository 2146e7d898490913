/* sgemm.c - the vendor reference point: OpenBLAS's single-thread sgemm on a
 * matmul shape, timed like a kernel (trusted code, built and run by
 * `accelopt bench` outside the sandbox).
 *
 *   sgemm M K N [cpu]    prints {"M":..,"core":..,"latencies_ns":[...],"max_rel_err":..}
 *
 * out = lhs @ rhs, row-major, lhs (M,K), rhs (K,N).  Inputs are N(0,1);
 * warm-up runs at least two calls and 0.1 s, then timed calls until 1 s or
 * 200 calls.  A sample of outputs is checked against a double-precision dot
 * product, so the figure is that of a real sgemm. */
#define _GNU_SOURCE
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <cblas.h>

void openblas_set_num_threads(int n);
char *openblas_get_corename(void);

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static unsigned long long rng = 0x9e3779b97f4a7c15ull;

static double normal(void)
{
    double u, v;
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    u = ((rng >> 11) + 1.0) / 9007199254740993.0;
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    v = (rng >> 11) / 9007199254740992.0;
    return sqrt(-2 * log(u)) * cos(2 * M_PI * v);
}

int main(int argc, char **argv)
{
    int M, K, N, n = 0;
    float *a, *b, *c;
    long long lat[200], warm = 0, spent = 0;
    double worst = 0;

    if (argc < 4 || (M = atoi(argv[1])) < 1 || (K = atoi(argv[2])) < 1 || (N = atoi(argv[3])) < 1) {
        fprintf(stderr, "usage: sgemm M K N [cpu]\n");
        return 2;
    }
    if (argc > 4 && atoi(argv[4]) >= 0) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(atoi(argv[4]), &set);
        sched_setaffinity(0, sizeof set, &set);
    }
    openblas_set_num_threads(1);
    a = aligned_alloc(64, sizeof(float) * (size_t)M * K);
    b = aligned_alloc(64, sizeof(float) * (size_t)K * N);
    c = aligned_alloc(64, sizeof(float) * (size_t)M * N);
    if (!a || !b || !c)
        return 1;
    for (long i = 0; i < (long)M * K; i++)
        a[i] = (float)normal();
    for (long i = 0; i < (long)K * N; i++)
        b[i] = (float)normal();
    for (int w = 0; w < 2 || warm < 100000000LL; w++) {
        long long t0 = now_ns();
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, 1.0f, a, K, b, N, 0.0f,
                    c, N);
        warm += now_ns() - t0;
    }
    while (n < 200 && (n < 10 || spent < 1000000000LL)) {
        long long t0 = now_ns();
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, 1.0f, a, K, b, N, 0.0f,
                    c, N);
        lat[n] = now_ns() - t0;
        spent += lat[n++];
    }
    /* 256 sampled outputs against a double dot product, relative to the
     * scale of the terms (sqrt(K) for N(0,1) inputs) */
    for (int s = 0; s < 256; s++) {
        int i = (int)((unsigned)(s * 2654435761u) % (unsigned)M);
        int j = (int)((unsigned)(s * 40503u + 17) % (unsigned)N);
        double ref = 0, e;
        for (int k = 0; k < K; k++)
            ref += (double)a[(long)i * K + k] * b[(long)k * N + j];
        e = fabs(c[(long)i * N + j] - ref) / sqrt((double)K);
        worst = e > worst ? e : worst;
    }
    printf("{\"M\":%d,\"K\":%d,\"N\":%d,\"core\":\"%s\",\"max_rel_err\":%.3g,\"latencies_ns\":[",
           M, K, N, openblas_get_corename(), worst);
    for (int i = 0; i < n; i++)
        printf("%s%lld", i ? "," : "", lat[i]);
    printf("]}\n");
    free(a);
    free(b);
    free(c);
    return 0;
}
