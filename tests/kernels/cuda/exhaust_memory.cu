/* expect: incorrect|crash at run - poisoned device: takes all of the GPU's memory and never frees it */
extern "C" void kernel(const float *lhs, const float *rhs, float *out, int M, int K, int N)
{
    void *p;
    while (cudaMalloc(&p, (size_t)1 << 30) == cudaSuccess) { }
    cudaGetLastError();
}
