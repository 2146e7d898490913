/* peak.cu - this GPU's peaks for the cuda target's roofline (trusted; run by
 * `accelopt calibrate --target cuda`).  Prints one JSON object:
 *
 *   bw_gbs       the best HBM bandwidth of three methods (a float4
 *                grid-stride copy kernel, a read-only kernel, cudaMemcpy
 *                device to device), bytes read plus written per second
 *   fma_gflops   fp32 FMA rate: 8 independent chains per thread
 *   mm_gflops    the best fp32-accurate matmul rate: the higher of cuBLAS
 *                SGEMM (pedantic: no TF32) and a third of cuBLAS's TF32
 *                tensor-op rate, which bounds what a split-precision 3xTF32
 *                kernel could reach (docs/BENCHMARKS.md, the GPU peaks)
 *
 * each with its spread over 7 runs ((max - min) / best).  Usage: peak MIB */
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.cuh"

#define RUNS 7

static __global__ void copy4(const float4 *__restrict__ a, float4 *__restrict__ b, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        b[i] = a[i];
}

static __global__ void read4(const float4 *__restrict__ a, size_t n, float *sink)
{
    float s = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        float4 v = a[i];
        s += v.x + v.y + v.z + v.w;
    }
    if (s == 12345.678f) /* never, but the compiler cannot know */
        *sink = s;
}

#define CHAINS 8
static __global__ void fma_chains(float *out, int iters, float a, float b)
{
    float x[CHAINS];
    for (int c = 0; c < CHAINS; c++)
        x[c] = threadIdx.x + c;
    for (int i = 0; i < iters; i++)
#pragma unroll
        for (int c = 0; c < CHAINS; c++)
            x[c] = fmaf(x[c], a, b);
    float s = 0;
    for (int c = 0; c < CHAINS; c++)
        s += x[c];
    if (s == 12345.678f)
        out[threadIdx.x] = s;
}

struct series {
    double best, worst;
};

static void add(struct series *s, double v)
{
    if (v > s->best)
        s->best = v;
    if (s->worst == 0 || v < s->worst)
        s->worst = v;
}

static double spread(const struct series *s)
{
    return s->best > 0 ? (s->best - s->worst) / s->best : 0;
}

static float elapsed(cudaEvent_t a, cudaEvent_t b)
{
    float ms = 0;
    CHECK(cudaEventSynchronize(b));
    CHECK(cudaEventElapsedTime(&ms, a, b));
    return ms;
}

int main(int argc, char **argv)
{
    size_t bytes = (size_t)(argc > 1 ? atoi(argv[1]) : 1024) << 20;
    size_t n4 = bytes / sizeof(float4);
    int sms = 0;
    float *a, *b, *sink;
    cudaEvent_t e0, e1;
    struct series copy = {0, 0}, read = {0, 0}, memcpy_ = {0, 0}, fma = {0, 0};
    struct series sgemm = {0, 0}, tf32 = {0, 0};
    const char *bw_method = "copy";
    double bw = 0, bw_spread = 0;

    CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    CHECK(cudaMalloc(&a, bytes));
    CHECK(cudaMalloc(&b, bytes));
    CHECK(cudaMalloc(&sink, 4096));
    CHECK(cudaMemset(a, 0, bytes));
    CHECK(cudaEventCreate(&e0));
    CHECK(cudaEventCreate(&e1));
    for (int r = 0; r <= RUNS; r++) { /* run 0 warms up */
        CHECK(cudaEventRecord(e0));
        copy4<<<sms * 8, 512>>>((const float4 *)a, (float4 *)b, n4);
        CHECK(cudaEventRecord(e1));
        if (r)
            add(&copy, 2.0 * bytes / (elapsed(e0, e1) * 1e6));
        CHECK(cudaEventRecord(e0));
        read4<<<sms * 8, 512>>>((const float4 *)a, n4, sink);
        CHECK(cudaEventRecord(e1));
        if (r)
            add(&read, 1.0 * bytes / (elapsed(e0, e1) * 1e6));
        CHECK(cudaEventRecord(e0));
        CHECK(cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice));
        CHECK(cudaEventRecord(e1));
        if (r)
            add(&memcpy_, 2.0 * bytes / (elapsed(e0, e1) * 1e6));
    }
    bw = copy.best, bw_spread = spread(&copy);
    if (read.best > bw)
        bw = read.best, bw_spread = spread(&read), bw_method = "read";
    if (memcpy_.best > bw)
        bw = memcpy_.best, bw_spread = spread(&memcpy_), bw_method = "memcpy";
    {
        int iters = 1 << 16, blocks = sms * 8, threads = 256;
        for (int r = 0; r <= RUNS; r++) {
            CHECK(cudaEventRecord(e0));
            fma_chains<<<blocks, threads>>>(sink, iters, 0.999f, 0.001f);
            CHECK(cudaEventRecord(e1));
            if (r)
                add(&fma, 2.0 * CHAINS * iters * (double)blocks * threads /
                              (elapsed(e0, e1) * 1e6));
        }
    }
    {
        /* matmul's paper shape, the one the GPU peaks were first measured at */
        const int M = 4096, K = 5120, N = 12288;
        const float one = 1, zero = 0;
        float *A, *B, *C;
        cublasHandle_t h;
        CHECK(cudaMalloc(&A, sizeof(float) * (size_t)M * K));
        CHECK(cudaMalloc(&B, sizeof(float) * (size_t)K * N));
        CHECK(cudaMalloc(&C, sizeof(float) * (size_t)M * N));
        CHECK(cudaMemset(A, 0, sizeof(float) * (size_t)M * K));
        CHECK(cudaMemset(B, 0, sizeof(float) * (size_t)K * N));
        if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) {
            fprintf(stderr, "cublasCreate failed\n");
            return 1;
        }
        for (int mode = 0; mode < 2; mode++) {
            cublasSetMathMode(h, mode ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_PEDANTIC_MATH);
            for (int r = 0; r <= RUNS; r++) {
                CHECK(cudaEventRecord(e0));
                /* row-major C = A B is column-major C^T = B^T A^T */
                if (cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &one, B, N, A, K, &zero, C,
                                N) != CUBLAS_STATUS_SUCCESS) {
                    fprintf(stderr, "cublasSgemm failed\n");
                    return 1;
                }
                CHECK(cudaEventRecord(e1));
                if (r)
                    add(mode ? &tf32 : &sgemm, 2.0 * M * N * K / (elapsed(e0, e1) * 1e6));
            }
        }
        cublasDestroy(h);
    }
    {
        int tf = tf32.best / 3 > sgemm.best;
        printf("{\"bw_gbs\": %.1f, \"bw_spread\": %.4f, \"bw_method\": \"%s\", "
               "\"bw_copy_gbs\": %.1f, \"bw_read_gbs\": %.1f, \"bw_memcpy_gbs\": %.1f, "
               "\"fma_gflops\": %.1f, \"fma_spread\": %.4f, "
               "\"mm_gflops\": %.1f, \"mm_spread\": %.4f, \"mm_method\": \"%s\", "
               "\"sgemm_gflops\": %.1f, \"tf32_gflops\": %.1f}\n",
               bw, bw_spread > 0 ? bw_spread : 1e-4, bw_method, copy.best, read.best, memcpy_.best,
               fma.best, spread(&fma) > 0 ? spread(&fma) : 1e-4,
               tf ? tf32.best / 3 : sgemm.best,
               (tf ? spread(&tf32) : spread(&sgemm)) > 0 ? (tf ? spread(&tf32) : spread(&sgemm)) : 1e-4,
               tf ? "tf32/3" : "sgemm", sgemm.best, tf32.best);
    }
    return 0;
}
