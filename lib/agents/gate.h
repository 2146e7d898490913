/* gate.h - the calls in flight to one model server, counted in Redis so
 * that every stage process and replica that shares it counts together: at
 * most `limit` at once, and when the server answers 429 with Retry-After,
 * every caller waits that long, not only the one that was told. */
#ifndef AO_GATE_H
#define AO_GATE_H

#include "core/redis.h"

struct ao_gate;

/* One call's place (a process may have several calls in flight). */
struct ao_gate_slot {
    char token[64]; /* its member in the set */
    int held;
};

/* A gate for the server at url (its key is the URL's hash: a URL may carry
 * a secret).  A slot is held for at most lease_s (a holder that died frees
 * it then).  An urgent caller goes before the others when the server is
 * full (the planner and the summarizer: their calls are a run's critical
 * path, one after another, where the executor's are many side by side).
 * NULL where a key does not fit (err). */
struct ao_gate *ao_gate_new(struct ao_redis *r, const char *url, int limit, double lease_s, int urgent,
                            char *err, size_t errlen);
void ao_gate_free(struct ao_gate *g);
/* Take a slot, waiting while the server is full or paused.  0; or -1 + err
 * when a stop was requested or Redis failed (the call is not made). */
int ao_gate_enter(struct ao_gate *g, struct ao_gate_slot *s, char *err, size_t errlen);
/* Give the slot back (after the call, whatever came of it). */
void ao_gate_leave(struct ao_gate *g, struct ao_gate_slot *s);
/* The server asked for a pause: no caller enters for seconds (a longer
 * pause already set stands). */
void ao_gate_pause(struct ao_gate *g, double seconds);
/* The seconds this gate made its caller wait so far (for the log). */
double ao_gate_waited_s(const struct ao_gate *g);

#endif
