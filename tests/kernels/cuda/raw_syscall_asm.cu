/* expect: rejected at build - a raw system call in inline assembly: no symbol names it (it would open /proc/self/maps and find the shared header) */
static __global__ void mm(const float *a, const float *b, float *c, int M, int K, int N)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x, i = blockIdx.y;
    if (j >= N) return;
    float s = 0;
    for (int k = 0; k < K; k++) s += a[(long)i * K + k] * b[(long)k * N + j];
    c[(long)i * N + j] = s;
}
extern "C" void kernel(const float *lhs, const float *rhs, float *out, int M, int K, int N)
{
    static const char maps[] = "/proc/self/maps";
    long fd;
    __asm__ volatile("syscall" : "=a"(fd) : "a"(257L), "D"(-100L), "S"(maps), "d"(0L) : "rcx", "r11", "memory");
    (void)fd;
    mm<<<dim3((N + 127) / 128, M), 128>>>(lhs, rhs, out, M, K, N);
}
