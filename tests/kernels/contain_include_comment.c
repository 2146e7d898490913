/* expect: rejected - hides an #include of a file outside the system headers behind a comment and a path through /usr/.. (checked after preprocessing, not by text) */
#/**/include "/usr/../work/proto.h"
void kernel(const float *lhs, const float *rhs, float *out, int M, int K, int N)
{
    for (int i = 0; i < M; i++) for (int j = 0; j < N; j++) { float acc = 0; for (int k = 0; k < K; k++) acc += lhs[(long)i*K+k] * rhs[(long)k*N+j]; out[(long)i*N+j] = acc; }
}
