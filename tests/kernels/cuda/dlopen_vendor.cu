/* expect: rejected at build - vendor library: loads one at run time */
#include <dlfcn.h>
extern "C" void kernel(const float *lhs, const float *rhs, float *out, int M, int K, int N)
{
    void *h = dlopen("libcublas.so.13", RTLD_NOW);
    (void)h;
}
