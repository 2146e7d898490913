/* expect: rejected at build - poisons the device: changes its limits */
extern "C" void kernel(const float *lhs, const float *rhs, float *out, int M, int K, int N)
{
    cudaDeviceSetLimit(cudaLimitMallocHeapSize, 1);
}
