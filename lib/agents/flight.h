/* flight.h - an agent stage's one event loop: each message in hand is
 * handled on a fiber of its own (core/fiber.h), and parks there while its
 * model call is in flight; every transfer goes through one curl multi
 * handle, polled with the input's fd.  At `calls` messages in hand the
 * input is paused, and resumed below; each message is committed when it
 * is done, in any order (the transport stores offsets only up to the
 * lowest unfinished one: wire/kafka.c).  One process then serves a role's
 * calls, where it took one process a call. */
#ifndef AO_FLIGHT_H
#define AO_FLIGHT_H

#include <curl/curl.h>

#include "wire/io.h"

/* The stage's loop until the input ends, a stop is requested (the calls in
 * flight end at once; their messages are not committed and come again) or
 * a message's handling fails (io->err; the others in hand finish first).
 * 0 at a clean end, -1 with io->err. */
int ao_flight_run(struct ao_io *io, ao_process_fn process, ao_tick_fn tick, void *ctx, int calls);
#define AO_FLIGHT_CALLS_MAX 1024 /* `calls` at most (twice that in hand) */

/* One transfer.  On a fiber of the loop: added to its multi handle, the
 * fiber parked until the transfer is done, the others running; elsewhere
 * curl_easy_perform. */
CURLcode ao_flight_perform(CURL *easy);

/* Run fn(args[i]) for i < n, each on a fiber of its own, and return once
 * all have: a message's calls side by side (the planner's wave).  Off the
 * loop's fibers, one after another on the caller's. */
void ao_flight_each(void (*fn)(void *), void *const *args, int n);

#endif
