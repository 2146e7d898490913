/* expect: rejected at build - poisons the device: resets it */
extern "C" void kernel(const float *lhs, const float *rhs, float *out, int M, int K, int N)
{
    cudaDeviceReset();
}
