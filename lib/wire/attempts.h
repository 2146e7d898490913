/* attempts.h - poison-message guard: how many times each Kafka input was
 * handed to a stage of a group, counted in Redis so that every replica
 * sees the count.  An input that was in hand when its stage died, again
 * and again, goes to the dead letters instead of crashing the stage for
 * ever. */
#ifndef AO_ATTEMPTS_H
#define AO_ATTEMPTS_H

#include "core/redis.h"
#include "wire/io.h"

/* Guard the inputs of `group` through r (kept by the caller), allowing
 * `max` attempts each.  Fills io's guard; returns 0, or -1 where the
 * group's key does not fit. */
int ao_attempts_guard(struct ao_io *io, struct ao_redis *r, const char *group, long max);

#endif
