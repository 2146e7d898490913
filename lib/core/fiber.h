/* fiber.h - cooperative fibers, each on its own stack (ucontext): a stage
 * handles each message in hand on one, and parks it while its model call
 * is in flight (agents/flight.h).  One thread: a fiber runs only between
 * its resume and its next park, so nothing is touched by two at once. */
#ifndef AO_FIBER_H
#define AO_FIBER_H

struct ao_fiber;
typedef void (*ao_fiber_fn)(void *arg);

/* A fiber that will run fn(arg) on a stack of its own (with a guard page
 * below it).  NULL when out of memory. */
struct ao_fiber *ao_fiber_new(ao_fiber_fn fn, void *arg);
/* Run f until it parks (0) or fn returns (1: free it).  From the main
 * stack only. */
int ao_fiber_resume(struct ao_fiber *f);
/* Inside a fiber: back to the resume that ran it; returns at the next. */
void ao_fiber_park(void);
/* The fiber running now, or NULL on the main stack. */
struct ao_fiber *ao_fiber_self(void);
/* The caller's pointer kept with the fiber (its scheduler's record). */
void ao_fiber_set_data(struct ao_fiber *f, void *data);
void *ao_fiber_data(const struct ao_fiber *f);
void ao_fiber_free(struct ao_fiber *f);

/* Sleep ns, or less when a stop is requested.  Inside a fiber whose
 * scheduler set a nap (ao_fiber_set_nap), the fiber parks instead and the
 * others run; elsewhere the thread sleeps in slices. */
void ao_nap_ns(long long ns);
/* The scheduler's way to park the running fiber for ns (NULL: none); the
 * calling thread's. */
void ao_fiber_set_nap(void (*nap)(long long ns));

#endif
