/* emu.h - a CUDA kernel's threads on the host, to check a kernel's index,
 * edge and barrier logic where no GPU is: each CUDA thread is a host
 * thread (a coroutine), blocks run one after another, __syncthreads is a
 * barrier of the block's threads and a warp shuffle an exchange between a
 * warp's.  What it
 * cannot show: speed, the GPU's memory model, divergent warps, and anything
 * of the CUDA runtime beyond the few calls below.  Included (g++ -include)
 * ahead of a kernel rewritten by tests/cuda-host/rewrite.pl: launches
 * `f<<<g, b, smem>>>(...)` become `emu_launch(f, emu_config(g, b, smem),
 * ...)` and `extern __shared__ T s[]` a pointer to emu_dynamic. */
#include <cmath>
#include <cstdlib>
#include <csetjmp>
#include <cstring>
#include <ucontext.h>
#include <type_traits>
#include <vector>

struct dim3 {
    unsigned x, y, z;
    dim3(unsigned a = 1, unsigned b = 1, unsigned c = 1) : x(a), y(b), z(c) {}
};
struct float4 {
    float x, y, z, w;
};
static inline float4 make_float4(float a, float b, float c, float d) { return {a, b, c, d}; }
/* the cache-hinted loads and stores: plain ones here */
template <typename T> static inline T __ldcs(const T *p) { return *p; }
template <typename T> static inline T __ldg(const T *p) { return *p; }
template <typename T> static inline void __stcs(T *p, T v) { *p = v; }

/* The threads of one block are coroutines on one host thread, switched
 * only where they wait for each other: a run is deterministic and cheap,
 * and a kernel that reads what another thread has not yet written
 * (a missing barrier) reads stale or NaN-poisoned data, as on a GPU.
 * A coroutine is made once per launch (makecontext) and serves its thread
 * index in every block; switches are _setjmp/_longjmp, which unlike
 * swapcontext make no system call. */
struct emu_group {
    unsigned size, arrived, generation;
};
struct emu_thread {
    ucontext_t ctx; /* the first entry */
    jmp_buf at;     /* where it waits */
    dim3 idx;
    bool started, done;
};
static dim3 threadIdx, blockIdx, blockDim, gridDim;
static jmp_buf emu_main;
static std::vector<emu_thread> emu_threads;
static unsigned emu_current;
static emu_group emu_block, emu_warp[32];
static float emu_lanes[32][32];

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __shared__ static /* one block at a time: one copy serves */
#define __align__(n) __attribute__((aligned(n)))
#define __restrict__ __restrict
#define __launch_bounds__(...)

/* wait until every thread of the group has arrived */
static void emu_wait(emu_group *g)
{
    unsigned gen = g->generation;
    if (++g->arrived == g->size) {
        g->arrived = 0, g->generation++;
        return;
    }
    while (g->generation == gen)
        if (!_setjmp(emu_threads[emu_current].at))
            _longjmp(emu_main, 1);
}

static inline void __syncthreads() { emu_wait(&emu_block); }

static inline unsigned emu_thread_id()
{
    return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
}

static inline void __syncwarp(unsigned = 0xffffffffu)
{
    emu_wait(&emu_warp[emu_thread_id() / 32]);
}

/* every lane of the warp takes part, as the full mask says */
static inline float __shfl_xor_sync(unsigned, float v, int mask)
{
    unsigned t = emu_thread_id(), w = t / 32, l = t % 32;
    emu_lanes[w][l] = v;
    emu_wait(&emu_warp[w]);
    float o = emu_lanes[w][l ^ (unsigned)mask];
    emu_wait(&emu_warp[w]);
    return o;
}

static inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }

enum cudaError_t { cudaSuccess = 0, cudaErrorMemoryAllocation = 2 };
enum cudaDeviceAttr { cudaDevAttrMultiProcessorCount = 16 };
enum cudaFuncAttribute { cudaFuncAttributeMaxDynamicSharedMemorySize = 8 };
static inline cudaError_t cudaDeviceGetAttribute(int *v, cudaDeviceAttr, int)
{
    *v = 3; /* few SMs: grid-stride loops go round more than once */
    return cudaSuccess;
}
template <class F> static cudaError_t cudaFuncSetAttribute(F, cudaFuncAttribute, int)
{
    return cudaSuccess;
}
/* device memory comes back as NaNs (all bits set): a kernel that reads
 * scratch it never wrote gets NaN, not a lucky zero */
static inline cudaError_t cudaMalloc(void **p, size_t n)
{
    if (!(*p = malloc(n ? n : 1)))
        return cudaErrorMemoryAllocation;
    memset(*p, 0xff, n);
    return cudaSuccess;
}
static inline cudaError_t cudaFree(void *p)
{
    free(p);
    return cudaSuccess;
}

struct emu_config {
    dim3 grid, block;
    size_t dynamic; /* bytes of `extern __shared__` memory */
    emu_config(dim3 g, dim3 b, size_t d = 0) : grid(g), block(b), dynamic(d) {}
};
static char *emu_dynamic;

static void (*emu_body)(void *);
static void *emu_args;
static void emu_start()
{
    for (;;) { /* one pass per block */
        emu_body(emu_args);
        emu_threads[emu_current].done = true;
        if (!_setjmp(emu_threads[emu_current].at))
            _longjmp(emu_main, 1);
    }
}

template <class F, class... A> static void emu_launch(F f, emu_config c, A... a)
{
    dim3 g = c.grid, b = c.block;
    const size_t stack = 64 * 1024;
    unsigned n = b.x * b.y * b.z, warps = (n + 31) / 32;
    std::vector<char *> stacks(n); /* not zeroed: only what is used is touched */
    auto call = [&] { f(a...); };

    if (warps > 32 || !(emu_dynamic = (char *)realloc(emu_dynamic, c.dynamic + 16)))
        abort();
    memset(emu_dynamic, 0xff, c.dynamic);
    gridDim = g, blockDim = b, emu_threads.assign(n, emu_thread{});
    emu_body = [](void *c) { (*(decltype(call) *)c)(); }, emu_args = &call;
    for (unsigned z = 0; z < g.z; z++)
        for (unsigned y = 0; y < g.y; y++)
            for (unsigned x = 0; x < g.x; x++) {
                blockIdx = dim3(x, y, z);
                emu_block = {n, 0, 0};
                for (unsigned w = 0; w < warps; w++)
                    emu_warp[w] = {n - w * 32 < 32 ? n - w * 32 : 32, 0, 0};
                for (unsigned t = 0; t < n; t++) {
                    emu_thread &th = emu_threads[t];
                    th.done = false;
                    th.idx = dim3(t % b.x, t / b.x % b.y, t / (b.x * b.y));
                    if (th.started)
                        continue;
                    if (!(stacks[t] = (char *)malloc(stack)))
                        abort();
                    getcontext(&th.ctx);
                    th.ctx.uc_stack.ss_sp = stacks[t];
                    th.ctx.uc_stack.ss_size = stack;
                    th.ctx.uc_link = NULL; /* emu_start never returns */
                    makecontext(&th.ctx, emu_start, 0);
                }
                for (unsigned left = n; left;) {
                    left = 0;
                    for (unsigned t = 0; t < n; t++) {
                        emu_thread &th = emu_threads[t];
                        if (th.done)
                            continue;
                        emu_current = t, threadIdx = th.idx;
                        if (!_setjmp(emu_main)) {
                            ucontext_t from;
                            if (th.started)
                                _longjmp(th.at, 1);
                            th.started = true;
                            swapcontext(&from, &th.ctx);
                        }
                        left += !th.done;
                    }
                }
            }
    for (char *s : stacks)
        free(s);
}
