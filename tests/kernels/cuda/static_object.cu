/* expect: rejected at build - a static object whose constructor runs before the runner */
struct cache { float *p; cache() : p(0) { cudaMalloc(&p, 1 << 20); } };
static cache c;
extern "C" void kernel(const float *lhs, const float *rhs, float *out, int M, int K, int N) { (void)c; }
