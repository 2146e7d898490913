/* io.h - the transport seam: messages in and out, over stdio (here) or Kafka (kafka.h) */
#ifndef AO_IO_H
#define AO_IO_H

#include <stddef.h>
#include <stdio.h>

#include <cjson/cJSON.h>

/* One received message.  `raw` is owned by the transport: on Kafka until
 * the message is committed (several may be in hand at once), in pipe mode
 * until the next ao_io_next. */
struct ao_inmsg {
    const char *raw;
    size_t len;
    size_t size;       /* its size on the wire: over len when it was over
                          AO_MAX_MESSAGE and only the start was kept */
    const char *topic; /* where it came from ("stdin" in pipe mode) */
    int partition;     /* Kafka: where in the topic (pipe mode: 0 and 0) */
    long long offset;
    long long created_ms; /* Kafka: when its producer made it (wall clock, ms); 0 unknown */
    void *handle;      /* transport private (a Kafka message) */
};

struct ao_io;
struct ao_sign_key;

struct ao_io_ops {
    /* 1: a message; 0: nothing within timeout_ms; -1: end of input or error */
    int (*next)(struct ao_io *io, struct ao_inmsg *m, int timeout_ms);
    /* send a message; place >= 0: its place in a batch to share out
     * evenly over the partitions (ao_io_emit_json_at), else -1.  0 or -1 */
    int (*emit)(struct ao_io *io, const char *topic, const char *key, long place, const char *json);
    /* the message was handled: once its outputs are delivered it may be
     * forgotten (Kafka batches this); a message with no handle: deliver
     * every output now */
    int (*commit)(struct ao_io *io, struct ao_inmsg *m);
    void (*close)(struct ao_io *io);
    /* does this consumer own the key (its partition of the first input
     * topic) now?  A pipe owns everything. */
    int (*owns)(struct ao_io *io, const char *key);
    /* changes whenever what this consumer owns may have changed */
    unsigned (*generation)(struct ao_io *io);
    /* on: hand out nothing more until off (enough inputs in hand) */
    int (*pause)(struct ao_io *io, int on);
    /* an fd that turns readable when an input may be waiting (an event
     * loop polls it; next with timeout 0 then empties it), or -1 */
    int (*fd)(struct ao_io *io);
};

/* Counts how often each input was handed out (attempts.h); begin returns
 * the count with this one, or -1 with io->err; end forgets the input (at
 * the latest by the next begin, or idle, when no input is waiting).
 * suspect: was this input in hand when a stage of the group died before
 * (its count was there when this one started)?  A stage that holds several
 * inputs at once handles a suspect alone (agents/flight.c), so that a
 * death while it is in hand is its own, and not its neighbours'. */
struct ao_io_guard {
    long (*begin)(void *ctx, struct ao_io *io, const struct ao_inmsg *m);
    int (*suspect)(void *ctx, const struct ao_inmsg *m);
    void (*end)(void *ctx, const struct ao_inmsg *m);
    void (*idle)(void *ctx);
    void (*release)(void *ctx);
    void *ctx;
    long max; /* attempts before the input goes to the dead letters */
};

/* Act on each message id once per run (wire/once.h): claim takes the
 * message's id for the place it came from: 0 it is this place's (first
 * seen here, or handed out here again after a death: act), 1 another place
 * has it (a replay: reason filled, a dead letter), -1 the store failed. */
struct ao_io_once {
    int (*claim)(void *ctx, const cJSON *j, const struct ao_inmsg *m, char *reason, size_t len);
    void (*release)(void *ctx);
    void *ctx;
};

struct ao_io {
    const struct ao_io_ops *ops;
    const char *stage;   /* for dead letters: which stage refused it */
    FILE *dlq;           /* pipe mode: where dead letters are written; NULL:
                            they are emitted to the accelopt.dlq topic */
    char err[512];       /* the last error */
    long long in, out, dead;
    struct ao_io_guard guard; /* none when begin is NULL */
    struct ao_io_once once;   /* none when claim is NULL */
    struct ao_sign_key *key;  /* sign every message sent (NULL: none) */
    int verify;               /* and refuse any received without its signature */
    const struct ao_inmsg *held; /* the message being processed (ao_io_run), else NULL */
    void *priv;
};

/* Pipe mode: read JSON Lines from in, write them to out, dead letters as
 * JSON Lines to dlq (stderr when NULL). */
struct ao_io *ao_io_stdio_new(const char *stage, FILE *in, FILE *out, FILE *dlq);

/* Load the deployment's key (sign.h): every message sent is signed with it,
 * and with verify, every message received must carry its signature or is a
 * dead letter.  A broker is shared, so its consumers verify; a pipe is the
 * operator's own.  0, or -1 or -2 + err as ao_sign_key_load. */
int ao_io_set_key(struct ao_io *io, int verify, char *err, size_t errlen);

int ao_io_next(struct ao_io *io, struct ao_inmsg *m, int timeout_ms);
int ao_io_emit_json(struct ao_io *io, const char *topic, const char *key, const cJSON *msg);
/* The same, as the place-th message of a batch (the plans of an iteration):
 * on a spread topic consecutive places go to consecutive partitions from one
 * the key picks (ao_spread_partition), so every consumer gets its share.
 * The key is the message's as ever. */
int ao_io_emit_json_at(struct ao_io *io, const char *topic, const char *key, long place,
                       const cJSON *msg);
int ao_io_commit(struct ao_io *io, struct ao_inmsg *m);
int ao_io_owns(struct ao_io *io, const char *key);
unsigned ao_io_generation(struct ao_io *io);
/* Several inputs in hand (agents/flight.h): pause the input at enough of
 * them, resume below; 0.  The fd to wait on for more input, or -1. */
int ao_io_pause(struct ao_io *io, int on);
int ao_io_fd(struct ao_io *io);
/* Record a refused message with the reason as a `dlq` message. */
int ao_io_dead_letter(struct ao_io *io, const struct ao_inmsg *m, const char *reason);
void ao_io_free(struct ao_io *io);

/* For a process function that cannot handle any message now (redis down,
 * prompt templates broken): records why in io->err and returns -1, which
 * stops the loop without a dead letter or a commit, so the message comes
 * again after a restart. */
int ao_io_fail(struct ao_io *io, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The per-message core of a stage: handle one parsed message, emitting its
 * outputs through io.  Return 0 when handled, -1 with reason filled to send
 * the message to the dead letters. */
typedef int (*ao_process_fn)(void *ctx, struct ao_io *io, const cJSON *msg,
                             char *reason, size_t reasonlen);

/* The consume-process-produce loop: until end of input or a stop signal.
 * Returns 0 at a clean end, -1 if the transport failed (io->err). */
int ao_io_run(struct ao_io *io, ao_process_fn process, void *ctx);

/* Work due by the clock (deadlines), called between messages and when idle
 * (Kafka mode; a pipe blocks on its read).  0, or -1 with io->err to stop. */
typedef int (*ao_tick_fn)(void *ctx, struct ao_io *io);
/* ao_io_run with a tick (NULL: none). */
int ao_io_run_ticking(struct ao_io *io, ao_process_fn process, ao_tick_fn tick, void *ctx);
/* One message, handed out by ao_io_next, through the loop's steps: the
 * attempt guard, the checks (size, JSON, signature, replay), process, a
 * dead letter with the reason, the commit.  0 to go on; -1 with io->err to
 * stop (the message is then not committed: it comes again). */
int ao_io_handle(struct ao_io *io, struct ao_inmsg *m, ao_process_fn process, void *ctx);

#define AO_MAX_MESSAGE (16u << 20)

#endif
