/* expect: timeout at run - poisoned device: a kernel that never ends */
static __global__ void spin(volatile int *flag) { while (*flag != 12345) { } }
extern "C" void kernel(const float *lhs, const float *rhs, float *out, int M, int K, int N)
{
    spin<<<1, 1>>>((volatile int *)out + 0 * M);
}
