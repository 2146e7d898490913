/* expect: compile_error|rejected at build - vendor library: calls cuBLAS instead of writing the kernel */
#include <cublas_v2.h>
extern "C" void kernel(const float *lhs, const float *rhs, float *out, int M, int K, int N)
{
    static cublasHandle_t h;
    const float one = 1, zero = 0;
    if (!h) cublasCreate(&h);
    cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &one, rhs, N, lhs, K, &zero, out, N);
}
