/* once.h - act on each signed message once per run.  Anyone who can reach
 * a broker can produce a genuine message again (its signature still
 * holds): a plan replayed ten times would be ten paid model calls.  Each
 * stage takes, in Redis, each message id of a run for the place (topic,
 * partition, offset) of the first copy that reaches any of its replicas:
 * that copy is acted on (again, if it is handed out again after a death),
 * and a copy at any other place (a replay) goes to the dead letters with
 * the reason. */
#ifndef AO_ONCE_H
#define AO_ONCE_H

#include "core/redis.h"
#include "wire/io.h"

/* Guard io's inputs for stage (its name: each stage acts on its own
 * inputs), through r (kept by the caller). */
void ao_once_guard(struct ao_io *io, struct ao_redis *r, const char *stage);

/* A selector that sends a run's messages again to a broker that lost them
 * (accelopt run --resume) deletes the run's marks first (AO_KEY_ACTED). */

#endif
