/* inputs.c - the profiler's tensors: inputs drawn from the task's
 * distributions (and the timed calls' stress draws), and outputs checked
 * against the reference */
#include <math.h>
#include <sched.h>
#include <stdint.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/rng.h"
#include "measure/job.h"
#include "profiler/profiler_int.h"
#include "targets/target.h"
#include "wire/verdict.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#endif

/* How many threads the profiler's work on large tensors may use (drawing
 * inputs and check sets, poisoning outputs, comparing with references):
 * one where the kernel runs on the host (its inputs go into its core's
 * caches, and other cores may be timing other kernels); for a device
 * target (one whose tensors come back: after_call), every core we may use
 * but the runner's, eight at most. */
int prof_host_threads(const struct ao_target *tg)
{
    static int n;
    cpu_set_t s;

    if (!tg->after_call)
        return 1;
    if (n == 0)
        n = sched_getaffinity(0, sizeof s, &s) == 0 && CPU_COUNT(&s) > 2 ? CPU_COUNT(&s) - 1 : 1;
    return n > 8 ? 8 : n;
}

/* Inputs of timed calls, drawn fresh for every call.  They cost more than
 * many kernels (adamw at the cpu size: 32M values a call, 6 ns each drawn
 * one by one from the profiler's generator), so thirty-two xoshiro128**
 * streams (two sets of sixteen) run side by side in vector registers, each
 * seeded afresh for every call from the profiler's secret generator: a
 * call's values tell nothing of the next call's.  Uniforms take 24 bits
 * of a word; normals the scaled sum of a word's two 16-bit halves, a
 * triangle with the normal's mean and spread (issue 66: a value a word,
 * where the sum of four halves took two and a third of the draw's time;
 * timed inputs need values that exercise the kernel, and the check sets
 * draw the law itself, tails and all).  Every timed call is drawn the same
 * way, so a kernel cannot tell a checked timed call from another. */
typedef uint32_t vu32 __attribute__((vector_size(64)));
typedef int32_t vi32 __attribute__((vector_size(64)));
typedef float vf32 __attribute__((vector_size(64)));
#define LANES 16

/* One xoshiro128** step of every lane of state s0..s3 (locals, so they
 * stay in registers: a struct behind a pointer went through the stack
 * every step), the lanes' outputs into out. */
#define LANES_NEXT(s0, s1, s2, s3, out)                                                            \
    do {                                                                                           \
        vu32 a_ = (s1) + ((s1) << 2), t_ = (s1) << 9; /* s1 * 5 */                                 \
        a_ = (a_ << 7) | (a_ >> 25);                                                               \
        (out) = a_ + (a_ << 3); /* * 9 */                                                          \
        (s2) ^= (s0);                                                                              \
        (s3) ^= (s1);                                                                              \
        (s1) ^= (s2);                                                                              \
        (s0) ^= (s3);                                                                              \
        (s2) ^= t_;                                                                                \
        (s3) = ((s3) << 11) | ((s3) >> 21);                                                        \
    } while (0)

struct lanes {
    vu32 s0, s1, s2, s3;
};

/* returned by value, copied into locals: no address of them is taken */
static inline struct lanes lanes_seed(struct ao_rng *r)
{
    struct lanes l;

    for (int j = 0; j < LANES; j++) {
        uint64_t u = ao_rng_next(r), t = ao_rng_next(r);
        l.s0[j] = (uint32_t)u;
        l.s1[j] = (uint32_t)(u >> 32) | 1u; /* never the all-zero state */
        l.s2[j] = (uint32_t)t;
        l.s3[j] = (uint32_t)(t >> 32);
    }
    return l;
}

/* v's values at p[i..], as many as are left of n: a whole vector stored as
 * one (a length that varies made a call to memcpy of every 8 values, two
 * thirds of the fill's time).  The next i. */
static inline __attribute__((always_inline)) size_t store_lanes(float *p, size_t i, size_t n,
                                                                const vf32 *v)
{
    if (n - i >= LANES)
        memcpy(p + i, v, sizeof *v);
    else
        memcpy(p + i, v, (n - i) * sizeof(float));
    return i + LANES;
}

/* The check sets' inputs: the task's distributions exactly, tails and
 * all (a normal's reach about 5.8 sigma: a kernel whose approximation
 * holds only near the mean fails here, where the timed calls' sums of
 * uniforms end at 2.45), drawn sixteen lanes at a time.  Box-Muller in
 * single precision from 24-bit uniforms: ln by its mantissa's atanh
 * series, sin and cos by their series on an eighth of the circle.  The
 * double-precision one it replaces took 20 ns a value (silu's four check
 * sets at the cpu size: 2.3 s of each pool). */
/* (vectors go by pointer: by value they change the ABI under AVX) */
static inline __attribute__((always_inline)) void lanes_log(const vf32 *u, vf32 *out) /* u in (0, 1] */
{
    vi32 b = (vi32)*u, e = ((b >> 23) & 0xff) - 127;
    vf32 m = (vf32)((b & 0x007fffff) | 0x3f800000), t, t2, q; /* u = m 2^e, m in [1, 2) */
    vi32 big = m > 1.41421356f;                               /* then m/2, e+1: m in [0.707, 1.414) */

    m = (vf32)(((vi32)(m * 0.5f) & big) | ((vi32)m & ~big));
    e -= big;
    t = (m - 1.0f) / (m + 1.0f), t2 = t * t; /* ln m = 2 atanh t, |t| < 0.172 */
    q = t2 * (1.0f / 9) + 1.0f / 7;
    q = q * t2 + 1.0f / 5;
    q = q * t2 + 1.0f / 3;
    q = q * t2 + 1.0f;
    *out = 2.0f * t * q + __builtin_convertvector(e, vf32) * 0.69314718f;
}

/* sin and cos of 2 pi v, v in [0, 1) */
static inline __attribute__((always_inline)) void lanes_sincos(const vf32 *v, vf32 *sn, vf32 *cs)
{
    vf32 qf = __builtin_convertvector(__builtin_convertvector(*v * 4.0f + 0.5f, vi32), vf32);
    vi32 q = __builtin_convertvector(qf, vi32) & 3, q1 = (q & 1) != 0, q2 = (q & 2) != 0;
    vf32 x = (*v - qf * 0.25f) * 6.2831853f, x2 = x * x, s, c, ts; /* |x| <= pi/4 */

    s = x2 * (1.0f / 362880) - 1.0f / 5040;
    s = s * x2 + 1.0f / 120;
    s = s * x2 - 1.0f / 6;
    s = x + x * x2 * s;
    c = x2 * (1.0f / 40320) - 1.0f / 720;
    c = c * x2 + 1.0f / 24;
    c = c * x2 - 0.5f;
    c = 1.0f + x2 * c;
    /* a quarter turn swaps them (sin, cos) -> (cos, -sin); a half negates both */
    ts = (vf32)(((vi32)c & q1) | ((vi32)s & ~q1));
    c = (vf32)(((vi32)-s & q1) | ((vi32)c & ~q1));
    s = ts;
    *sn = (vf32)((vi32)s ^ (q2 & INT32_MIN)); /* the sign bit flipped */
    *cs = (vf32)((vi32)c ^ (q2 & INT32_MIN));
}

/* sqrt(y), y >= 0: y / sqrt(y) by Newton's steps on 1/sqrt from the
 * exponent's halving (three steps: float's precision; 0 stays 0) */
static inline __attribute__((always_inline)) void lanes_sqrt(vf32 *y)
{
    vf32 r = (vf32)(0x5f3759df - ((vi32)*y >> 1));

    for (int k = 0; k < 3; k++)
        r = r * (1.5f - 0.5f * *y * r * r);
    *y = *y * r;
}

/* A timed call's normals from one word of each set of lanes: the sum of
 * the word's two 16-bit uniforms (mean 0, variance 1), then scaled */
static inline __attribute__((always_inline)) void timed_normals(const struct ao_dist *x, const vu32 *h,
                                                                const vu32 *g, vf32 *v0, vf32 *v1)
{
    const float sc = 1.0f / 65536.0f, root6 = 2.4494897f, a = (float)x->a, b = (float)x->b;
    const vu32 m16 = (vu32){0} + 0xffffu;

    *v0 = __builtin_convertvector((vi32)((*h & m16) + (*h >> 16)), vf32);
    *v1 = __builtin_convertvector((vi32)((*g & m16) + (*g >> 16)), vf32);
    *v0 = a + b * (((*v0 + 1.0f) * sc - 1.0f) * root6);
    *v1 = a + b * (((*v1 + 1.0f) * sc - 1.0f) * root6);
}

/* Two sets of lanes, A and B, side by side: their steps do not wait on
 * each other.  Uniforms and a timed call's normals take A's and B's words
 * in turn (a normal: the sum of a word's two 16-bit halves), a check set's
 * (exact) two values from a pair of them (Box-Muller). */
static inline __attribute__((always_inline)) void fill_run(struct lanes *la, struct lanes *lb,
                                                           const struct ao_dist *x, float *p, size_t n,
                                                           int exact)
{
    const float a = (float)x->a, b = (float)x->b;
    const float u24 = 1.0f / 16777216.0f, w = (float)(x->b - x->a) * u24;
    vu32 a0 = la->s0, a1 = la->s1, a2 = la->s2, a3 = la->s3, b0 = lb->s0, b1 = lb->s1,
         b2 = lb->s2, b3 = lb->s3, h, g;
    vf32 v0, v1, rad, sn, cs;
    size_t i = 0;

    while (i < n) {
        LANES_NEXT(a0, a1, a2, a3, h);
        LANES_NEXT(b0, b1, b2, b3, g);
        if (x->kind == AO_DIST_UNIFORM) {
            v0 = a + w * (__builtin_convertvector((vi32)(h >> 8), vf32) + 0.5f);
            v1 = a + w * (__builtin_convertvector((vi32)(g >> 8), vf32) + 0.5f);
        } else if (exact) {
            v0 = (__builtin_convertvector((vi32)(h >> 8), vf32) + 1.0f) * u24;
            lanes_log(&v0, &rad);
            rad *= -2.0f;
            lanes_sqrt(&rad);
            v1 = __builtin_convertvector((vi32)(g >> 8), vf32) * u24;
            lanes_sincos(&v1, &sn, &cs);
            v0 = a + b * (rad * cs);
            v1 = a + b * (rad * sn);
        } else {
            timed_normals(x, &h, &g, &v0, &v1);
        }
        if (x->kind == AO_DIST_ABS_NORMAL) {
            v0 = (vf32)((vu32)v0 & 0x7fffffffu);
            v1 = (vf32)((vu32)v1 & 0x7fffffffu);
        }
        i = store_lanes(p, i, n, &v0);
        if (i < n)
            i = store_lanes(p, i, n, &v1);
    }
    *la = (struct lanes){a0, a1, a2, a3};
    *lb = (struct lanes){b0, b1, b2, b3};
}

static inline __attribute__((always_inline)) void fill_lanes(struct ao_rng *r, const struct ao_dist *x,
                                                             float *p, size_t n, int exact)
{
    struct lanes la = lanes_seed(r), lb = lanes_seed(r);

    fill_run(&la, &lb, x, p, n, exact);
}

/* A large timed draw goes past the caches (issue 66):
 * with plain stores every line written is read first (silu's 117 MB of
 * inputs: 15 ms drawn, as much as the memory-bound call that reads them;
 * with streaming stores, 7.7 ms).  Such a tensor is far larger than the
 * runner's core's caches, so they would hold only its last megabytes
 * anyway.  Drawn a chunk at a time into a buffer that stays in L1, then
 * copied out by `out`: the values are the same as fill_lanes' (a chunk is
 * a whole number of its steps), so a draw and its redraw agree whichever
 * way each went. */
enum { STREAM_MIN_BYTES = 16 << 20, STREAM_CHUNK = 4096 };

static inline __attribute__((always_inline)) void fill_streamed(struct ao_rng *r, const struct ao_dist *x,
                                                                float *p, size_t n,
                                                                void (*out)(float *, const float *, size_t))
{
    float buf[STREAM_CHUNK] __attribute__((aligned(64)));
    struct lanes la = lanes_seed(r), lb = lanes_seed(r);

    for (size_t i = 0; i < n; i += STREAM_CHUNK) {
        size_t m = n - i < STREAM_CHUNK ? n - i : STREAM_CHUNK;
        fill_run(&la, &lb, x, buf, m, 0);
        out(p + i, buf, m);
    }
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
/* the same code for AVX-512 or AVX2, where the machine has them: sixteen
 * lanes in one register (issue 66: silu's 29M timed values 23.5 -> 15 ms
 * a call, against 11 ms to write them with memset), or in two; SSE2's are
 * half AVX2's speed */
/* d[0..n) = s[0..n), the aligned middle by streaming stores; the caller
 * fences once after its last (the runner reads them from another core) */
__attribute__((target("avx512f"))) static void out_streamed_512(float *d, const float *s, size_t n)
{
    size_t k = 0;

    for (; k < n && ((uintptr_t)(d + k) & 63); k++)
        d[k] = s[k];
    for (; k + 16 <= n; k += 16)
        _mm512_stream_ps(d + k, _mm512_loadu_ps(s + k));
    for (; k < n; k++)
        d[k] = s[k];
}

__attribute__((target("avx2"))) static void out_streamed_256(float *d, const float *s, size_t n)
{
    size_t k = 0;

    for (; k < n && ((uintptr_t)(d + k) & 31); k++)
        d[k] = s[k];
    for (; k + 8 <= n; k += 8)
        _mm256_stream_ps(d + k, _mm256_loadu_ps(s + k));
    for (; k < n; k++)
        d[k] = s[k];
}

/* A streamed timed draw into an aligned tensor, each vector stored as it
 * is made (through a buffer, as fill_streamed goes, a third of the time
 * went to the extra copy): fill_run's values in fill_run's order. */
__attribute__((target("avx512f,avx512dq,avx512vl"))) static void fill_direct_512(struct ao_rng *r, const struct ao_dist *x,
                                                                     float *p, size_t n)
{
    struct lanes la = lanes_seed(r), lb = lanes_seed(r);
    vu32 a0 = la.s0, a1 = la.s1, a2 = la.s2, a3 = la.s3, b0 = lb.s0, b1 = lb.s1, b2 = lb.s2, b3 = lb.s3, h, g;
    const float a = (float)x->a, w = (float)(x->b - x->a) * (1.0f / 16777216.0f);
    vf32 v0, v1;
    size_t i = 0;

    for (; i + 2 * LANES <= n; i += 2 * LANES) {
        LANES_NEXT(a0, a1, a2, a3, h);
        LANES_NEXT(b0, b1, b2, b3, g);
        if (x->kind == AO_DIST_UNIFORM) {
            v0 = a + w * (__builtin_convertvector((vi32)(h >> 8), vf32) + 0.5f);
            v1 = a + w * (__builtin_convertvector((vi32)(g >> 8), vf32) + 0.5f);
        } else {
            timed_normals(x, &h, &g, &v0, &v1);
        }
        if (x->kind == AO_DIST_ABS_NORMAL) {
            v0 = (vf32)((vu32)v0 & 0x7fffffffu);
            v1 = (vf32)((vu32)v1 & 0x7fffffffu);
        }
        _mm512_stream_ps(p + i, (__m512)v0);
        _mm512_stream_ps(p + i + LANES, (__m512)v1);
    }
    la = (struct lanes){a0, a1, a2, a3};
    lb = (struct lanes){b0, b1, b2, b3};
    if (i < n) /* the last step, as fill_run stores it */
        fill_run(&la, &lb, x, p + i, n - i, 0);
}

__attribute__((target("avx512f,avx512dq,avx512vl"))) static void fill_avx512(struct ao_rng *r, const struct ao_dist *x,
                                                                 float *p, size_t n, int exact, int stream)
{
    if (!exact && stream && !((uintptr_t)p & 63)) {
        fill_direct_512(r, x, p, n);
        _mm_sfence();
        return;
    }
    if (!exact && stream) {
        fill_streamed(r, x, p, n, out_streamed_512);
        _mm_sfence();
        return;
    }
    fill_lanes(r, x, p, n, exact);
}

__attribute__((target("avx2"))) static void fill_avx2(struct ao_rng *r, const struct ao_dist *x,
                                                      float *p, size_t n, int exact, int stream)
{
    if (!exact && stream) {
        fill_streamed(r, x, p, n, out_streamed_256);
        _mm_sfence();
        return;
    }
    fill_lanes(r, x, p, n, exact);
}
#endif

/* d[0..n) = s[0..n): by streaming stores where the whole tensor is past
 * the caches (a plain copy reads every line it writes first) */
static void copy(float *d, const float *s, size_t n, int stream)
{
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    if (stream && __builtin_cpu_supports("avx512f")) {
        out_streamed_512(d, s, n);
        _mm_sfence();
        return;
    }
    if (stream && __builtin_cpu_supports("avx2")) {
        out_streamed_256(d, s, n);
        _mm_sfence();
        return;
    }
#endif
    (void)stream;
    memcpy(d, s, n * sizeof *d);
}

/* stream: the whole tensor is past the caches (a part of one streams too) */
static void fill(struct ao_rng *r, const struct ao_dist *x, float *p, size_t n, int exact, int stream)
{
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq")) {
        fill_avx512(r, x, p, n, exact, stream);
        return;
    }
    if (__builtin_cpu_supports("avx2")) {
        fill_avx2(r, x, p, n, exact, stream);
        return;
    }
#endif
    (void)stream;
    fill_lanes(r, x, p, n, exact);
}

static int streams(size_t n)
{
    return n * sizeof(float) >= STREAM_MIN_BYTES;
}

void prof_fill_timed(struct ao_rng *r, const struct ao_dist *x, float *p, size_t n)
{
    fill(r, x, p, n, 0, streams(n));
}

void prof_fill(struct ao_rng *r, const struct ao_dist *x, float *p, size_t n)
{
    fill(r, x, p, n, 1, 0);
}

/* Large tensors over several threads, for a device target (its profiler's
 * other cores time nothing): silu's fresh inputs at the paper size are
 * 29M values a call, 40 ms on one core, longer than their copy to the GPU;
 * bmm's outputs are 1 GB to poison and to compare.  A tensor is cut in up
 * to `threads` slices of at least a million values; a slice that draws
 * has a generator of its own, seeded from the secret one as each call's
 * lanes are. */
enum { MAX_PARTS = 16, MIN_PART = 1 << 20 };
enum part_op { PART_DRAW_TIMED, PART_DRAW, PART_POISON, PART_L2, PART_COPY, PART_CMP };

struct part {
    enum part_op op;
    struct ao_rng r;
    const struct ao_dist *x;
    float *p;
    const float *ref;  /* PART_L2, PART_CMP: p against ref; PART_COPY: p from ref */
    size_t n;
    int stream;        /* PART_DRAW_TIMED, PART_COPY: the whole tensor is past the caches */
    uint32_t word;     /* PART_POISON */
    double num, den;   /* PART_L2's sums; num is +inf on a value not finite; PART_CMP: 1 if they differ */
};

static void *run_part(void *arg)
{
    struct part *f = arg;
    uint32_t *o = (uint32_t *)f->p;

    switch (f->op) {
    case PART_DRAW_TIMED:
        fill(&f->r, f->x, f->p, f->n, 0, f->stream);
        break;
    case PART_DRAW:
        prof_fill(&f->r, f->x, f->p, f->n);
        break;
    case PART_POISON:
        for (size_t k = 0; k < f->n; k++)
            o[k] = f->word;
        break;
    case PART_COPY:
        copy(f->p, f->ref, f->n, f->stream);
        break;
    case PART_CMP:
        f->num = memcmp(f->p, f->ref, f->n * sizeof *f->p) != 0;
        break;
    case PART_L2: {
        /* four sums side by side (one sum is a chain of dependent adds:
         * 4.8 ns a value here), the finiteness checked after */
        double num[4] = {0}, den[4] = {0};
        int bad = 0;
        size_t i = 0;
        for (; i + 4 <= f->n; i += 4)
            for (int l = 0; l < 4; l++) {
                double d = (double)f->p[i + l] - (double)f->ref[i + l];
                bad |= !isfinite(f->p[i + l]);
                num[l] += d * d;
                den[l] += (double)f->ref[i + l] * f->ref[i + l];
            }
        for (; i < f->n; i++) {
            double d = (double)f->p[i] - (double)f->ref[i];
            bad |= !isfinite(f->p[i]);
            num[0] += d * d;
            den[0] += (double)f->ref[i] * f->ref[i];
        }
        f->num = bad ? INFINITY : (num[0] + num[1]) + (num[2] + num[3]);
        f->den = (den[0] + den[1]) + (den[2] + den[3]);
        break;
    }
    }
    return NULL;
}

/* The helpers that run the parts beside the calling thread: started once
 * and kept (a thread started and ended for every draw left the kernel's
 * clean-up of it to run on the other core during the call that followed,
 * and the calls voided for a late wake-up doubled: issue 66).  Each runs
 * on every core the profiler was given (prof_draw_parts notes them). */
static struct {
    pthread_mutex_t mu;
    pthread_cond_t work, done;
    struct part *parts;
    int next, k, left, started;
    cpu_set_t cpus;
    int have_cpus;
} pool = {.mu = PTHREAD_MUTEX_INITIALIZER, .work = PTHREAD_COND_INITIALIZER, .done = PTHREAD_COND_INITIALIZER};

/* Take and run parts until none is left; with the lock held. */
static void pool_drain(void)
{
    while (pool.next < pool.k) {
        struct part *f = &pool.parts[pool.next++];
        pthread_mutex_unlock(&pool.mu);
        run_part(f);
        pthread_mutex_lock(&pool.mu);
        if (--pool.left == 0)
            pthread_cond_broadcast(&pool.done);
    }
}

static void *helper_main(void *arg)
{
    (void)arg;
    if (pool.have_cpus)
        sched_setaffinity(0, sizeof pool.cpus, &pool.cpus);
    pthread_mutex_lock(&pool.mu);
    for (;;) {
        while (pool.next >= pool.k)
            pthread_cond_wait(&pool.work, &pool.mu);
        pool_drain();
    }
    return NULL;
}

/* Cut proto's tensor (p, ref, n) into parts[], each with its own
 * generator drawn from r where it draws, and run them: the first on this
 * thread, the others on the helpers (or here, where none could start).
 * The number of parts. */
static int run_parts(const struct part *proto, struct ao_rng *r, int threads, struct part *part)
{
    int k = threads < MAX_PARTS ? threads : MAX_PARTS;
    int draws = proto->op == PART_DRAW_TIMED || proto->op == PART_DRAW;
    size_t each, n = proto->n;

    if ((size_t)k > n / MIN_PART)
        k = (int)(n / MIN_PART);
    if (k < 1)
        k = 1;
    each = (n / (size_t)k + 7) / 8 * 8; /* whole lanes of the timed draws */
    for (int i = 0; i < k; i++) {
        size_t at = each * (size_t)i;
        part[i] = *proto;
        if (draws && k > 1) {
            for (int w = 0; w < 4; w++)
                part[i].r.s[w] = ao_rng_next(r);
            part[i].r.s[0] |= 1; /* never the all-zero state */
        } else if (draws) {
            part[i].r = *r; /* one part: the caller's generator itself */
        }
        part[i].p = proto->p + at;
        part[i].ref = proto->ref ? proto->ref + at : NULL;
        part[i].n = at >= n ? 0 : n - at < each ? n - at : each;
    }
    if (k == 1) {
        run_part(&part[0]);
        if (draws)
            *r = part[0].r; /* moved on as it would have been */
        return k;
    }
    pthread_mutex_lock(&pool.mu);
    while (pool.started < k - 1) {
        pthread_t th;
        if (pthread_create(&th, NULL, helper_main, NULL) != 0)
            break; /* the parts left run here */
        pthread_detach(th);
        pool.started++;
    }
    pool.parts = part, pool.next = 1, pool.k = k, pool.left = k - 1;
    pthread_cond_broadcast(&pool.work);
    pthread_mutex_unlock(&pool.mu);
    run_part(&part[0]);
    pthread_mutex_lock(&pool.mu);
    pool_drain();
    while (pool.left > 0)
        pthread_cond_wait(&pool.done, &pool.mu);
    pool.k = pool.next = 0;
    pthread_mutex_unlock(&pool.mu);
    return k;
}

int prof_timed_parts(const struct ao_target *tg, int draw_parts, size_t n)
{
    if (tg->after_call)
        return prof_host_threads(tg);
    return streams(n) && draw_parts > 1 ? draw_parts : 1;
}

int prof_draw_parts(const struct ao_profiler_opts *o, const struct ao_target *tg)
{
    cpu_set_t s;
    int n;

    if (tg->after_call || o->cpu >= 0 || sched_getaffinity(0, sizeof s, &s) < 0)
        return 1;
    pthread_mutex_lock(&pool.mu);
    pool.cpus = s, pool.have_cpus = 1;
    pthread_mutex_unlock(&pool.mu);
    n = CPU_COUNT(&s);
    return n > 8 ? 8 : n > 1 ? n : 1;
}

void prof_fill_timed_wide(struct ao_rng *r, const struct ao_dist *x, float *p, size_t n,
                          int threads)
{
    struct part part[MAX_PARTS], proto = {.op = PART_DRAW_TIMED, .x = x, .p = p, .n = n, .stream = streams(n)};
    run_parts(&proto, r, threads, part);
}

void prof_fill_wide(struct ao_rng *r, const struct ao_dist *x, float *p, size_t n, int threads)
{
    struct part part[MAX_PARTS], proto = {.op = PART_DRAW, .x = x, .p = p, .n = n};
    run_parts(&proto, r, threads, part);
}

void prof_poison(float *p, size_t n, uint32_t word, int threads)
{
    struct part part[MAX_PARTS], proto = {.op = PART_POISON, .p = p, .n = n, .word = word};
    run_parts(&proto, NULL, threads, part);
}

void prof_copy_wide(float *d, const float *s, size_t n, int threads)
{
    struct part part[MAX_PARTS], proto = {.op = PART_COPY, .p = d, .ref = s, .n = n, .stream = streams(n)};
    run_parts(&proto, NULL, threads, part);
}

int prof_differ_wide(const float *a, const float *b, size_t n, int threads)
{
    struct part part[MAX_PARTS], proto = {.op = PART_CMP, .p = (float *)a, .ref = b, .n = n};
    int k = run_parts(&proto, NULL, threads, part), differ = 0;

    for (int i = 0; i < k; i++)
        differ |= part[i].num != 0;
    return differ;
}

int prof_pass_parts(const struct ao_job *j, size_t n)
{
    return prof_timed_parts(j->tg, j->draw_parts, n);
}

int prof_dataset_alloc(const struct ao_task *t, struct dataset *d, const long long *dims, int which)
{
    int from = which & PROF_INPUTS ? 0 : t->ninputs,
        to = which & PROF_OUTPUTS ? t->ninputs + t->noutputs : t->ninputs;

    memcpy(d->dims, dims, sizeof d->dims);
    for (int i = from; i < to; i++)
        if (!d->t[i] && !(d->t[i] = prof_tensor_alloc(ao_task_elems(t, i, dims))))
            return -1;
    return 0;
}

void prof_draw_timed(struct ao_rng *r, const struct ao_profiler *p, const struct ao_task *t,
                     struct dataset *d)
{
    for (int i = 0; i < t->ninputs; i++) {
        size_t n = ao_task_elems(t, i, d->dims);
        prof_fill_timed_wide(r, &t->t[i].dist, d->t[i], n, prof_timed_parts(p->tg, p->draw_parts, n));
    }
}

void prof_dataset_free(struct dataset *d)
{
    for (int i = 0; i < AO_MAX_TENSORS; i++) {
        prof_tensor_free(d->t[i]);
        d->t[i] = NULL;
    }
}

double prof_rel_l2(const float *k, const float *r, size_t n, int threads)
{
    struct part part[MAX_PARTS], proto = {.op = PART_L2, .p = (float *)k, .ref = r, .n = n};
    double num = 0, den = 0;
    int m = run_parts(&proto, NULL, threads, part);

    for (int i = 0; i < m; i++) {
        num += part[i].num;
        den += part[i].den;
    }
    if (!isfinite(num))
        return INFINITY;
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

static int add_error(cJSON *arr, const char *set, const char *output, double e)
{
    cJSON *o = cJSON_CreateObject();
    if (!o || !cJSON_AddItemToArray(arr, o)) {
        cJSON_Delete(o);
        return -1;
    }
    cJSON_AddStringToObject(o, "set", set);
    cJSON_AddStringToObject(o, "output", output);
    if (isfinite(e))
        cJSON_AddNumberToObject(o, "rel_l2", e);
    else
        cJSON_AddStringToObject(o, "rel_l2", "non-finite");
    return 0;
}

/* Compare outputs of a call against a reference; sets j->status on failure. */
int prof_check_outputs(struct ao_job *j, const struct ao_task *t, float **out,
                       const struct dataset *ref, const char *set, cJSON *errors,
                       double *max_err)
{
    for (int o = 0; o < t->noutputs; o++) {
        size_t n = ao_task_elems(t, t->ninputs + o, ref->dims);
        double e = prof_rel_l2(out[o], ref->t[t->ninputs + o], n, prof_pass_parts(j, n));
        add_error(errors, set, t->t[t->ninputs + o].name, e);
        if (!(e <= *max_err) && isfinite(*max_err))
            *max_err = e;
        if (!(e <= t->tolerance)) {
            j->status = AO_V_INCORRECT;
            if (isfinite(e))
                snprintf(j->reason, sizeof j->reason, "output '%s' on input set '%s': relative "
                         "L2 error %.3g over the tolerance %.3g", t->t[t->ninputs + o].name, set,
                         e, t->tolerance);
            else
                snprintf(j->reason, sizeof j->reason, "output '%s' on input set '%s' has NaN or "
                         "infinite values (an overflow, or an element never written: outputs "
                         "are poisoned with NaN before each call)", t->t[t->ninputs + o].name, set);
            return -1;
        }
    }
    return 0;
}
