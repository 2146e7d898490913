/* io.c - the transport seam and its pipe-mode (stdio JSON Lines) backend */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "wire/io.h"
#include "core/alloc.h"
#include "core/log.h"
#include "core/redis.h"
#include "core/signals.h"
#include "core/util.h"
#include "wire/msg.h"
#include "wire/names.h"
#include "wire/sign.h"

struct stdio_priv {
    FILE *in, *out;
    char *line;
    size_t cap;
};

/* Read one line, keeping at most AO_MAX_MESSAGE bytes of it: the limit is
 * enforced while reading, so a huge line costs no memory.  Returns the
 * line's full length (0 at a blank line), -1 at end of input or error. */
static long long read_line(struct stdio_priv *p, size_t *kept)
{
    long long total = 0;
    size_t n = 0;
    int c;

    flockfile(p->in);
    while ((c = getc_unlocked(p->in)) != EOF && c != '\n') {
        total++;
        if (n >= AO_MAX_MESSAGE)
            continue; /* over the limit: counted, not kept */
        if (n + 2 > p->cap) {
            size_t cap = p->cap ? p->cap * 2 : 4096;
            char *d = ao_realloc(p->line, cap);
            p->line = d;
            p->cap = cap;
        }
        p->line[n++] = (char)c;
    }
    funlockfile(p->in);
    if (c == EOF && total == 0)
        return -1;
    if (p->line)
        p->line[n] = '\0';
    *kept = n;
    return total;
}

/* Would a read of in return without waiting for its writer?  Bytes left
 * in the stream's buffer (glibc's FILE keeps them between these two
 * pointers), or the fd readable now; a stream without an fd (a memory
 * stream) never waits.  A line begun is read to its end: writers write
 * whole lines. */
static int stdio_ready(FILE *in)
{
    struct pollfd pf = {fileno(in), POLLIN, 0};

    if (in->_IO_read_ptr < in->_IO_read_end || pf.fd < 0 || feof(in))
        return 1;
    return poll(&pf, 1, 0) > 0;
}

static int stdio_next(struct ao_io *io, struct ao_inmsg *m, int timeout_ms)
{
    struct stdio_priv *p = io->priv;
    long long total;
    size_t n = 0;

    /* a pipe blocks (signals interrupt the read), but for an event loop
     * that asks with no time to wait (agents/flight.c) */
    if (timeout_ms == 0 && !stdio_ready(p->in))
        return 0;
    for (;;) {
        errno = 0;
        total = read_line(p, &n);
        if (total < 0) {
            if (errno == EINTR && !ao_stop_requested()) {
                clearerr(p->in);
                continue;
            }
            if (ferror(p->in) && errno != EINTR)
                snprintf(io->err, sizeof io->err, "cannot read input: %s", strerror(errno));
            return -1;
        }
        while (n > 0 && (p->line[n - 1] == '\r'))
            p->line[--n] = '\0', total--;
        if (total == 0)
            continue; /* blank lines are not messages */
        m->raw = p->line;
        m->len = n;
        m->size = (size_t)total;
        m->topic = "stdin";
        m->partition = 0;
        m->offset = 0;
        m->handle = NULL;
        return 1;
    }
}

static int stdio_emit(struct ao_io *io, const char *topic, const char *key, long place,
                      const char *json)
{
    struct stdio_priv *p = io->priv;
    (void)topic; (void)key; (void)place;
    if (fputs(json, p->out) < 0 || fputc('\n', p->out) < 0 || fflush(p->out) != 0) {
        snprintf(io->err, sizeof io->err, "cannot write output: %s",
                 errno == EPIPE ? "the reader left" : strerror(errno));
        return -1;
    }
    return 0;
}

static int stdio_commit(struct ao_io *io, struct ao_inmsg *m)
{
    (void)io; (void)m;
    return 0; /* a pipe has no offsets to store */
}

static void stdio_close(struct ao_io *io)
{
    struct stdio_priv *p = io->priv;
    free(p->line);
    free(p);
}

static int stdio_owns(struct ao_io *io, const char *key)
{
    (void)io; (void)key;
    return 1;
}

static unsigned stdio_generation(struct ao_io *io)
{
    (void)io;
    return 1;
}

static int stdio_pause(struct ao_io *io, int on)
{
    (void)io; (void)on;
    return 0; /* a pipe is read only when asked */
}

static int stdio_fd(struct ao_io *io)
{
    struct stdio_priv *p = io->priv;
    return feof(p->in) ? -1 : fileno(p->in);
}

static const struct ao_io_ops stdio_ops = {stdio_next,  stdio_emit, stdio_commit,     stdio_close,
                                           stdio_owns,  stdio_generation, stdio_pause, stdio_fd};

struct ao_io *ao_io_stdio_new(const char *stage, FILE *in, FILE *out, FILE *dlq)
{
    struct ao_io *io = ao_calloc(1, sizeof *io);
    struct stdio_priv *p = ao_calloc(1, sizeof *p);

    p->in = in;
    p->out = out;
    io->ops = &stdio_ops;
    io->stage = stage;
    io->dlq = dlq ? dlq : stderr;
    io->priv = p;
    return io;
}

int ao_io_next(struct ao_io *io, struct ao_inmsg *m, int timeout_ms)
{
    int rc;

    memset(m, 0, sizeof *m); /* what a transport does not know stays 0 */
    rc = io->ops->next(io, m, timeout_ms);
    if (rc > 0)
        io->in++;
    return rc;
}

int ao_io_set_key(struct ao_io *io, int verify, char *err, size_t errlen)
{
    int rc;

    if (!io->key)
        io->key = ao_calloc(1, sizeof *io->key);
    if ((rc = ao_sign_key_load(io->key, err, errlen)) < 0) {
        free(io->key);
        io->key = NULL;
        return rc;
    }
    io->verify = verify;
    return 0;
}

/* msg as sent: signed when the transport has a key */
static char *print_signed(struct ao_io *io, const cJSON *msg)
{
    char *s;

    if (!io->key || !cJSON_IsObject(msg)) {
        if ((s = cJSON_PrintUnformatted(msg)))
            ao_utf8_clean(s); /* as ao_sign_print does */
        return s;
    }
    return ao_sign_print(msg, io->key);
}

int ao_io_emit_json_at(struct ao_io *io, const char *topic, const char *key, long place,
                       const cJSON *msg)
{
    char *s = print_signed(io, msg);
    int rc;

    if (!s) { /* not a message: what the stage made is no JSON to send */
        snprintf(io->err, sizeof io->err, "a message that does not print");
        return -1;
    }
    rc = io->ops->emit(io, topic, key, place < 0 ? -1 : place, s);
    cJSON_free(s);
    if (rc == 0)
        io->out++;
    return rc;
}

int ao_io_emit_json(struct ao_io *io, const char *topic, const char *key, const cJSON *msg)
{
    return ao_io_emit_json_at(io, topic, key, -1, msg);
}

int ao_io_commit(struct ao_io *io, struct ao_inmsg *m)
{
    return io->ops->commit(io, m);
}

int ao_io_owns(struct ao_io *io, const char *key)
{
    return io->ops->owns(io, key);
}

unsigned ao_io_generation(struct ao_io *io)
{
    return io->ops->generation(io);
}

int ao_io_pause(struct ao_io *io, int on)
{
    return io->ops->pause ? io->ops->pause(io, on) : 0;
}

int ao_io_fd(struct ao_io *io)
{
    return io->ops->fd ? io->ops->fd(io) : -1;
}

/* The excerpt a dead letter keeps: the first DLQ_EXCERPT bytes, with
 * control bytes and invalid UTF-8 shown as '?', so that its JSON form stays
 * small (never the 6 bytes of a \u0001 per input byte) and valid. */
#define DLQ_EXCERPT 2048
static char *excerpt(const struct ao_inmsg *m)
{
    const unsigned char *raw = (const unsigned char *)m->raw;
    size_t n = m->len < DLQ_EXCERPT ? m->len : DLQ_EXCERPT;
    char *e = ao_malloc(n + 1);

    for (size_t i = 0; i < n;) {
        size_t k = ao_utf8_len(raw + i, n - i);
        if (k == 0 || (k == 1 && raw[i] < 0x20 && raw[i] != '\t')) {
            e[i++] = '?';
            continue;
        }
        memcpy(e + i, raw + i, k);
        i += k;
    }
    e[n] = '\0';
    return e;
}

/* The dead letter of m; about names the run, task, target and iteration
 * of the message (an authenticated one: anyone's claim would let them fail
 * another's run), NULL: none. */
static int dead_letter(struct ao_io *io, const struct ao_inmsg *m, const char *reason,
                       const cJSON *about)
{
    struct ao_dlq_msg d;
    char id[AO_ID_BUF], now[32], hex[65];
    cJSON *j;
    int rc = -1;

    ao_msg_init(&ao_msg_dlq, &d);
    ao_sha256_hex(m->raw, m->len, hex);
    if (ao_name(id, sizeof id, AO_ID_DLQ, io->stage, hex) < 0)
        return -1; /* a stage's name is short */
    ao_utc_now(now, sizeof now);
    /* a bounded excerpt and a hash: a dead letter stays small whatever came in */
    ao_env_set(&d.env, "dlq", id, about ? ao_json_str(about, "run", "") : "",
               about ? ao_json_str(about, "task", "") : "", about ? ao_json_str(about, "target", "") : "",
               about ? (long long)ao_json_num(about, "iter", 0) : 0);
    d.stage = ao_strdup(io->stage);
    d.reason = ao_strdup(reason);
    d.received_at = ao_strdup(now);
    d.source_topic = m->topic ? ao_strdup(m->topic) : NULL;
    d.payload = excerpt(m);
    d.payload_bytes = (long long)(m->size > m->len ? m->size : m->len);
    d.payload_sha256 = ao_strdup(hex); /* of the bytes kept: all of them within the size limit */
    j = ao_msg_encode(&ao_msg_dlq, &d);
    {
        char *s = print_signed(io, j);
        if (s) {
            if (io->dlq) /* pipe mode: a file */
                rc = fprintf(io->dlq, "%s\n", s) < 0 || fflush(io->dlq) ? -1 : 0;
            else
                rc = io->ops->emit(io, AO_TOPIC_DLQ, io->stage, -1, s);
            cJSON_free(s);
        }
    }
    io->dead++;
    ao_warn("dead letter from '%s': %s", m->topic ? m->topic : "?", reason);
    cJSON_Delete(j);
    ao_msg_release(&ao_msg_dlq, &d);
    return rc;
}

int ao_io_dead_letter(struct ao_io *io, const struct ao_inmsg *m, const char *reason)
{
    return dead_letter(io, m, reason, NULL);
}

int ao_io_fail(struct ao_io *io, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(io->err, sizeof io->err, fmt, ap);
    va_end(ap);
    if (!io->err[0])
        snprintf(io->err, sizeof io->err, "the stage failed");
    return -1;
}

void ao_io_free(struct ao_io *io)
{
    if (!io)
        return;
    io->ops->close(io);
    if (io->key)
        memset(io->key, 0, sizeof *io->key);
    free(io->key);
    if (io->guard.release)
        io->guard.release(io->guard.ctx);
    if (io->once.release)
        io->once.release(io->once.ctx);
    free(io);
}

int ao_io_run(struct ao_io *io, ao_process_fn process, void *ctx)
{
    return ao_io_run_ticking(io, process, NULL, ctx);
}

/* Fault injection for the fault tests (tests/faults): a stage dies on any
 * message holding this text, as if it had a bug that input triggers. */
static void crash_if_asked(const struct ao_inmsg *m)
{
    static const char *text;
    static int looked;

    if (!looked++)
        text = getenv("ACCELOPT_FAULT_CRASH_ON");
    if (text && *text && memmem(m->raw, m->len, text, strlen(text)))
        abort();
}

static int trace_fd(void)
{
    static int fd = -2;
    if (fd == -2) {
        const char *path = getenv("ACCELOPT_TRACE");
        fd = path && *path ? open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600) : -1;
    }
    return fd;
}

static long long thread_cpu_ns(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
        return 0;
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* ACCELOPT_TRACE=FILE: each handled message appends a line to FILE: the
 * stage, its pid, where the message came from, its id, when its producer
 * made it and when this stage began and ended it (wall clock: ms from the
 * broker, µs here), and of that handling the thread's CPU time and the
 * Redis round trips with their time, so that tests/bench/overhead.sh can
 * say where a run's time between the stages goes.  One write a line
 * (O_APPEND): stages may share the file. */
struct trace_start {
    long long wall_us, cpu_ns, redis_trips, redis_ns;
};

static void trace_begin(struct trace_start *s)
{
    memset(s, 0, sizeof *s);
    s->wall_us = ao_wall_ns() / 1000;
    if (trace_fd() < 0)
        return;
    s->cpu_ns = thread_cpu_ns();
    ao_redis_totals(&s->redis_trips, &s->redis_ns);
}

static void trace(const struct ao_io *io, const struct ao_inmsg *m, const cJSON *j,
                  const struct trace_start *s, const char *reason)
{
    long long trips, ns;
    const cJSON *env = j ? cJSON_GetObjectItemCaseSensitive(j, "id") : NULL;
    int fd = trace_fd();
    cJSON *t;
    char *line;

    if (fd < 0)
        return;
    t = cJSON_CreateObject();
    cJSON_AddStringToObject(t, "stage", io->stage ? io->stage : "?");
    cJSON_AddNumberToObject(t, "pid", (double)getpid());
    cJSON_AddStringToObject(t, "topic", m->topic ? m->topic : "?");
    cJSON_AddStringToObject(t, "id", cJSON_IsString(env) ? env->valuestring : "?");
    cJSON_AddNumberToObject(t, "created_ms", (double)m->created_ms);
    cJSON_AddNumberToObject(t, "start_us", (double)s->wall_us);
    cJSON_AddNumberToObject(t, "end_us", (double)(ao_wall_ns() / 1000));
    /* of the handling: this thread's CPU time, and the Redis round trips
     * and their time; the rest was waiting (the broker, the scheduler) */
    cJSON_AddNumberToObject(t, "cpu_us", (double)((thread_cpu_ns() - s->cpu_ns) / 1000));
    ao_redis_totals(&trips, &ns);
    cJSON_AddNumberToObject(t, "redis_trips", (double)(trips - s->redis_trips));
    cJSON_AddNumberToObject(t, "redis_us", (double)((ns - s->redis_ns) / 1000));
    if (reason[0])
        cJSON_AddStringToObject(t, "dead_letter", reason);
    if ((line = cJSON_PrintUnformatted(t))) {
        size_t n = strlen(line);
        line[n] = '\n'; /* the terminator becomes the newline: one write */
        if (write(fd, line, n + 1) < 0) {
            /* a trace is best effort */
        }
        cJSON_free(line);
    }
    cJSON_Delete(t);
}

int ao_io_handle(struct ao_io *io, struct ao_inmsg *m, ao_process_fn process, void *ctx)
{
    char reason[512] = "";
    cJSON *j = NULL;
    long tries = 0;
    struct trace_start ts;
    int authentic = 0; /* its signature checked: its run is its own */
    int seen = 0;      /* claimed before, at another place: a replay */

    trace_begin(&ts);
    if (io->guard.begin && m->handle && (tries = io->guard.begin(io->guard.ctx, io, m)) < 0)
        return -1;
    if (tries <= io->guard.max)
        crash_if_asked(m); /* counted first, like a real crash while handling it */
    io->held = m; /* for a process function that checks its bytes (a pipe's signatures) */
    if (tries > io->guard.max) { /* tries is 0 without a guard */
        snprintf(reason, sizeof reason,
                 "handed out %ld times; each time before, the stage died with it in hand "
                 "(a poison message)", tries);
    } else if (m->len > AO_MAX_MESSAGE || m->size > AO_MAX_MESSAGE) {
        snprintf(reason, sizeof reason, "message of %zu bytes is over the %u byte limit",
                 m->size > m->len ? m->size : m->len, AO_MAX_MESSAGE);
    } else if (!(j = ao_msg_parse(m->raw, m->len, reason, sizeof reason))) {
        /* reason says why */
    } else if (io->verify && io->key &&
               !(authentic = ao_sign_check(m->raw, m->len, io->key, reason, sizeof reason) == 0)) {
        /* reason says why: anyone may produce to a broker's topics */
    } else if (authentic && io->once.claim && m->handle &&
               (seen = io->once.claim(io->once.ctx, j, m, reason, sizeof reason)) != 0) {
        /* a genuine message produced again elsewhere: not acted on twice */
        if (seen < 0) {
            io->held = NULL;
            cJSON_Delete(j);
            return ao_io_fail(io, "%s", reason);
        }
    } else if (process(ctx, io, j, reason, sizeof reason) == 0) {
        reason[0] = '\0';
    } else if (io->err[0]) {
        /* the output side failed: the message is not lost, stop here;
         * not the message's fault, so its attempt is forgotten */
        io->held = NULL;
        cJSON_Delete(j);
        if (tries)
            io->guard.end(io->guard.ctx, m);
        return -1;
    }
    io->held = NULL;
    trace(io, m, j, &ts, reason);
    if (reason[0] && dead_letter(io, m, reason, authentic ? j : NULL) < 0) {
        cJSON_Delete(j);
        if (tries <= io->guard.max || !tries) {
            snprintf(io->err, sizeof io->err, "cannot write a dead letter (%.300s)", reason);
            return -1; /* comes again; the poison guard counts it */
        }
        /* past the attempts: skipped all the same, so it cannot stop the stage */
        ao_err("cannot write a dead letter for %s[%d]@%lld; skipped after %ld attempts: %s",
               m->topic ? m->topic : "?", m->partition, m->offset, tries, reason);
    } else {
        cJSON_Delete(j);
    }
    if (tries) /* before the commit, which lets the transport forget m */
        io->guard.end(io->guard.ctx, m);
    return ao_io_commit(io, m) < 0 ? -1 : 0;
}

int ao_io_run_ticking(struct ao_io *io, ao_process_fn process, ao_tick_fn tick, void *ctx)
{
    while (!ao_stop_requested()) {
        struct ao_inmsg m;
        int rc;

        if (tick && tick(ctx, io) < 0)
            return -1;
        if ((rc = ao_io_next(io, &m, 100)) < 0)
            return io->err[0] ? -1 : 0;
        if (rc == 0) {
            if (io->guard.idle)
                io->guard.idle(io->guard.ctx);
            continue;
        }
        if (ao_io_handle(io, &m, process, ctx) < 0)
            return -1;
    }
    return 0;
}
