/* expect: rejected at build - escapes the stopwatch: finishes the work on a host thread of its own */
#include <pthread.h>
static void *work(void *p) { return p; }
extern "C" void kernel(const float *lhs, const float *rhs, float *out, int M, int K, int N)
{
    pthread_t t;
    pthread_create(&t, 0, work, out);
    pthread_detach(t);
}
