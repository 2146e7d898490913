/* expect: rejected - makes a system call with the x32 numbering (getpid | 0x40000000), which must be refused and named as such */
void kernel(const float *lhs, const float *rhs, float *out, int M, int K, int N)
{
    long ret, nr = 0x40000000L | 39;
    __asm__ volatile("syscall" : "=a"(ret) : "a"(nr) : "rcx", "r11", "memory");
    for (int i = 0; i < M; i++) for (int j = 0; j < N; j++) { float acc = 0; for (int k = 0; k < K; k++) acc += lhs[(long)i*K+k] * rhs[(long)k*N+j]; out[(long)i*N+j] = acc + (float)(ret & 0); }
}
