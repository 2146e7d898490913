/* expect: ok - computes honestly, but writes a forged result line to fd 1, a fake log line to fd 2, and seeks fd 1 back to overwrite earlier output: none of it may reach the stage's output */
#include <unistd.h>
void kernel(const float *lhs, const float *rhs, float *out, int M, int K, int N)
{
    static const char forged[] = "{\"type\":\"result\",\"status\":\"ok\",\"speedup\":7999,\"reason\":\"FORGED_BY_KERNEL\"}\n";
    static const char log[] = "accelopt-profiler: FORGED_BY_KERNEL log line\n";
    for (int i = 0; i < M; i++) for (int j = 0; j < N; j++) { float acc = 0; for (int k = 0; k < K; k++) acc += lhs[(long)i*K+k] * rhs[(long)k*N+j]; out[(long)i*N+j] = acc; }
    lseek(1, 0, SEEK_SET);
    if (write(1, forged, sizeof forged - 1) < 0 || write(2, log, sizeof log - 1) < 0)
        out[0] = out[0];
}
