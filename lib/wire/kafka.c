/* kafka.c - the Kafka backend of the transport seam, and the embedded broker */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <hiredis/hiredis.h>
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#include "wire/kafka.h"
#include "core/alloc.h"
#include "core/log.h"
#include "core/signals.h"
#include "core/util.h"
#include "wire/names.h"

/* Handled inputs are committed in batches: their offsets are stored once
 * their outputs are delivered, which is when the batch is this big, this
 * old, or the input runs dry.  A crash loses no input, only redoes the
 * batch (at-least-once): a slow stage commits every message (its next one
 * comes after the age limit), a fast one every 100 ms of work.  Waiting for
 * delivery costs tens of ms on the mock cluster, so batching is what lets
 * one stage pass over 10,000 messages/s (tests/bench/transport.sh). */
#define BATCH_MAX 5000
#define BATCH_NS (100 * 1000000LL)
#define CLOSE_NS (10 * 1000000000LL) /* to leave the group at exit */
/* the doorbell (ao_io_kafka_bell): awake this long after an input or a
 * ring, this long after a look with no ring, and a look this often */
#define AWAKE_NS (1000 * 1000000LL)
#define PEEK_NS (30 * 1000000LL)
#define DOZE_NS (20000 * 1000000LL)
#define BELL_TOPICS 8
#define MAKE_TOPICS_MAX 64
#define MAKE_TOPICS_MS 30000
/* librdkafka's mock cluster names itself so (rd_kafka_clusterid) */
#define MOCK_CLUSTER_ID "mockCluster"

/* An input in hand: handed out, not yet committed.  Its offset may be
 * stored only once every input before it on its partition is done (the
 * lowest unfinished one is where a restart begins); `generation` tells an
 * input from before a rebalance, whose partition may have moved since. */
struct in_hand {
    rd_kafka_message_t *m;
    unsigned generation;
};

struct kafka_priv {
    rd_kafka_t *consumer, *producer;
    struct in_hand *hand; /* the inputs being handled, in the order handed out */
    int nhand, caphand;
    rd_kafka_topic_partition_list_t *seen; /* per partition: the offset after the last handed out */
    int paused;                            /* the assignment paused: enough in hand */
    int mock;                              /* the embedded broker */
    struct ao_redis *bell_pub, *bell_sub;  /* the doorbell: rung on, listened on (NULL: none) */
    int dozing;                            /* paused for quiet, listening for the bell */
    int held_back;                         /* the assignment is paused now (either reason) */
    long long awake_until, doze_until;
    char inputs[BELL_TOPICS][AO_TOPIC_PREFIX_MAX + AO_TOPIC_MAX]; /* on the cluster */
    int ninputs;
    int wake[2];                           /* the consumer queue's io event: readable when it fills */
    long failed;              /* outputs whose delivery failed (sticky: nothing is stored after) */
    char failure[256];
    rd_kafka_topic_partition_list_t *batch; /* handled inputs: next offset per partition */
    int nbatch;
    long long batch_since;
    rd_kafka_topic_partition_list_t *owned; /* the current assignment */
    unsigned generation;                    /* bumped by every rebalance */
    int closing;                            /* leaving the group: it commits itself */
    char keyed_topic[AO_TOPIC_PREFIX_MAX + AO_TOPIC_MAX]; /* the first input topic, for ao_io_owns */
    int keyed_partitions;
    /* a pipe to tell the supervisor (`accelopt run`) of every assignment,
     * "<pid> <partitions held> <partitions of its topics>\n", or -1 */
    int ready_fd;
    int topic_parts; /* the partitions of the topics it reads, when it started */
    char prefix[AO_TOPIC_PREFIX_MAX + 1]; /* the site's namespace: before every topic and group */
    size_t plen;
};

/* A topic's name on the cluster, and back: the stages name topics without
 * the deployment's prefix. */
static int on_cluster(const char *prefix, const char *topic, char *out, size_t n)
{
    return ao_name(out, n, "%s%s", prefix ? prefix : "", topic);
}

static const char *unprefixed(const struct kafka_priv *p, const char *name)
{
    return p && p->plen && strncmp(name, p->prefix, p->plen) == 0 ? name + p->plen : name;
}

static int32_t partition_of(const rd_kafka_topic_t *rkt, const void *key, size_t keylen,
                            int32_t count, void *topic_opaque, void *msg_opaque)
{
    /* a batch's keyed place (the plans of an iteration), else round robin
     * from a random start: producers that started together (a stage's
     * replicas) do not all begin on partition 0 */
    static unsigned next, seeded;
    if (ao_topic_spread(unprefixed(topic_opaque, rd_kafka_topic_name(rkt)))) {
        int at = ao_spread_partition(key, keylen, (long)(intptr_t)msg_opaque - 1, count);
        if (at >= 0)
            return at;
        if (!__atomic_exchange_n(&seeded, 1, __ATOMIC_RELAXED)) {
            unsigned r = 0;
            ao_random_bytes(&r, sizeof r);
            __atomic_fetch_add(&next, r, __ATOMIC_RELAXED);
        }
        return (int32_t)(__atomic_fetch_add(&next, 1, __ATOMIC_RELAXED) % (unsigned)count);
    }
    return rd_kafka_msg_partitioner_consistent_random(rkt, key, keylen, count, topic_opaque,
                                                      msg_opaque);
}

static void on_delivery(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque)
{
    struct kafka_priv *p = opaque;
    (void)rk;
    if (m->err) {
        p->failed++;
        snprintf(p->failure, sizeof p->failure, "delivery to '%s' failed: %s",
                 rd_kafka_topic_name(m->rkt), rd_kafka_err2str(m->err));
    }
}

static void release_hand(struct kafka_priv *p)
{
    for (int i = 0; i < p->nhand; i++)
        rd_kafka_message_destroy(p->hand[i].m);
    p->nhand = 0;
}

static void hand_add(struct kafka_priv *p, rd_kafka_message_t *rm)
{
    rd_kafka_topic_partition_t *tp;
    const char *topic = rd_kafka_topic_name(rm->rkt);

    if (p->nhand == p->caphand) {
        int cap = p->caphand ? 2 * p->caphand : 8;
        struct in_hand *h = ao_realloc(p->hand, sizeof *h * (size_t)cap);
        p->hand = h;
        p->caphand = cap;
    }
    if (!(tp = rd_kafka_topic_partition_list_find(p->seen, topic, rm->partition)))
        tp = rd_kafka_topic_partition_list_add(p->seen, topic, rm->partition);
    tp->offset = rm->offset + 1;
    p->hand[p->nhand++] = (struct in_hand){rm, p->generation};
}

static int flush_batch(struct ao_io *io);

/* Forget the batch (stored, or given up with a lost assignment). */
static void batch_reset(struct kafka_priv *p)
{
    rd_kafka_topic_partition_list_destroy(p->batch);
    p->batch = rd_kafka_topic_partition_list_new(8);
    p->nbatch = 0;
}

/* The assignment is paused while enough inputs are in hand, or while the
 * consumer dozes (ao_io_kafka_bell). */
static void apply_pause(struct kafka_priv *p)
{
    int want = p->paused || p->dozing;
    rd_kafka_resp_err_t e;

    if (!p->consumer || !p->owned || want == p->held_back)
        return;
    e = want ? rd_kafka_pause_partitions(p->consumer, p->owned) : rd_kafka_resume_partitions(p->consumer, p->owned);
    if (e)
        ao_warn("kafka: cannot %s the input: %s", want ? "pause" : "resume", rd_kafka_err2str(e));
    else
        p->held_back = want;
}

/* Nothing came: a second without input (rings while awake count as input
 * coming) and the consumer dozes. */
static void maybe_doze(struct kafka_priv *p)
{
    long long now = ao_now_ns();
    int heard;

    if (!p->bell_sub || p->dozing || !p->owned)
        return;
    if ((heard = ao_redis_heard(p->bell_sub)) > 0)
        p->awake_until = now + AWAKE_NS;
    if (heard < 0 || now < p->awake_until)
        return;
    p->dozing = 1;
    p->doze_until = now + DOZE_NS;
    apply_pause(p);
}

/* Dozing: has the bell rung, or the doze run out?  Waits for it up to
 * timeout_ms.  1: awake again (fetching), 0: still dozing. */
static int bell_rang(struct kafka_priv *p, int timeout_ms)
{
    int heard = ao_redis_heard(p->bell_sub);

    if (heard == 0 && timeout_ms > 0) {
        struct pollfd pf[2] = {{ao_redis_fd(p->bell_sub), POLLIN, 0}, {p->wake[0], POLLIN, 0}};
        long long left = (p->doze_until - ao_now_ns()) / 1000000LL;
        poll(pf, p->wake[0] >= 0 ? 2 : 1, (int)(left < timeout_ms ? (left > 0 ? left : 0) : timeout_ms));
        heard = ao_redis_heard(p->bell_sub);
    }
    if (heard < 0) {
        ao_warn("kafka: the doorbell's redis connection is gone; fetching all the time again");
        ao_redis_free(p->bell_sub);
        p->bell_sub = NULL;
    }
    if (heard == 0 && ao_now_ns() < p->doze_until)
        return 0;
    p->dozing = 0;
    p->awake_until = ao_now_ns() + (heard > 0 ? AWAKE_NS : PEEK_NS);
    p->doze_until = 0;
    apply_pause(p);
    return 1;
}

/* rd_kafka_new with its threads' timer slack at 1 ms.  librdkafka's main
 * thread sleeps until its next timer in whole milliseconds and spins the
 * rest (up to 1 ms at each of a few timers a second), which made an idle
 * consumer cost 0.18-0.21% of a core and an idle producer 0.10%; woken up
 * to 1 ms late instead of early, it does not spin: 0.05% and 0.03%
 * (tests/bench/rdkafka-idle.sh, issue 67).  A timer of librdkafka's
 * may fire a millisecond late; a message that comes wakes it at once.
 * Its threads take the slack of the thread that makes them; ours is
 * given back after. */
#define RDK_TIMER_SLACK_NS 1000000UL

static rd_kafka_t *rdk_new(rd_kafka_type_t type, rd_kafka_conf_t *conf, char *e, size_t elen)
{
    int had = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
    rd_kafka_t *rk;

    prctl(PR_SET_TIMERSLACK, RDK_TIMER_SLACK_NS, 0, 0, 0);
    rk = rd_kafka_new(type, conf, e, elen);
    if (had > 0)
        prctl(PR_SET_TIMERSLACK, (unsigned long)had, 0, 0, 0);
    return rk;
}

static int kafka_next(struct ao_io *io, struct ao_inmsg *m, int timeout_ms)
{
    struct kafka_priv *p = io->priv;
    rd_kafka_message_t *rm;

    rd_kafka_poll(p->producer, 0); /* delivery reports */
    if (p->wake[0] >= 0) { /* emptied before the queue is: what comes later writes again */
        char b[64];
        while (read(p->wake[0], b, sizeof b) > 0)
            ;
    }
    if (!p->consumer) {
        snprintf(io->err, sizeof io->err, "this transport only produces");
        return -1;
    }
    rm = p->nbatch ? rd_kafka_consumer_poll(p->consumer, 0) : NULL;
    if (!rm && p->nbatch && flush_batch(io) < 0) /* the input ran dry: commit */
        return -1;
    if (!rm && p->dozing && !bell_rang(p, timeout_ms))
        rm = rd_kafka_consumer_poll(p->consumer, 0); /* rebalances; the paused partitions give nothing */
    else if (!rm)
        rm = rd_kafka_consumer_poll(p->consumer, timeout_ms);
    if (!rm) {
        maybe_doze(p);
        return 0;
    }
    if (rm->err) {
        rd_kafka_resp_err_t e = rm->err;
        /* refused by the cluster's ACLs or its authentication: asking again
         * changes nothing, and a stage that waits on looks alive */
        if (e == RD_KAFKA_RESP_ERR_GROUP_AUTHORIZATION_FAILED || e == RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED ||
            e == RD_KAFKA_RESP_ERR__AUTHENTICATION || e == RD_KAFKA_RESP_ERR_SASL_AUTHENTICATION_FAILED) {
            snprintf(io->err, sizeof io->err, "the cluster refuses this client: %s (its --kafka-file "
                     "credentials, and the ACLs of its --topic-prefix)", rd_kafka_message_errstr(rm));
            rd_kafka_message_destroy(rm);
            return -1;
        }
        if (e != RD_KAFKA_RESP_ERR__PARTITION_EOF)
            ao_warn("kafka: %s", rd_kafka_message_errstr(rm));
        rd_kafka_message_destroy(rm);
        return 0;
    }
    p->awake_until = ao_now_ns() + AWAKE_NS;
    hand_add(p, rm);
    m->raw = rm->payload ? rm->payload : "";
    m->len = rm->payload ? rm->len : 0;
    m->size = m->len;
    m->topic = unprefixed(p, rd_kafka_topic_name(rm->rkt));
    m->partition = rm->partition;
    m->offset = rm->offset;
    {
        rd_kafka_timestamp_type_t tt;
        int64_t ts = rd_kafka_message_timestamp(rm, &tt);
        m->created_ms = tt == RD_KAFKA_TIMESTAMP_CREATE_TIME && ts > 0 ? ts : 0;
    }
    m->handle = rm;
    return 1;
}

/* Tell the topic's dozing consumers (ao_io_kafka_bell); best effort: a
 * ring lost costs them at most a doze. */
static void ring(struct kafka_priv *p, const char *name)
{
    char ch[AO_REDIS_KEY_MAX], e[256];
    const char *argv[3] = {"PUBLISH", ch, "1"};
    redisReply *rep;

    if (ao_redis_key(p->bell_pub, ch, sizeof ch, AO_KEY_BELL, name) &&
        (rep = ao_redis_argv(p->bell_pub, 3, argv, NULL, e, sizeof e)))
        freeReplyObject(rep);
}

static int kafka_emit(struct ao_io *io, const char *topic, const char *key, long place,
                      const char *json)
{
    struct kafka_priv *p = io->priv;
    rd_kafka_resp_err_t e;
    char name[AO_TOPIC_PREFIX_MAX + AO_TOPIC_MAX];

    if (on_cluster(p->prefix, topic, name, sizeof name) < 0) {
        snprintf(io->err, sizeof io->err, "topic name '%.100s' is too long", topic);
        return -1;
    }
    for (;;) {
        e = rd_kafka_producev(p->producer, RD_KAFKA_V_TOPIC(name),
                              RD_KAFKA_V_KEY(key, key ? strlen(key) : 0),
                              RD_KAFKA_V_VALUE((void *)json, strlen(json)),
                              /* the batch place, for partition_of (0: none) */
                              RD_KAFKA_V_OPAQUE((void *)(intptr_t)(place + 1)),
                              RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END);
        if (e != RD_KAFKA_RESP_ERR__QUEUE_FULL)
            break;
        rd_kafka_poll(p->producer, 100); /* make room */
    }
    if (e) {
        snprintf(io->err, sizeof io->err, "cannot produce to '%s': %s", topic, rd_kafka_err2str(e));
        return -1;
    }
    if (p->bell_pub)
        ring(p, name);
    return 0;
}

/* Wait until every output is delivered; a broker outage is waited out
 * (librdkafka retries) until message.timeout.ms fails the delivery. */
static int flush_outputs(struct ao_io *io)
{
    struct kafka_priv *p = io->priv;
    long long since = ao_now_ns(), warned = since;

    while (rd_kafka_flush(p->producer, 1000) != RD_KAFKA_RESP_ERR_NO_ERROR) {
        if (ao_stop_requested()) {
            snprintf(io->err, sizeof io->err, "stopped with outputs undelivered");
            return -1;
        }
        if (ao_now_ns() - warned > 30 * 1000000000LL) {
            warned = ao_now_ns();
            ao_warn("kafka: %d outputs waiting %.0f s for the brokers", rd_kafka_outq_len(p->producer),
                    (double)(warned - since) / 1e9);
        }
    }
    if (p->failed) {
        snprintf(io->err, sizeof io->err, "%s", p->failure); /* sticky: the batch is never stored */
        return -1;
    }
    return 0;
}

/* The outputs are delivered, then the batch's offsets are stored: a crash
 * before this point means its inputs come again (at-least-once). */
static int flush_batch(struct ao_io *io)
{
    struct kafka_priv *p = io->priv;

    if (flush_outputs(io) < 0)
        return -1;
    if (p->nbatch && rd_kafka_offsets_store(p->consumer, p->batch)) {
        for (int i = 0; i < p->batch->cnt; i++)
            if (p->batch->elems[i].err) /* revoked meanwhile: its new owner redoes it */
                ao_warn("kafka: offset of '%s' [%d] not stored: %s", p->batch->elems[i].topic,
                        p->batch->elems[i].partition, rd_kafka_err2str(p->batch->elems[i].err));
    }
    if (p->nbatch)
        batch_reset(p);
    return 0;
}

/* Where a restart on rm's partition must begin once rm is done: the
 * lowest input still in hand there, else the one after the last handed
 * out (inputs finish out of order: Confluent's Parallel Consumer and
 * Flink's async I/O store offsets by the same rule). */
static int64_t resume_offset(struct kafka_priv *p, const rd_kafka_message_t *rm)
{
    int64_t low = -1;
    const rd_kafka_topic_partition_t *tp;

    for (int i = 0; i < p->nhand; i++) {
        const rd_kafka_message_t *o = p->hand[i].m;
        if (o->partition == rm->partition && o->rkt == rm->rkt && p->hand[i].generation == p->generation &&
            (low < 0 || o->offset < low))
            low = o->offset;
    }
    if (low >= 0)
        return low;
    tp = rd_kafka_topic_partition_list_find(p->seen, rd_kafka_topic_name(rm->rkt), rm->partition);
    return tp && tp->offset > rm->offset ? tp->offset : rm->offset + 1;
}

static int kafka_commit(struct ao_io *io, struct ao_inmsg *m)
{
    struct kafka_priv *p = io->priv;
    rd_kafka_message_t *rm = m->handle;
    int i, current;

    if (!rm) /* flush now */
        return flush_batch(io);
    for (i = 0; i < p->nhand && p->hand[i].m != rm; i++)
        ;
    if (i == p->nhand) {
        snprintf(io->err, sizeof io->err, "an input committed twice");
        return -1;
    }
    current = p->hand[i].generation == p->generation;
    memmove(p->hand + i, p->hand + i + 1, sizeof *p->hand * (size_t)(p->nhand - i - 1));
    p->nhand--;
    /* an input from before a rebalance: its partition was committed up to
     * it then, and may be another's now; its outputs went out, nothing is
     * stored for it */
    if (current) {
        const char *topic = rd_kafka_topic_name(rm->rkt);
        rd_kafka_topic_partition_t *tp =
            rd_kafka_topic_partition_list_find(p->batch, topic, rm->partition);
        if (!tp)
            tp = rd_kafka_topic_partition_list_add(p->batch, topic, rm->partition);
        tp->offset = resume_offset(p, rm);
        if (!p->nbatch++)
            p->batch_since = ao_now_ns();
    }
    rd_kafka_message_destroy(rm);
    m->handle = NULL;
    if (p->nbatch >= BATCH_MAX || ao_now_ns() - p->batch_since > BATCH_NS)
        return flush_batch(io);
    return 0;
}

/* Rebalances: handled inputs are committed before their partitions go, so
 * their new owner does not redo them; a lost assignment (the group gave
 * the partitions away, e.g. after a stall) commits nothing. */
/* A message fetched while the consumer closes reaches the close queue,
 * which kafka_close serves with callbacks; without a consume callback
 * librdkafka 2.0.2 asserts there ("res != RD_KAFKA_OP_RES_PASS").  Such a
 * message was never handed out, so it is left uncommitted and comes again.
 * rd_kafka_consumer_poll still returns messages as before. */
static void drop_while_closing(rd_kafka_message_t *m, void *opaque)
{
    (void)m;
    (void)opaque;
}

/* What this member holds now, for `accelopt run`: a run's groups are its
 * own stages', and one of them left short of its topics' partitions for
 * long means another consumer is in the group, taking its messages (on the
 * embedded broker, any local user can join; issue 68).  One line, one
 * write (atomic on a pipe); a pipe that is full drops it. */
static void tell_supervisor(struct kafka_priv *p, int held)
{
    char line[64];
    int n;

    if (p->ready_fd < 0)
        return;
    n = snprintf(line, sizeof line, "%ld %d %d\n", (long)getpid(), held, p->topic_parts);
    if (write(p->ready_fd, line, (size_t)n) < 0)
        ao_debug("kafka: cannot tell the supervisor what we hold: %s", strerror(errno));
}

static void on_rebalance(rd_kafka_t *rk, rd_kafka_resp_err_t err,
                         rd_kafka_topic_partition_list_t *parts, void *opaque)
{
    struct ao_io *io = opaque;
    struct kafka_priv *p = io->priv;

    p->generation++;
    rd_kafka_topic_partition_list_destroy(p->seen);
    p->seen = rd_kafka_topic_partition_list_new(8);
    if (p->owned)
        rd_kafka_topic_partition_list_destroy(p->owned);
    p->owned = NULL;
    if (err == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) {
        p->owned = rd_kafka_topic_partition_list_copy(parts);
        ao_debug("kafka: assigned %d partitions", parts->cnt);
        tell_supervisor(p, parts->cnt); /* in the group: `accelopt run` may send work */
        rd_kafka_assign(rk, parts);
        p->dozing = 0; /* new partitions may hold inputs: look at once */
        p->awake_until = ao_now_ns() + AWAKE_NS;
        p->held_back = 0;
        apply_pause(p); /* enough in hand: the new partitions wait too */
        return;
    }
    if (rd_kafka_assignment_lost(rk)) {
        ao_warn("kafka: assignment lost (the group gave it away); %d handled inputs left "
                "uncommitted for their new owner", p->nbatch);
        batch_reset(p);
    } else if (flush_batch(io) == 0 && !p->closing) {
        rd_kafka_resp_err_t e = rd_kafka_commit(rk, NULL, 0);
        if (e && e != RD_KAFKA_RESP_ERR__NO_OFFSET)
            ao_warn("kafka: commit before a rebalance failed: %s", rd_kafka_err2str(e));
    } else if (io->err[0]) {
        ao_warn("kafka: %s; the revoked inputs are redone by their new owner", io->err);
        io->err[0] = '\0';
    }
    ao_debug("kafka: %d partitions revoked", parts->cnt);
    tell_supervisor(p, 0);
    rd_kafka_assign(rk, NULL);
    p->held_back = 0;
}

static int kafka_owns(struct ao_io *io, const char *key)
{
    struct kafka_priv *p = io->priv;
    int32_t part;

    if (!p->owned) /* nothing assigned now, or it only produces */
        return 0;
    if (!p->keyed_partitions) {
        const struct rd_kafka_metadata *md;
        rd_kafka_topic_t *rkt = rd_kafka_topic_new(p->consumer, p->keyed_topic, NULL);
        if (rkt && rd_kafka_metadata(p->consumer, 0, rkt, &md, 5000) == RD_KAFKA_RESP_ERR_NO_ERROR) {
            if (md->topic_cnt == 1 && !md->topics[0].err)
                p->keyed_partitions = md->topics[0].partition_cnt;
            rd_kafka_metadata_destroy(md);
        }
        if (rkt)
            rd_kafka_topic_destroy(rkt);
        if (!p->keyed_partitions)
            return 0;
    }
    part = rd_kafka_msg_partitioner_consistent(NULL, key, strlen(key), p->keyed_partitions, NULL,
                                               NULL);
    return rd_kafka_topic_partition_list_find(p->owned, p->keyed_topic, part) != NULL;
}

static unsigned kafka_generation(struct ao_io *io)
{
    return ((struct kafka_priv *)io->priv)->generation;
}

static void kafka_close(struct ao_io *io)
{
    struct kafka_priv *p = io->priv;

    release_hand(p);
    free(p->hand);
    if (p->ready_fd >= 0)
        close(p->ready_fd);
    if (p->consumer) {
        /* leaving the group revokes the partitions: on_rebalance delivers
         * the outputs and commits the handled inputs.  With the brokers
         * gone, librdkafka 2.0.2 would wait for ever to leave: give it
         * CLOSE_NS, then let go (the group forgets us after the session
         * timeout; what was not committed is redone). */
        rd_kafka_queue_t *q = rd_kafka_queue_new(p->consumer);
        rd_kafka_error_t *e;
        long long until = ao_now_ns() + CLOSE_NS;
        int closed = 0;

        p->closing = 1;
        e = q ? rd_kafka_consumer_close_queue(p->consumer, q) : NULL;
        if (q && !e) {
            while (!(closed = rd_kafka_consumer_closed(p->consumer)) && ao_now_ns() < until)
                rd_kafka_queue_poll_callback(q, 100);
            if (!closed)
                ao_warn("kafka: could not leave the group within %lld s (brokers gone?)",
                        CLOSE_NS / 1000000000LL);
        }
        if (e)
            rd_kafka_error_destroy(e);
        if (q)
            rd_kafka_queue_destroy(q);
        rd_kafka_destroy_flags(p->consumer, RD_KAFKA_DESTROY_F_NO_CONSUMER_CLOSE);
    }
    if (p->producer && rd_kafka_flush(p->producer, 5000) != RD_KAFKA_RESP_ERR_NO_ERROR)
        ao_warn("kafka: %d outputs not delivered at close", rd_kafka_outq_len(p->producer));
    if (p->producer)
        rd_kafka_destroy_flags(p->producer, 0);
    if (p->batch)
        rd_kafka_topic_partition_list_destroy(p->batch);
    if (p->seen)
        rd_kafka_topic_partition_list_destroy(p->seen);
    ao_redis_free(p->bell_sub);
    for (int i = 0; i < 2; i++)
        if (p->wake[i] >= 0)
            close(p->wake[i]);
    if (p->owned)
        rd_kafka_topic_partition_list_destroy(p->owned);
    free(p);
}

/* Enough in hand: no more inputs until some are done.  librdkafka stops
 * fetching the paused partitions and drops what it fetched of them; on
 * resume it fetches again after the last input handed out. */
static int kafka_pause(struct ao_io *io, int on)
{
    struct kafka_priv *p = io->priv;

    p->paused = on;
    apply_pause(p);
    return 0;
}

/* Readable when the consumer's queue gets something (an input, a
 * rebalance); the caller empties it with ao_io_drain_fd. */
static int kafka_fd(struct ao_io *io)
{
    struct kafka_priv *p = io->priv;
    return p->dozing && p->bell_sub ? ao_redis_fd(p->bell_sub) : p->wake[0];
}

int ao_io_kafka_bell(struct ao_io *io, const char *url, const char *prefix, struct ao_redis *pub, int listen,
                     char *err, size_t errlen)
{
    struct kafka_priv *p = io->priv;
    char ch[BELL_TOPICS][AO_REDIS_KEY_MAX];
    const char *chs[BELL_TOPICS];

    if (io->ops->next != kafka_next || !p->mock)
        return 0; /* a real broker answers a waiting fetch at once */
    p->bell_pub = pub;
    if (!listen || !p->consumer || !p->ninputs)
        return 0;
    if (!(p->bell_sub = ao_redis_new(url, prefix, err, errlen)))
        return -1;
    for (int i = 0; i < p->ninputs; i++) {
        if (!ao_redis_key(p->bell_sub, ch[i], sizeof ch[i], AO_KEY_BELL, p->inputs[i]))
            return ao_errf(err, errlen, "the redis prefix is too long for a doorbell");
        chs[i] = ch[i];
    }
    if (ao_redis_listen(p->bell_sub, p->ninputs, chs, err, errlen) < 0) {
        ao_redis_free(p->bell_sub);
        p->bell_sub = NULL;
        return -1;
    }
    p->awake_until = ao_now_ns() + AWAKE_NS;
    return 0;
}

static const struct ao_io_ops kafka_ops = {kafka_next,  kafka_emit, kafka_commit,     kafka_close,
                                           kafka_owns,  kafka_generation, kafka_pause, kafka_fd};

/* librdkafka's own log lines go through ours.  The -X settings are given to
 * the consumer and the producer alike, so each warns about the other's
 * keys: those warnings say nothing and are dropped. */
static void log_cb(const rd_kafka_t *rk, int level, const char *fac, const char *buf)
{
    (void)rk;
    if (strcmp(fac, "CONFWARN") == 0 && (strstr(buf, "will be ignored by this") || strstr(buf, "No `bootstrap.servers`")))
        return;
    if (level <= 3)
        ao_err("kafka: %s: %s", fac, buf);
    else if (level == 4)
        ao_warn("kafka: %s: %s", fac, buf);
    else
        ao_debug("kafka: %s: %s", fac, buf);
}

/* KEY=VALUE lines into a config (from `what`: "-X", or the settings file
 * with `comments`, its blank lines and # lines skipped); 0 or -1 + err,
 * which names the key, never the value. */
static int apply_lines(rd_kafka_conf_t *conf, const char *text, const char *what, int comments, char *err,
                       size_t errlen)
{
    char e[256], kv[1024];
    const char *line = text;
    int rc = 0;

    while (rc == 0 && line && *line) {
        const char *nl = strchr(line, '\n');
        size_t n = nl ? (size_t)(nl - line) : strlen(line);
        char *eq, *k = kv;
        if (n >= sizeof kv) {
            rc = ao_errf(err, errlen, "a line of %s is over %zu bytes", what, sizeof kv - 1);
            break;
        }
        memcpy(kv, line, n);
        kv[n] = '\0';
        line = nl ? nl + 1 : NULL;
        if (comments) {
            k += strspn(k, " \t");
            for (size_t m = strlen(k); m > 0 && (k[m - 1] == '\r' || k[m - 1] == ' ' || k[m - 1] == '\t'); m--)
                k[m - 1] = '\0';
            if (!*k || *k == '#')
                continue;
        } else if (!*k) {
            continue;
        }
        if (!(eq = strchr(k, '=')))
            rc = ao_errf(err, errlen, "%s wants key=value lines", what);
        else if ((*eq = '\0', rd_kafka_conf_set(conf, k, eq + 1, e, sizeof e) != RD_KAFKA_CONF_OK))
            rc = ao_errf(err, errlen, "librdkafka refused the setting '%s' (%s)", k, what);
    }
    memset(kv, 0, sizeof kv); /* a password may have been there */
    return rc;
}

/* --kafka-file: yours, and read by you alone, as the signing key is (a
 * password in a file others can read is theirs too).  Its text, or NULL +
 * err. */
static char *settings_file(const char *path, char *err, size_t errlen)
{
    char e[AO_ERRLEN], *text;
    struct stat st;

    if (stat(path, &st) < 0)
        return ao_errf(err, errlen, "cannot read the Kafka settings file '%s': %s", path, strerror(errno)), NULL;
    if (!S_ISREG(st.st_mode) || st.st_uid != geteuid())
        return ao_errf(err, errlen, "the Kafka settings file '%s' is not a file of yours (owner uid %u)", path,
                       (unsigned)st.st_uid), NULL;
    if (st.st_mode & 077)
        return ao_errf(err, errlen, "the Kafka settings file '%s' may be read by others (mode %03o): chmod 600",
                       path, (unsigned)(st.st_mode & 0777)), NULL;
    if (!(text = ao_read_file_max(path, 64 << 10, NULL, e, sizeof e)))
        return ao_errf(err, errlen, "cannot read the Kafka settings file '%s': %s", path, e), NULL;
    return text;
}

/* Does a line of text (KEY=VALUE lines) set key? */
static int sets_in(const char *text, const char *key)
{
    size_t n = strlen(key);

    for (const char *at = text; at && (at = strstr(at, key)); at += n)
        if ((at == text || at[-1] == '\n' || at[-1] == ' ' || at[-1] == '\t') && at[n + strspn(at + n, " \t")] == '=')
            return 1;
    return 0;
}

/* Does the site set key, by -X or in its settings file?  (Where it does,
 * a stage's own default for it gives way.) */
static int site_sets(const struct ao_kafka_site *site, const char *key)
{
    char e[AO_ERRLEN], *text;
    int found = sets_in(site->props, key);

    if (!found && site->file && (text = settings_file(site->file, e, sizeof e))) {
        found = sets_in(text, key);
        memset(text, 0, strlen(text));
        free(text);
    }
    return found;
}

/* Apply the site's bootstrap servers, its settings file, then its -X
 * lines (which win) to a config; 0 or -1 + err. */
static int configure(rd_kafka_conf_t *conf, const struct ao_kafka_site *site, char *err, size_t errlen)
{
    char e[256], *text;
    int rc;

    rd_kafka_conf_set_log_cb(conf, log_cb);
    if (rd_kafka_conf_set(conf, "bootstrap.servers", site->brokers, e, sizeof e) != RD_KAFKA_CONF_OK) {
        snprintf(err, errlen, "bad --brokers: %s", e);
        return -1;
    }
    if (site->file) {
        if (!(text = settings_file(site->file, err, errlen)))
            return -1;
        rc = apply_lines(conf, text, "--kafka-file", 1, err, errlen);
        memset(text, 0, strlen(text));
        free(text);
        if (rc < 0)
            return -1;
    }
    return apply_lines(conf, site->props, "-X", 0, err, errlen);
}

/* ACCELOPT_READY_FD: the pipe `accelopt run` counts its stages' first
 * assignments on (taken once: the process's first consumer reports; a pipe
 * only, and kept from the processes a stage starts). */
static int ready_fd_from_env(void)
{
    const char *v = getenv("ACCELOPT_READY_FD");
    struct stat st;
    char *end;
    long fd;

    if (!v)
        return -1;
    fd = strtol(v, &end, 10);
    unsetenv("ACCELOPT_READY_FD");
    if (*end || end == v || fd < 3 || fd > 65535 || fstat((int)fd, &st) < 0 || !S_ISFIFO(st.st_mode) ||
        fcntl((int)fd, F_SETFD, FD_CLOEXEC) < 0)
        return -1;
    return (int)fd;
}

/* The stage's producer: its latency settings and the site's, and the
 * partitions of the topics the stage reads, learnt now.  0, or -1 + err. */
static int producer_open(struct kafka_priv *p, const struct ao_kafka_site *site, const char *const *topics,
                         char *err, size_t errlen)
{
    rd_kafka_conf_t *pc = rd_kafka_conf_new();
    rd_kafka_topic_conf_t *tc;
    const struct rd_kafka_metadata *md = NULL;
    char e[512], name[AO_TOPIC_PREFIX_MAX + AO_TOPIC_MAX];

    if (!pc)
        return ao_errf(err, errlen, "out of memory");
    /* a stage hands each message on at once (no linger, no Nagle delay;
     * its commit flushes anyway): -X may override that, not idempotence */
    if (rd_kafka_conf_set(pc, "linger.ms", "0", e, sizeof e) ||
        rd_kafka_conf_set(pc, "socket.nagle.disable", "true", e, sizeof e))
        goto refused;
    if (configure(pc, site, err, errlen) < 0)
        goto fail;
    if (rd_kafka_conf_set(pc, "enable.idempotence", "true", e, sizeof e))
        goto refused;
    rd_kafka_conf_set_dr_msg_cb(pc, on_delivery);
    rd_kafka_conf_set_opaque(pc, p);
    if ((tc = rd_kafka_topic_conf_new())) {
        rd_kafka_topic_conf_set_partitioner_cb(tc, partition_of);
        rd_kafka_topic_conf_set_opaque(tc, p); /* partition_of's topic_opaque */
        rd_kafka_conf_set_default_topic_conf(pc, tc);
    }
    if (!(p->producer = rdk_new(RD_KAFKA_PRODUCER, pc, e, sizeof e))) {
        ao_errf(err, errlen, "cannot make a kafka producer: %s", e);
        goto fail;
    }
    /* Learn every topic's partitions now: the first message to a topic the
     * producer has not seen waited about 1 s for them (librdkafka's topic
     * scan), at each of a run's first hops (tests/bench/overhead.sh's
     * trace).  Best effort: a topic made later is learned as before. */
    if (rd_kafka_metadata(p->producer, 1, NULL, &md, 2000) == RD_KAFKA_RESP_ERR_NO_ERROR) {
        /* and what a member alone in its group would hold (tell_supervisor) */
        for (int i = 0; topics && topics[i]; i++)
            for (int k = 0; k < md->topic_cnt; k++)
                if (on_cluster(p->prefix, topics[i], name, sizeof name) == 0 &&
                    strcmp(md->topics[k].topic, name) == 0)
                    p->topic_parts += md->topics[k].partition_cnt;
        rd_kafka_metadata_destroy(md);
    }
    return 0;
refused:
    ao_errf(err, errlen, "kafka settings: %s", e);
fail:
    rd_kafka_conf_destroy(pc);
    return -1;
}

/* The consumer's settings beside the site's: its group, offsets stored
 * by hand, the idle fetch's wait by the kind of broker, a static member,
 * the assignor.  0, or -1 + err. */
static int consumer_conf(struct kafka_priv *p, rd_kafka_conf_t *cc, const struct ao_kafka_site *site,
                         const char *group, const char *const *topics, char *err, size_t errlen)
{
    char e[512], name[AO_TOPIC_PREFIX_MAX + AO_TOPIC_MAX], *id;
    int keyed = 0;

    /* A stage's message may take minutes of model calls (a candidate's
     * plans, at 30-60 s a call): the default 5 min between polls would make
     * a busy stage leave its group and its work be redone by another. */
    if (rd_kafka_conf_set(cc, "max.poll.interval.ms", "1800000", e, sizeof e) ||
        rd_kafka_conf_set(cc, "socket.nagle.disable", "true", e, sizeof e))
        return ao_errf(err, errlen, "kafka settings: %s", e);
    if (configure(cc, site, err, errlen) < 0)
        return -1;
    if (on_cluster(p->prefix, group, name, sizeof name) < 0)
        return ao_errf(err, errlen, "consumer group '%.100s' is too long", group);
    if (rd_kafka_conf_set(cc, "group.id", name, e, sizeof e) ||
        rd_kafka_conf_set(cc, "enable.auto.offset.store", "false", e, sizeof e) ||
        rd_kafka_conf_set(cc, "auto.offset.reset", "earliest", e, sizeof e))
        return ao_errf(err, errlen, "kafka settings: %s", e);
    /* The embedded broker (librdkafka's mock cluster, 2.0.2) answers a
     * waiting fetch only when the wait is over, however soon a message
     * comes: there an idle fetch returns after 5 ms, so a message waits
     * milliseconds, not half a second, at each of an iteration's hops (at
     * the CPU an idle poll costs: docs/BENCHMARKS.md, "An idle run").  A
     * real broker answers a waiting fetch as soon as a message comes:
     * there the wait only sets how often an idle consumer asks (5 s: a
     * tenth of the default's requests, issue 67), and how late a paused
     * partition is fetched again once resumed. */
    id = rd_kafka_clusterid(p->producer, 2000);
    p->mock = id && strncmp(id, MOCK_CLUSTER_ID, strlen(MOCK_CLUSTER_ID)) == 0;
    if (id)
        rd_kafka_mem_free(p->producer, id);
    if (!site_sets(site, "fetch.wait.max.ms") &&
        rd_kafka_conf_set(cc, "fetch.wait.max.ms", p->mock ? "5" : "5000", e, sizeof e))
        return ao_errf(err, errlen, "kafka settings: %s", e);
    ao_debug("kafka: %s broker: %s idle fetch", p->mock ? "the embedded" : "a real", p->mock ? "a 5 ms" : "a 5 s");
    /* a static member, on a real broker (the mock's coordinator, 2.0.2,
     * does not keep one) */
    if (!p->mock && site->instance && *site->instance) {
        if (on_cluster(p->prefix, site->instance, name, sizeof name) < 0 ||
            rd_kafka_conf_set(cc, "group.instance.id", name, e, sizeof e))
            return ao_errf(err, errlen, "--instance '%.64s' is refused", site->instance);
        ao_debug("kafka: a static member of its group, '%s'", name);
    }
    /* A stage that keeps state per run (the selector) must get a run's
     * partition of every topic it reads: the range assignor gives a member
     * the same partitions of co-partitioned topics.  Stateless stages get
     * round-robin, so consecutive partitions, where a run's work was
     * spread, go to different replicas.  -X may override it. */
    for (int i = 0; topics[i]; i++)
        keyed |= !ao_topic_spread(topics[i]);
    if (!site_sets(site, "partition.assignment.strategy") &&
        rd_kafka_conf_set(cc, "partition.assignment.strategy", keyed ? "range" : "roundrobin", e, sizeof e))
        return ao_errf(err, errlen, "kafka settings: %s", e);
    return 0;
}

/* The stage's consumer, subscribed to its topics, with the pipe an event
 * loop waits on.  0, or -1 + err. */
static int consumer_open(struct ao_io *io, struct kafka_priv *p, const struct ao_kafka_site *site,
                         const char *group, const char *const *topics, char *err, size_t errlen)
{
    rd_kafka_conf_t *cc = rd_kafka_conf_new();
    rd_kafka_topic_partition_list_t *subs;
    rd_kafka_queue_t *q;
    char e[512], name[AO_TOPIC_PREFIX_MAX + AO_TOPIC_MAX];
    int rc = 0;

    if (!cc)
        return ao_errf(err, errlen, "out of memory");
    if (consumer_conf(p, cc, site, group, topics, err, errlen) < 0) {
        rd_kafka_conf_destroy(cc);
        return -1;
    }
    if (on_cluster(p->prefix, topics[0], p->keyed_topic, sizeof p->keyed_topic) < 0) {
        rd_kafka_conf_destroy(cc);
        return ao_errf(err, errlen, "topic name '%.100s' is too long", topics[0]);
    }
    p->ready_fd = ready_fd_from_env();
    rd_kafka_conf_set_rebalance_cb(cc, on_rebalance);
    rd_kafka_conf_set_consume_cb(cc, drop_while_closing);
    rd_kafka_conf_set_opaque(cc, io);
    if (!(p->consumer = rdk_new(RD_KAFKA_CONSUMER, cc, e, sizeof e))) {
        rd_kafka_conf_destroy(cc);
        return ao_errf(err, errlen, "cannot make a kafka consumer: %s", e);
    }
    rd_kafka_poll_set_consumer(p->consumer);
    /* an event loop waits on this pipe with its other fds (agents/flight.c) */
    if (pipe2(p->wake, O_CLOEXEC | O_NONBLOCK) == 0) {
        if ((q = rd_kafka_queue_get_consumer(p->consumer))) {
            rd_kafka_queue_io_event_enable(q, p->wake[1], "1", 1);
            rd_kafka_queue_destroy(q);
        }
    } else {
        p->wake[0] = p->wake[1] = -1;
    }
    if (!(subs = rd_kafka_topic_partition_list_new(4)))
        return ao_errf(err, errlen, "out of memory");
    for (int i = 0; topics[i] && rc == 0; i++) {
        if (on_cluster(p->prefix, topics[i], name, sizeof name) < 0) {
            rc = ao_errf(err, errlen, "topic name '%.100s' is too long", topics[i]);
            break;
        }
        rd_kafka_topic_partition_list_add(subs, name, RD_KAFKA_PARTITION_UA);
        if (p->ninputs < BELL_TOPICS)
            snprintf(p->inputs[p->ninputs++], sizeof p->inputs[0], "%s", name);
    }
    if (rc == 0 && rd_kafka_subscribe(p->consumer, subs))
        rc = ao_errf(err, errlen, "cannot subscribe to '%s'", topics[0]);
    rd_kafka_topic_partition_list_destroy(subs);
    return rc;
}

struct ao_io *ao_io_kafka_new(const char *stage, const struct ao_kafka_site *site, const char *group,
                              const char *const *topics, char *err, size_t errlen)
{
    struct ao_io *io = ao_calloc(1, sizeof *io);
    struct kafka_priv *p = ao_calloc(1, sizeof *p);

    io->ops = &kafka_ops;
    io->stage = stage;
    io->priv = p;
    p->ready_fd = -1;
    p->wake[0] = p->wake[1] = -1;
    if (ao_kafka_prefix_check(site->prefix, err, errlen) < 0)
        goto fail;
    snprintf(p->prefix, sizeof p->prefix, "%s", site->prefix ? site->prefix : "");
    p->plen = strlen(p->prefix);
    if (!(p->batch = rd_kafka_topic_partition_list_new(8)) || !(p->seen = rd_kafka_topic_partition_list_new(8))) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    if (producer_open(p, site, topics, err, errlen) < 0 ||
        (topics && topics[0] && consumer_open(io, p, site, group, topics, err, errlen) < 0))
        goto fail;
    return io;
fail:
    kafka_close(io); /* what was made of p, and p */
    free(io);
    return NULL;
}

int ao_kafka_make_topics(const struct ao_kafka_site *site, const char *const *topics, int partitions,
                         int replication, int *made, char *err, size_t errlen)
{
    const char *brokers = site->brokers;
    char name[AO_TOPIC_PREFIX_MAX + AO_TOPIC_MAX];
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    rd_kafka_t *rk = NULL;
    rd_kafka_NewTopic_t *nt[MAKE_TOPICS_MAX];
    rd_kafka_AdminOptions_t *o = NULL;
    rd_kafka_queue_t *q = NULL;
    rd_kafka_event_t *ev = NULL;
    const rd_kafka_topic_result_t **res;
    size_t nres = 0;
    int n = 0, rc = -1;
    char e[256];

    *made = 0;
    if (ao_kafka_prefix_check(site->prefix, err, errlen) < 0 || !conf ||
        configure(conf, site, err, errlen) < 0)
        goto out;
    if (!(rk = rdk_new(RD_KAFKA_PRODUCER, conf, e, sizeof e))) {
        snprintf(err, errlen, "cannot make a kafka client: %s", e);
        goto out;
    }
    conf = NULL;
    for (; topics[n]; n++)
        if (n == MAKE_TOPICS_MAX || on_cluster(site->prefix, topics[n], name, sizeof name) < 0 ||
            !(nt[n] = rd_kafka_NewTopic_new(name, partitions, replication, e, sizeof e))) {
            snprintf(err, errlen, "topic '%s': %s", topics[n], n == MAKE_TOPICS_MAX ? "too many" : e);
            goto out;
        }
    q = rd_kafka_queue_new(rk);
    o = rd_kafka_AdminOptions_new(rk, RD_KAFKA_ADMIN_OP_CREATETOPICS);
    if (!q || !o || rd_kafka_AdminOptions_set_operation_timeout(o, MAKE_TOPICS_MS, e, sizeof e) ||
        rd_kafka_AdminOptions_set_request_timeout(o, MAKE_TOPICS_MS, e, sizeof e)) {
        snprintf(err, errlen, "kafka admin settings: %s", e);
        goto out;
    }
    rd_kafka_CreateTopics(rk, nt, (size_t)n, o, q);
    if (!(ev = rd_kafka_queue_poll(q, MAKE_TOPICS_MS + 5000))) {
        snprintf(err, errlen, "the brokers %s did not answer the topics' creation", brokers);
        goto out;
    }
    if (rd_kafka_event_error(ev)) {
        snprintf(err, errlen, "making the topics on %s: %s", brokers, rd_kafka_event_error_string(ev));
        goto out;
    }
    res = rd_kafka_CreateTopics_result_topics(rd_kafka_event_CreateTopics_result(ev), &nres);
    for (size_t i = 0; i < nres; i++) {
        rd_kafka_resp_err_t te = rd_kafka_topic_result_error(res[i]);
        if (te == RD_KAFKA_RESP_ERR_NO_ERROR)
            (*made)++;
        else if (te != RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS) {
            const char *why = rd_kafka_topic_result_error_string(res[i]);
            snprintf(err, errlen, "topic '%s': %s", rd_kafka_topic_result_name(res[i]),
                     why ? why : rd_kafka_err2str(te));
            goto out;
        }
    }
    rc = 0;
out:
    if (ev)
        rd_kafka_event_destroy(ev);
    if (o)
        rd_kafka_AdminOptions_destroy(o);
    if (q)
        rd_kafka_queue_destroy(q);
    for (int i = 0; i < n && i < MAKE_TOPICS_MAX; i++)
        rd_kafka_NewTopic_destroy(nt[i]);
    if (rk)
        rd_kafka_destroy(rk);
    if (conf)
        rd_kafka_conf_destroy(conf);
    return rc;
}

int ao_kafka_brokers_check(const char *brokers, char *err, size_t errlen)
{
    const char *p = brokers;

    if (!brokers || !*brokers)
        return ao_errf(err, errlen, "--brokers is empty: give HOST:PORT[,HOST:PORT...]");
    while (*p) {
        size_t n = strcspn(p, ","), h;
        const char *e = p, *end = p + n, *colon = NULL, *scheme = strstr(p, "://");
        char *stop;
        long port;
        if (n == 0)
            return ao_errf(err, errlen, "--brokers '%.100s' has an empty entry", brokers);
        if (scheme && scheme < end)
            e = scheme + 3;
        for (const char *q = e; q < end; q++)
            colon = *q == ':' ? q : colon; /* the last: an IPv6 host holds some */
        h = colon ? (size_t)(colon - e) : 0;
        if (!colon || h == 0 ||
            (e[0] == '[' ? e[h - 1] != ']'
                         : strspn(e, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_") != h))
            return ao_errf(err, errlen, "--brokers entry '%.*s' is not HOST:PORT", (int)(n < 100 ? n : 100), p);
        port = strtol(colon + 1, &stop, 10);
        if (stop != end || colon + 1 == end || port < 1 || port > 65535)
            return ao_errf(err, errlen, "--brokers entry '%.*s' has no port of 1-65535", (int)(n < 100 ? n : 100), p);
        p = *end ? end + 1 : end;
        if (*end && !*p)
            return ao_errf(err, errlen, "--brokers '%.100s' ends with a comma", brokers);
    }
    return 0;
}

int ao_kafka_prefix_check(const char *prefix, char *err, size_t errlen)
{
    static const char legal[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-";

    if (!prefix)
        return 0;
    if (strlen(prefix) > AO_TOPIC_PREFIX_MAX)
        return ao_errf(err, errlen, "--topic-prefix is over %d characters", AO_TOPIC_PREFIX_MAX);
    if (strspn(prefix, legal) != strlen(prefix))
        return ao_errf(err, errlen, "--topic-prefix '%.64s' holds a character no Kafka topic may "
                       "(only A-Z a-z 0-9 . _ -)", prefix);
    return 0;
}

struct ao_kafka_site ao_kafka_site_of(const struct ao_config *c)
{
    struct ao_kafka_site s = {.brokers = ao_config_str(c, "brokers"), .prefix = ao_config_str(c, "topic-prefix"),
                              .props = ao_config_str(c, "kafka"), .file = ao_config_str(c, "kafka-file")};
    return s;
}

/* The last thing librdkafka complained of, for the one line a probe says. */
struct complaint {
    char last[AO_ERRLEN]; /* read once librdkafka's threads are gone */
    int refused;          /* the last was a refused connection (read meanwhile) */
};

static void quiet_log_cb(const rd_kafka_t *rk, int level, const char *fac, const char *buf)
{
    struct complaint *c = rd_kafka_opaque(rk);
    const char *p = strstr(buf, ": Connect to ");
    (void)fac;
    if (level <= 4 && c && !strstr(buf, "will be ignored by this")) {
        snprintf(c->last, sizeof c->last, "%s", p ? p + 2 : buf);
        __atomic_store_n(&c->refused, strstr(buf, "Connection refused") != NULL, __ATOMIC_RELAXED);
    }
}

int ao_kafka_reachable(const struct ao_kafka_site *site, double timeout_s, char *err, size_t errlen)
{
    const char *brokers = site->brokers;
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    rd_kafka_t *rk = NULL;
    const struct rd_kafka_metadata *md = NULL;
    rd_kafka_resp_err_t e;
    struct complaint said = {"", 0};
    char *last = said.last, m[256];

    if (!conf || configure(conf, site, err, errlen) < 0) {
        if (conf)
            rd_kafka_conf_destroy(conf);
        return conf ? -1 : ao_errf(err, errlen, "out of memory");
    }
    rd_kafka_conf_set_log_cb(conf, quiet_log_cb);
    rd_kafka_conf_set_opaque(conf, &said);
    if (!(rk = rdk_new(RD_KAFKA_PRODUCER, conf, m, sizeof m))) {
        rd_kafka_conf_destroy(conf);
        return ao_errf(err, errlen, "cannot make a kafka client: %s", m);
    }
    /* asked in slices: nothing listens where a connection is refused (a
     * wrong port), and a second of refusals says so sooner than the whole
     * wait (a broker starting up refuses for a moment, then answers) */
    for (long long t0 = ao_now_ns(), refused = 0;;) {
        long long now;
        e = rd_kafka_metadata(rk, 0, NULL, &md, 250);
        if (md)
            rd_kafka_metadata_destroy(md);
        md = NULL;
        now = ao_now_ns();
        if (e == RD_KAFKA_RESP_ERR_NO_ERROR || now - t0 >= (long long)(timeout_s * 1e9))
            break;
        if (!__atomic_load_n(&said.refused, __ATOMIC_RELAXED))
            refused = 0;
        else if (!refused)
            refused = now;
        else if (now - refused >= 1000000000LL) {
            timeout_s = (double)(now - t0) / 1e9;
            break;
        }
    }
    rd_kafka_destroy(rk);
    if (e == RD_KAFKA_RESP_ERR_NO_ERROR)
        return 0;
    last[strcspn(last, "\n")] = '\0';
    /* a listener that takes SASL or TLS alone drops a client that speaks
     * neither: librdkafka sees only brokers that are down */
    return ao_errf(err, errlen, "cannot reach the brokers %s within %.0f s: %s%s", brokers, timeout_s,
                   last[0] ? last : rd_kafka_err2str(e),
                   site_sets(site, "security.protocol") ? ""
                   : " (a broker that takes SASL or TLS alone drops a client without them: give its settings "
                     "with --kafka-file)");
}

struct ao_broker {
    rd_kafka_t *rk;
    rd_kafka_mock_cluster_t *mc;
};

static int same_parts(const char *topic, void *ctx)
{
    return *(const int *)ctx;
}

struct ao_broker *ao_broker_new(const char *const *topics, int partitions, char *addr, size_t addrlen,
                                char *err, size_t errlen)
{
    return ao_broker_new_sized(topics, same_parts, &partitions, addr, addrlen, err, errlen);
}

struct ao_broker *ao_broker_new_sized(const char *const *topics, int (*parts_of)(const char *topic, void *ctx),
                                      void *ctx, char *addr, size_t addrlen, char *err, size_t errlen)
{
    struct ao_broker *b = ao_calloc(1, sizeof *b);
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    char e[256];

    if (!conf) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    /* the mock cluster lives inside a client handle that does nothing else;
     * its accepted sockets take the handle's socket settings, and without
     * TCP_NODELAY a response written right after another waits for the
     * client's delayed ACK: 40 ms on Linux, at every flush of two messages
     * (tests/unit/test_broker.c; docs/BENCHMARKS.md, issue 28) */
    rd_kafka_conf_set_log_cb(conf, log_cb);
    if (rd_kafka_conf_set(conf, "socket.nagle.disable", "true", e, sizeof e) != RD_KAFKA_CONF_OK) {
        snprintf(err, errlen, "kafka settings: %s", e);
        goto fail;
    }
    if (!(b->rk = rdk_new(RD_KAFKA_PRODUCER, conf, e, sizeof e))) {
        snprintf(err, errlen, "cannot start librdkafka: %s", e);
        goto fail;
    }
    conf = NULL;
    if (!(b->mc = rd_kafka_mock_cluster_new(b->rk, 1))) {
        snprintf(err, errlen, "cannot start the mock cluster");
        goto fail;
    }
    for (int i = 0; topics[i]; i++)
        if (rd_kafka_mock_topic_create(b->mc, topics[i], parts_of(topics[i], ctx), 1)) {
            snprintf(err, errlen, "cannot make topic '%s'", topics[i]);
            goto fail;
        }
    snprintf(addr, addrlen, "%s", rd_kafka_mock_cluster_bootstraps(b->mc));
    return b;
fail:
    if (conf)
        rd_kafka_conf_destroy(conf);
    ao_broker_free(b);
    return NULL;
}

void ao_broker_free(struct ao_broker *b)
{
    if (!b)
        return;
    if (b->mc)
        rd_kafka_mock_cluster_destroy(b->mc);
    if (b->rk)
        rd_kafka_destroy(b->rk);
    free(b);
}

static const struct {
    const char *name;
    int16_t key;
} apis[] = {{"produce", 0},         {"fetch", 1},          {"listoffsets", 2},
            {"metadata", 3},        {"offsetcommit", 8},   {"offsetfetch", 9},
            {"findcoordinator", 10}, {"joingroup", 11},    {"heartbeat", 12},
            {"leavegroup", 13},     {"syncgroup", 14},     {"initproducerid", 22}};
#define NAPIS ((int)(sizeof apis / sizeof apis[0]))

static int api_key(const char *s)
{
    char *end;
    long n = strtol(s, &end, 10);
    if (*s && !*end && n >= 0 && n < 100)
        return (int)n;
    for (int i = 0; i < NAPIS; i++)
        if (strcasecmp(s, apis[i].name) == 0)
            return apis[i].key;
    return -1;
}

static int error_code(const char *s, rd_kafka_resp_err_t *e)
{
    const struct rd_kafka_err_desc *d;
    size_t n;

    rd_kafka_get_err_descs(&d, &n);
    for (size_t i = 0; i < n; i++)
        if (d[i].name && strcasecmp(d[i].name, s) == 0) {
            *e = d[i].code;
            return 0;
        }
    return -1;
}

int ao_broker_control(struct ao_broker *b, const char *line, char *err, size_t errlen)
{
    char cmd[32] = "", a1[64] = "", a3[96] = "";
    long n = 0;
    int got = sscanf(line, "%31s %63s %ld %95s", cmd, a1, &n, a3);

    if (got >= 1 && strcmp(cmd, "down") == 0)
        return rd_kafka_mock_broker_set_down(b->mc, 1) ? snprintf(err, errlen, "cannot"), -1 : 0;
    if (got >= 1 && strcmp(cmd, "up") == 0)
        return rd_kafka_mock_broker_set_up(b->mc, 1) ? snprintf(err, errlen, "cannot"), -1 : 0;
    if (got >= 2 && strcmp(cmd, "rtt") == 0)
        return rd_kafka_mock_broker_set_rtt(b->mc, 1, atoi(a1)) ? snprintf(err, errlen, "cannot"), -1 : 0;
    if (got >= 1 && strcmp(cmd, "clear") == 0) {
        for (int i = 0; i < NAPIS; i++)
            rd_kafka_mock_clear_request_errors(b->mc, apis[i].key);
        return 0;
    }
    if (got == 4 && strcmp(cmd, "errors") == 0) {
        int key = api_key(a1);
        rd_kafka_resp_err_t e, *errs;
        if (key < 0 || n < 1 || n > 100000 || error_code(a3, &e) < 0)
            return snprintf(err, errlen, "errors wants API N ERROR (an API name, a count, a Kafka error name)"), -1;
        errs = ao_malloc(sizeof *errs * (size_t)n);
        for (long i = 0; i < n; i++)
            errs[i] = e;
        rd_kafka_mock_push_request_errors_array(b->mc, (int16_t)key, (size_t)n, errs);
        free(errs);
        return 0;
    }
    return snprintf(err, errlen, "unknown command (down, up, rtt MS, errors API N ERROR, clear)"), -1;
}
