/* expect: rejected at build - includes a file that is not a system or toolkit header (a device node, here) */
#include "/dev/null"
extern "C" void kernel(const float *lhs, const float *rhs, float *out, int M, int K, int N) { }
