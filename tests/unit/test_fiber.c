/* test_fiber.c - fibers park and resume on their own stacks; a nap parks
 * a fiber where a scheduler set one, and sleeps elsewhere */
#include <pthread.h>
#include <string.h>

#include "check.h"
#include "core/fiber.h"
#include "core/util.h"

static int trail[16], ntrail;
static long long napped;

static void counter(void *arg)
{
    int id = *(int *)arg;
    char deep[64 * 1024]; /* a stage's handling keeps buffers on its stack */

    memset(deep, id, sizeof deep);
    for (int i = 0; i < 3; i++) {
        trail[ntrail++] = id * 10 + i;
        ao_fiber_park();
    }
    trail[ntrail++] = deep[sizeof deep - 1] == (char)id ? id * 10 + 9 : -1;
}

static void nap_hook(long long ns)
{
    napped += ns;
    ao_fiber_park();
}

static void napper(void *arg)
{
    (void)arg;
    ao_nap_ns(5000000000LL); /* five seconds: parks, never sleeps */
}

static void *other_thread(void *arg)
{
    *(int *)arg = ao_fiber_self() == NULL;
    return NULL;
}

/* from a fiber: a thread it starts sees no fiber of its own */
static void starter(void *arg)
{
    pthread_t th;
    int *r = arg;
    r[0] = ao_fiber_self() != NULL;
    r[1] = pthread_create(&th, NULL, other_thread, &r[2]) == 0 && pthread_join(th, NULL) == 0;
}

int main(void)
{
    int a = 1, b = 2, done_a = 0, done_b = 0, r[3] = {0, 0, 0};
    struct ao_fiber *fa = ao_fiber_new(counter, &a), *fb = ao_fiber_new(counter, &b), *fn;
    long long t0;

    CHECK(fa && fb && ao_fiber_self() == NULL, "two fibers made; the main stack is no fiber");
    for (int round = 0; round < 4; round++) {
        done_a = ao_fiber_resume(fa);
        done_b = ao_fiber_resume(fb);
    }
    CHECK(done_a && done_b, "each ran to its end over four resumes");
    CHECK(ntrail == 8 && trail[0] == 10 && trail[1] == 20 && trail[2] == 11 && trail[3] == 21 && trail[6] == 19 &&
              trail[7] == 29,
          "they took turns, each where it parked, its stack intact (%d steps)", ntrail);
    ao_fiber_free(fa);
    ao_fiber_free(fb);

    ao_fiber_set_nap(nap_hook);
    fn = ao_fiber_new(napper, NULL);
    t0 = ao_now_ns();
    CHECK(fn && ao_fiber_resume(fn) == 0 && napped == 5000000000LL && ao_now_ns() - t0 < 1000000000LL,
          "a nap on a fiber parks it with the scheduler's hook, at once");
    CHECK(ao_fiber_resume(fn) == 1, "resumed, the nap returns and the fiber ends");
    ao_fiber_free(fn);
    t0 = ao_now_ns();
    ao_nap_ns(20000000LL);
    CHECK(ao_now_ns() - t0 >= 20000000LL && napped == 5000000000LL, "off a fiber, a nap sleeps");
    ao_fiber_set_nap(NULL);
    fn = ao_fiber_new(starter, r);
    CHECK(fn && ao_fiber_resume(fn) == 1 && r[0] && r[1] && r[2],
          "a thread started from a fiber runs on none (the fiber is the starting thread's alone)");
    ao_fiber_free(fn);
    return CHECK_DONE();
}
