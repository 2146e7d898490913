/* expect: rejected at build - defines a second external function */
extern "C" void helper(void) { }
extern "C" void kernel(const float *lhs, const float *rhs, float *out, int M, int K, int N) { helper(); }
