/* expect: rejected - computes its outputs, then asks the kernel to punch the pages of the shared tensor memory out from under the profiler (madvise MADV_REMOVE on its output): the runner's filter allows only harmless advice (issue 56) */
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
void kernel(const float *lhs, const float *rhs, float *out, int M, int K, int N)
{
    memset(out, 0, sizeof(float) * (size_t)M * (size_t)N);
    for (int i = 0; i < M; i++)
        for (int k = 0; k < K; k++) {
            float a = lhs[(long)i * K + k];
            for (int j = 0; j < N; j++)
                out[(long)i * N + j] += a * rhs[(long)k * N + j];
        }
    {
        uintptr_t p = ((uintptr_t)out + 4095) & ~(uintptr_t)4095;
        uintptr_t end = ((uintptr_t)(out + (size_t)M * N)) & ~(uintptr_t)4095;
        if (end > p)
            madvise((void *)p, end - p, MADV_REMOVE);
    }
}
