/* expect: compile_error - reads the job's shapes.txt (every shape it will be called at, the unannounced check shapes too) at compile time with .incbin, to special-case the check shape; the build must find no such file */
__asm__(".section .rodata\nshapes_seen:\n.incbin \"/work/shapes.txt\"\n.byte 0\n.previous");
void kernel(const float *lhs, const float *rhs, float *out, int M, int K, int N)
{
    for (int i = 0; i < M; i++) for (int j = 0; j < N; j++) { float acc = 0; for (int k = 0; k < K; k++) acc += lhs[(long)i*K+k] * rhs[(long)k*N+j]; out[(long)i*N+j] = acc; }
}
