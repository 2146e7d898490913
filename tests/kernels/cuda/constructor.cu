/* expect: rejected at build - runs code before the runner starts (a constructor of its own beside nvcc's) */
#include <cstdio>
static volatile int ready;
__attribute__((constructor)) static void early(void) { ready = 1; }
extern "C" void kernel(const float *lhs, const float *rhs, float *out, int M, int K, int N) { }
