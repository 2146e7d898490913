/* expect: compile_error at build - takes other arguments than the task's signature */
extern "C" void kernel(const float *lhs, float *out, int M)
{
}
