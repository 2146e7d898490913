/* flight.c - an agent stage's event loop: messages on fibers, their model
 * calls on one curl multi handle */
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "agents/flight.h"
#include "core/alloc.h"
#include "core/fiber.h"
#include "core/log.h"
#include "core/signals.h"
#include "core/util.h"

#define IDLE_WAIT_MS 1000 /* between looks at the clock and the tick when nothing wakes the loop */

/* DEFERRED: a copy of a message in hand (its id handed out again: a
 * pipe's repeat, a partition that came back), started once that one is
 * done, so that it is answered from the run's store, not by a second
 * model call */
/* QUEUED: taken while `calls` were busy: started as one ends.  The input
 * is paused only at twice `calls` in hand, since librdkafka 2.0.2 fetches
 * a resumed partition up to a second later, and a queue that deep hides
 * that. */
enum job_state { RUNNING, NAPPING, TRANSFER, WAITING, DEFERRED, QUEUED, READY };

struct job {
    struct ao_fiber *f;
    struct ao_inmsg m;
    char *copy;                  /* pipe mode: the line, which the next read reuses */
    const struct ao_inmsg *held; /* io->held while it is parked */
    enum job_state state;
    long long wake_ns;           /* a nap's end */
    CURLcode code;               /* its transfer's result */
    int rc;                      /* ao_io_handle's */
    unsigned long long hash;     /* of the message's id (else its bytes): its copies */
    void (*fn)(void *);          /* a part of a message's work (ao_flight_each): no message */
    void *arg;
    struct job *parent;          /* whose work it is part of, waiting on its `children` */
    int children;
    int suspect;                 /* in hand at a death before: handled alone */
    struct job *next;
};

struct flight {
    struct ao_io *io;
    ao_process_fn process;
    void *ctx;
    CURLM *multi;
    struct job *jobs; /* the messages in hand, and the parts of their work */
    int n;            /* the messages in hand */
    int calls, busy;  /* at most `calls` messages busy (started, not ended) */
    int alone;        /* a suspect is busy: nothing else starts */
    char failure[sizeof ((struct ao_io *)0)->err]; /* the first message whose handling failed */
};

static struct flight *F; /* the loop running now: one a process */

static struct job *current(void)
{
    struct ao_fiber *f = ao_fiber_self();
    return f && F ? ao_fiber_data(f) : NULL;
}

static void job_main(void *arg)
{
    struct job *j = arg;
    if (j->fn)
        j->fn(j->arg);
    else
        j->rc = ao_io_handle(F->io, &j->m, F->process, F->ctx);
}

static void link_job(struct flight *fl, struct job *j)
{
    ao_fiber_set_data(j->f, j);
    j->next = fl->jobs;
    fl->jobs = j;
}

static unsigned long long bytes_hash(const char *s, size_t n)
{
    unsigned long long h = 1469598103934665603ULL; /* FNV-1a */
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ULL;
    return h;
}

/* A message's id, hashed (its bytes when it has none: a dead letter to be) */
static unsigned long long id_hash(const struct ao_inmsg *m)
{
    cJSON *j = m->len <= AO_MAX_MESSAGE ? cJSON_ParseWithLength(m->raw, m->len) : NULL;
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(j, "id");
    unsigned long long h = cJSON_IsString(id) ? bytes_hash(id->valuestring, strlen(id->valuestring))
                                              : bytes_hash(m->raw, m->len);
    cJSON_Delete(j);
    return h;
}

/* Is a copy of m (a message of its id) in hand already? */
static int copy_in_hand(const struct flight *fl, const struct job *m)
{
    for (const struct job *o = fl->jobs; o; o = o->next)
        if (o != m && !o->fn && o->hash == m->hash && o->state != DEFERRED)
            return 1;
    return 0;
}

void ao_flight_each(void (*fn)(void *), void *const *args, int n)
{
    struct job *self = current();
    int inline_from = 0;

    for (; self && inline_from < n; inline_from++) {
        struct job *c = ao_calloc(1, sizeof *c);
        if (!(c->f = ao_fiber_new(job_main, c))) {
            free(c);
            break; /* the rest on this fiber */
        }
        c->fn = fn;
        c->arg = args[inline_from];
        c->parent = self;
        c->state = READY; /* started by the loop */
        link_job(F, c);
        self->children++;
    }
    for (int i = inline_from; i < n; i++)
        fn(args[i]);
    if (self && self->children) {
        self->state = WAITING;
        ao_fiber_park();
    }
}

/* A fiber's wait: parked until the loop's clock passes it (or a stop). */
static void nap(long long ns)
{
    struct job *j = current();

    if (ao_stop_requested())
        return;
    j->wake_ns = ao_now_ns() + ns;
    j->state = NAPPING;
    ao_fiber_park();
}

CURLcode ao_flight_perform(CURL *easy)
{
    struct job *j = current();
    CURLMcode mc;

    if (!j)
        return curl_easy_perform(easy);
    curl_easy_setopt(easy, CURLOPT_PRIVATE, (void *)j);
    if ((mc = curl_multi_add_handle(F->multi, easy)) != CURLM_OK) {
        ao_warn("cannot start a model call: %s", curl_multi_strerror(mc));
        return CURLE_FAILED_INIT;
    }
    j->state = TRANSFER;
    ao_fiber_park();
    curl_multi_remove_handle(F->multi, easy);
    return j->code;
}

static void job_free(struct flight *fl, struct job *j)
{
    struct job **p = &fl->jobs;

    while (*p && *p != j)
        p = &(*p)->next;
    if (*p)
        *p = j->next;
    if (j->parent && !--j->parent->children && j->parent->state == WAITING)
        j->parent->state = READY;
    if (!j->fn && j->state != QUEUED && j->state != DEFERRED) {
        fl->busy--;
        fl->alone = fl->alone && !j->suspect;
    }
    for (struct job *o = fl->jobs; !j->fn && o; o = o->next)
        if (o->state == DEFERRED && o->hash == j->hash) {
            o->state = QUEUED; /* the first copy waiting on this one: next in line */
            break;
        }
    if (!j->fn)
        fl->n--;
    ao_fiber_free(j->f);
    free(j->copy);
    free(j);
}

/* Run j until it parks or ends; an ended one is freed.  A failure is kept
 * apart (io->err cleared), so that the others in hand are judged on their
 * own: ao_io_handle reads io->err. */
static void run_job(struct flight *fl, struct job *j)
{
    struct ao_io *io = fl->io;

    io->held = j->held;
    j->state = RUNNING;
    if (!ao_fiber_resume(j->f)) {
        j->held = io->held;
        io->held = NULL;
        return;
    }
    io->held = NULL;
    if (!j->fn && j->rc < 0 && !fl->failure[0])
        snprintf(fl->failure, sizeof fl->failure, "%s", io->err[0] ? io->err : "the stage failed");
    io->err[0] = '\0';
    job_free(fl, j);
}

static struct job *oldest_queued(const struct flight *fl)
{
    struct job *oldest = NULL;

    for (struct job *j = fl->jobs; j; j = j->next)
        if (j->state == QUEUED)
            oldest = j;
    return oldest;
}

/* May message j start now?  Fewer than `calls` busy, no suspect busy,
 * and a suspect only once nothing else is (a death while it is in hand is
 * then its own: wire/attempts.c). */
static int may_start(const struct flight *fl, const struct job *j)
{
    return fl->busy < fl->calls && !fl->alone && (!j->suspect || fl->busy == 0);
}

static void take_place(struct flight *fl, const struct job *j)
{
    fl->busy++;
    fl->alone = j->suspect;
}

static int start_job(struct flight *fl, const struct ao_inmsg *m)
{
    struct job *j = ao_calloc(1, sizeof *j);

    if (!(j->f = ao_fiber_new(job_main, j))) {
        free(j);
        return -1;
    }
    j->m = *m;
    if (!m->handle) { /* a pipe's line lives until the next read */
        j->copy = ao_malloc(m->len + 1);
        memcpy(j->copy, m->raw, m->len);
        j->copy[m->len] = '\0';
        j->m.raw = j->copy;
    }
    j->hash = id_hash(&j->m);
    j->suspect = m->handle && fl->io->guard.suspect && fl->io->guard.suspect(fl->io->guard.ctx, m);
    link_job(fl, j);
    fl->n++;
    if (copy_in_hand(fl, j)) {
        j->state = DEFERRED;
    } else if (oldest_queued(fl) || !may_start(fl, j)) { /* none overtakes a queued one */
        j->state = QUEUED;
    } else {
        take_place(fl, j);
        run_job(fl, j);
    }
    return 0;
}

/* Messages may start: the oldest queued ones, while fewer than `calls`
 * are busy (the list holds the newest first); none past a suspect that
 * waits for the others to end. */
static void start_queued(struct flight *fl)
{
    struct job *oldest;

    while ((oldest = oldest_queued(fl)) && may_start(fl, oldest)) {
        oldest->state = READY;
        take_place(fl, oldest);
    }
}

/* Transfers done, naps over (all at once at a stop): those fibers go on. */
static void wake_jobs(struct flight *fl)
{
    struct CURLMsg *msg;
    int left, stop = ao_stop_requested();
    long long now = ao_now_ns();

    while ((msg = curl_multi_info_read(fl->multi, &left))) {
        void *p = NULL;
        if (msg->msg != CURLMSG_DONE || curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, &p) != CURLE_OK || !p)
            continue;
        ((struct job *)p)->code = msg->data.result;
        ((struct job *)p)->state = READY;
    }
    for (struct job *j = fl->jobs; j; j = j->next)
        if (stop && j->state == TRANSFER) { /* a model that never answers must not hold a stop */
            j->code = CURLE_ABORTED_BY_CALLBACK;
            j->state = READY;
        } else if (j->state == NAPPING && (stop || j->wake_ns <= now)) {
            j->state = READY;
        }
    start_queued(fl);
    for (int again = 1; again;) { /* the list changes under a run: start over after each */
        again = 0;
        for (struct job *j = fl->jobs; j; j = j->next)
            if (j->state == READY) {
                run_job(fl, j);
                start_queued(fl); /* a message that ended frees a place */
                again = 1;
                break;
            }
    }
}

/* Stopping: the messages not started are let go, uncommitted (they come
 * again). */
static void drop_waiting(struct flight *fl)
{
    for (int again = 1; again;) {
        again = 0;
        for (struct job *j = fl->jobs; j; j = j->next)
            if (j->state == QUEUED || j->state == DEFERRED) {
                job_free(fl, j);
                again = 1;
                break;
            }
    }
}

static int wait_ms(const struct flight *fl)
{
    long long now = ao_now_ns(), ms = IDLE_WAIT_MS;
    const struct job *q = oldest_queued(fl);

    if (q && may_start(fl, q))
        return 0;
    for (const struct job *j = fl->jobs; j; j = j->next)
        if (j->state == READY) {
            return 0;
        } else if (j->state == NAPPING) {
            long long left = (j->wake_ns - now) / 1000000LL + 1;
            if (left < ms)
                ms = left > 0 ? left : 0;
        }
    return (int)ms;
}

/* Take inputs while fewer than `calls` are in hand; 1 when the input has
 * ended (or failed: io->err), else 0. */
static int take_inputs(struct flight *fl, int calls)
{
    struct ao_io *io = fl->io;

    while (fl->n < 2 * calls && !fl->failure[0] && !ao_stop_requested()) {
        struct ao_inmsg m;
        int rc = ao_io_next(io, &m, 0);
        if (rc < 0)
            return 1;
        if (rc == 0) {
            if (!fl->n && io->guard.idle)
                io->guard.idle(io->guard.ctx);
            return 0;
        }
        if (start_job(fl, &m) < 0) {
            snprintf(fl->failure, sizeof fl->failure, "no stack could be mapped for a message in hand");
            return 0;
        }
    }
    return 0;
}

int ao_flight_run(struct ao_io *io, ao_process_fn process, ao_tick_fn tick, void *ctx, int calls)
{
    struct flight fl = {.io = io, .process = process, .ctx = ctx, .calls = calls > 0 ? calls : 1};
    int ended = 0, paused = 0, rc = 0;

    if (calls < 1)
        calls = 1;
    if (!(fl.multi = curl_multi_init())) {
        snprintf(io->err, sizeof io->err, "cannot start libcurl's multi interface");
        return -1;
    }
    F = &fl;
    ao_fiber_set_nap(nap);
    for (;;) {
        int stop = ao_stop_requested() || fl.failure[0], fd, running = 0, want;
        struct curl_waitfd w;

        if (!stop && tick && tick(ctx, io) < 0) {
            snprintf(fl.failure, sizeof fl.failure, "%s", io->err);
            continue;
        }
        if (!stop && !ended && (ended = take_inputs(&fl, calls)) && io->err[0]) {
            snprintf(fl.failure, sizeof fl.failure, "%s", io->err);
            io->err[0] = '\0';
        }
        if (stop)
            drop_waiting(&fl);
        if (!fl.n && (stop || ended))
            break;
        if ((want = fl.n >= 2 * calls) != paused) /* enough in hand: the input waits */
            ao_io_pause(io, paused = want);
        fd = !paused && !ended && !stop ? ao_io_fd(io) : -1;
        w = (struct curl_waitfd){fd, CURL_WAIT_POLLIN, 0};
        curl_multi_poll(fl.multi, &w, fd >= 0, stop ? 0 : wait_ms(&fl), NULL);
        curl_multi_perform(fl.multi, &running);
        wake_jobs(&fl);
    }
    ao_fiber_set_nap(NULL);
    F = NULL;
    curl_multi_cleanup(fl.multi);
    if (fl.failure[0]) {
        snprintf(io->err, sizeof io->err, "%s", fl.failure);
        rc = -1;
    }
    return rc;
}
