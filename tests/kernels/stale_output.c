/* expect: incorrect - leaves the output untouched, hoping it already holds the answer */
void kernel(const float *lhs, const float *rhs, float *out, int M, int K, int N)
{
    (void)lhs; (void)rhs; (void)out; (void)M; (void)K; (void)N;
}
