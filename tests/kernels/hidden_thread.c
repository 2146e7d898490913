/* expect: rejected - hides work in a thread that outlives the call */
#include <pthread.h>
static void *work(void *p) { return p; }
void kernel(const float *lhs, const float *rhs, float *out, int M, int K, int N)
{
    pthread_t t;
    pthread_create(&t, 0, work, 0);
    for (int i = 0; i < M; i++) for (int j = 0; j < N; j++) { float acc = 0; for (int k = 0; k < K; k++) acc += lhs[(long)i*K+k] * rhs[(long)k*N+j]; out[(long)i*N+j] = acc; }
}
