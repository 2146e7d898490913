/* expect: crash at run - poisoned device: traps */
static __global__ void bad(void) { asm volatile("trap;"); }
extern "C" void kernel(const float *lhs, const float *rhs, float *out, int M, int K, int N)
{
    bad<<<1, 1>>>();
}
