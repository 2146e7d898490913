/* expect: crash at run - poisoned device: writes far outside its output (a sticky error) */
static __global__ void bad(float *out) { out[(long)1 << 40] = 1; }
extern "C" void kernel(const float *lhs, const float *rhs, float *out, int M, int K, int N)
{
    bad<<<1, 1>>>(out);
}
