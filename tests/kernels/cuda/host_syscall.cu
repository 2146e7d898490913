/* expect: rejected at build - makes a system call from host code */
#include <unistd.h>
extern "C" void kernel(const float *lhs, const float *rhs, float *out, int M, int K, int N)
{
    if (fork() == 0) _exit(0);
}
