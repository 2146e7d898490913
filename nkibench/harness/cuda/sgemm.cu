/* sgemm.cu - the cuda target's vendor reference point (trusted, run outside
 * the sandbox by `accelopt bench --target cuda`): cuBLAS SGEMM in fp32
 * (pedantic math: no TF32) computing out = lhs @ rhs, row-major, at
 * (M, K, N), timed as the profiler times a kernel (L2 flushed before each
 * call, CUDA events around it), median of 15 calls after 3 warm-ups; a
 * sample of outputs is checked against double dot products.  Prints one
 * JSON object.  Usage: sgemm M K N */
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.cuh"

#define CALLS 15

static int cmp(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    int M, K, N, l2 = 0;
    float *hA, *hB, *hC, *A, *B, *C, ms[CALLS];
    void *flush;
    size_t flush_bytes;
    const float one = 1, zero = 0;
    cublasHandle_t h;
    cudaEvent_t e0, e1;
    double max_err = 0;

    if (argc != 4 || (M = atoi(argv[1])) <= 0 || (K = atoi(argv[2])) <= 0 || (N = atoi(argv[3])) <= 0) {
        fprintf(stderr, "usage: sgemm M K N\n");
        return 2;
    }
    hA = (float *)malloc(sizeof(float) * (size_t)M * K);
    hB = (float *)malloc(sizeof(float) * (size_t)K * N);
    hC = (float *)malloc(sizeof(float) * (size_t)M * N);
    if (!hA || !hB || !hC)
        return 1;
    srand(1);
    for (size_t i = 0; i < (size_t)M * K; i++)
        hA[i] = (float)rand() / RAND_MAX - 0.5f;
    for (size_t i = 0; i < (size_t)K * N; i++)
        hB[i] = (float)rand() / RAND_MAX - 0.5f;
    CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
    flush_bytes = 2 * (size_t)(l2 > (4 << 20) ? l2 : (4 << 20));
    CHECK(cudaMalloc(&A, sizeof(float) * (size_t)M * K));
    CHECK(cudaMalloc(&B, sizeof(float) * (size_t)K * N));
    CHECK(cudaMalloc(&C, sizeof(float) * (size_t)M * N));
    CHECK(cudaMalloc(&flush, flush_bytes));
    CHECK(cudaMemcpy(A, hA, sizeof(float) * (size_t)M * K, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(B, hB, sizeof(float) * (size_t)K * N, cudaMemcpyHostToDevice));
    CHECK(cudaEventCreate(&e0));
    CHECK(cudaEventCreate(&e1));
    if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS ||
        cublasSetMathMode(h, CUBLAS_PEDANTIC_MATH) != CUBLAS_STATUS_SUCCESS) {
        fprintf(stderr, "cannot start cuBLAS\n");
        return 1;
    }
    for (int c = -3; c < CALLS; c++) {
        CHECK(cudaMemset(flush, c & 0xff, flush_bytes));
        CHECK(cudaEventRecord(e0));
        /* row-major out = lhs rhs is column-major out^T = rhs^T lhs^T */
        if (cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &one, B, N, A, K, &zero, C, N) !=
            CUBLAS_STATUS_SUCCESS) {
            fprintf(stderr, "cublasSgemm failed\n");
            return 1;
        }
        CHECK(cudaEventRecord(e1));
        CHECK(cudaDeviceSynchronize());
        if (c >= 0)
            CHECK(cudaEventElapsedTime(&ms[c], e0, e1));
    }
    CHECK(cudaMemcpy(hC, C, sizeof(float) * (size_t)M * N, cudaMemcpyDeviceToHost));
    for (int s = 0; s < 64; s++) {
        int i = rand() % M, j = rand() % N;
        double acc = 0, mag = 0;
        for (int k = 0; k < K; k++) {
            acc += (double)hA[(size_t)i * K + k] * hB[(size_t)k * N + j];
            mag += fabs((double)hA[(size_t)i * K + k] * hB[(size_t)k * N + j]);
        }
        if (mag > 0 && fabs(hC[(size_t)i * N + j] - acc) / mag > max_err)
            max_err = fabs(hC[(size_t)i * N + j] - acc) / mag;
    }
    qsort(ms, CALLS, sizeof ms[0], cmp);
    {
        double med = ms[CALLS / 2] * 1e6;
        printf("{\"M\": %d, \"K\": %d, \"N\": %d, \"repeats\": %d, \"median_ns\": %.0f, "
               "\"min_ns\": %.0f, \"spread\": %.4f, \"gflops\": %.1f, \"max_rel_err\": %.3g}\n",
               M, K, N, CALLS, med, ms[0] * 1e6, (ms[3 * CALLS / 4] - ms[CALLS / 4]) * 1e6 / med,
               2.0 * M * N * K / med, max_err);
    }
    return 0;
}
