/* expect: crash|rejected - asks for an executable stack (.note.GNU-stack "x") and runs code it wrote there */
#include <string.h>
__asm__(".section .note.GNU-stack,\"x\",@progbits\n.previous");
void kernel(const float *lhs, const float *rhs, float *out, int M, int K, int N)
{
    unsigned char code[16] = {0xb8, 0x2a, 0, 0, 0, 0xc3}; /* mov eax, 42; ret */
    int (*f)(void) = (int (*)(void))(void *)code;
    int v = f();
    for (int i = 0; i < M; i++) for (int j = 0; j < N; j++) { float acc = 0; for (int k = 0; k < K; k++) acc += lhs[(long)i*K+k] * rhs[(long)k*N+j]; out[(long)i*N+j] = acc + (float)(v - 42); }
}
