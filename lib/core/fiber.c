/* fiber.c - cooperative fibers on ucontext, with mmap'd stacks */
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "core/alloc.h"
#include "core/fiber.h"
#include "core/signals.h"
#include "core/util.h"

/* The stages' handling goes deep (prompts, JSON, Redis replies) and keeps
 * error buffers on the stack; pages are only committed once touched. */
#define FIBER_STACK (1u << 20)

struct ao_fiber {
    ucontext_t ctx, caller;
    ao_fiber_fn fn;
    void *arg, *data;
    void *stack; /* mapping: a guard page, then FIBER_STACK */
    size_t size;
    int done;
};

/* per thread: a stage's helper threads (if any) run no fibers */
static _Thread_local struct ao_fiber *running;
static _Thread_local void (*nap_hook)(long long ns);

static void trampoline(unsigned hi, unsigned lo)
{
    struct ao_fiber *f = (struct ao_fiber *)(((uintptr_t)hi << 32) | (uintptr_t)lo);
    f->fn(f->arg);
    f->done = 1;
    /* uc_link is the caller's context: returning resumes it */
}

/* getcontext returns twice (when a context made from it is resumed; ours
 * never are), so it is kept out of the caller's frame */
static __attribute__((noinline)) int context_of(ucontext_t *c)
{
    return getcontext(c);
}

struct ao_fiber *ao_fiber_new(ao_fiber_fn fn, void *arg)
{
    struct ao_fiber *f = ao_calloc(1, sizeof *f);
    size_t page = (size_t)sysconf(_SC_PAGESIZE);

    f->size = FIBER_STACK + page;
    f->stack = mmap(NULL, f->size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (f->stack == MAP_FAILED || mprotect(f->stack, page, PROT_NONE) != 0 || context_of(&f->ctx) != 0) {
        if (f->stack != MAP_FAILED)
            munmap(f->stack, f->size);
        free(f);
        return NULL;
    }
    f->fn = fn;
    f->arg = arg;
    f->ctx.uc_stack.ss_sp = (char *)f->stack + page;
    f->ctx.uc_stack.ss_size = FIBER_STACK;
    f->ctx.uc_link = &f->caller;
    makecontext(&f->ctx, (void (*)(void))trampoline, 2, (unsigned)((uintptr_t)f >> 32),
                (unsigned)((uintptr_t)f & 0xffffffffu));
    return f;
}

int ao_fiber_resume(struct ao_fiber *f)
{
    if (f->done)
        return 1;
    running = f;
    swapcontext(&f->caller, &f->ctx);
    running = NULL;
    return f->done;
}

void ao_fiber_park(void)
{
    struct ao_fiber *f = running;
    if (!f)
        return;
    running = NULL;
    swapcontext(&f->ctx, &f->caller);
    running = f;
}

struct ao_fiber *ao_fiber_self(void)
{
    return running;
}

void ao_fiber_set_data(struct ao_fiber *f, void *data)
{
    f->data = data;
}

void *ao_fiber_data(const struct ao_fiber *f)
{
    return f->data;
}

void ao_fiber_free(struct ao_fiber *f)
{
    if (!f)
        return;
    munmap(f->stack, f->size);
    free(f);
}

void ao_fiber_set_nap(void (*nap)(long long ns))
{
    nap_hook = nap;
}

void ao_nap_ns(long long ns)
{
    long long end = ao_now_ns() + ns;

    if (running && nap_hook) {
        nap_hook(ns);
        return;
    }
    while (!ao_stop_requested() && ao_now_ns() < end) {
        long long left = end - ao_now_ns(), slice = left < 50000000LL ? left : 50000000LL;
        struct timespec ts = {(time_t)(slice / 1000000000LL), (long)(slice % 1000000000LL)};
        if (slice > 0)
            nanosleep(&ts, NULL);
    }
}
