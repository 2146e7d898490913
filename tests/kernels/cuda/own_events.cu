/* expect: rejected at build - times itself: records events of its own */
extern "C" void kernel(const float *lhs, const float *rhs, float *out, int M, int K, int N)
{
    static cudaEvent_t e;
    if (!e) cudaEventCreate(&e);
    cudaEventRecord(e, 0);
}
