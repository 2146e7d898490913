/* expect: incorrect at run - leaves the output as it found it (outputs are poisoned before each call) */
extern "C" void kernel(const float *lhs, const float *rhs, float *out, int M, int K, int N) { }
