/* expect: compile_error at build - does not compile */
extern "C" void kernel(const float *lhs, const float *rhs, float *out, int M, int K, int N)
{
    this is not cuda;
}
