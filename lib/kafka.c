/* kafka.c - the Kafka backend of the transport seam, and the embedded broker */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#include "kafka.h"
#include "log.h"

#define FLUSH_MS 30000 /* how long outputs may take to be delivered */

const char *const ao_kafka_topics[] = {
    "accelopt.tasks", "accelopt.candidates", "accelopt.plans", "accelopt.kernels.cpu",
    "accelopt.results", "accelopt.pairs", "accelopt.experiences", "accelopt.runs",
    "accelopt.dlq", NULL};

struct kafka_priv {
    rd_kafka_t *consumer, *producer;
    rd_kafka_message_t *held; /* the input being handled */
    long failed;              /* outputs whose delivery failed since the last commit */
    char failure[256];
};

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

static void release_held(struct kafka_priv *p)
{
    if (p->held)
        rd_kafka_message_destroy(p->held);
    p->held = NULL;
}

static int kafka_next(struct ao_io *io, struct ao_inmsg *m, int timeout_ms)
{
    struct kafka_priv *p = io->priv;
    rd_kafka_message_t *rm;

    release_held(p);
    rd_kafka_poll(p->producer, 0); /* delivery reports */
    if (!p->consumer) {
        snprintf(io->err, sizeof io->err, "this transport only produces");
        return -1;
    }
    if (!(rm = rd_kafka_consumer_poll(p->consumer, timeout_ms)))
        return 0;
    if (rm->err) {
        if (rm->err != RD_KAFKA_RESP_ERR__PARTITION_EOF)
            ao_warn("kafka: %s", rd_kafka_message_errstr(rm));
        rd_kafka_message_destroy(rm);
        return 0;
    }
    p->held = rm;
    m->raw = rm->payload ? rm->payload : "";
    m->len = rm->payload ? rm->len : 0;
    m->topic = rd_kafka_topic_name(rm->rkt);
    m->handle = rm;
    return 1;
}

static int kafka_emit(struct ao_io *io, const char *topic, const char *key, const char *json)
{
    struct kafka_priv *p = io->priv;
    rd_kafka_resp_err_t e;

    for (;;) {
        e = rd_kafka_producev(p->producer, RD_KAFKA_V_TOPIC(topic),
                              RD_KAFKA_V_KEY(key, key ? strlen(key) : 0),
                              RD_KAFKA_V_VALUE((void *)json, strlen(json)),
                              RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END);
        if (e != RD_KAFKA_RESP_ERR__QUEUE_FULL)
            break;
        rd_kafka_poll(p->producer, 100); /* make room */
    }
    if (e) {
        snprintf(io->err, sizeof io->err, "cannot produce to '%s': %s", topic, rd_kafka_err2str(e));
        return -1;
    }
    return 0;
}

/* The outputs are delivered, then the input's offset is stored: a crash
 * before this point means the input comes again (at-least-once). */
static int kafka_commit(struct ao_io *io, struct ao_inmsg *m)
{
    struct kafka_priv *p = io->priv;
    rd_kafka_message_t *rm = m->handle;
    rd_kafka_resp_err_t e;

    if (rd_kafka_flush(p->producer, FLUSH_MS) != RD_KAFKA_RESP_ERR_NO_ERROR) {
        snprintf(io->err, sizeof io->err, "outputs not delivered within %d s", FLUSH_MS / 1000);
        return -1;
    }
    if (p->failed) {
        snprintf(io->err, sizeof io->err, "%s", p->failure);
        p->failed = 0;
        return -1;
    }
    if (rm && (e = rd_kafka_offset_store(rm->rkt, rm->partition, rm->offset))) {
        /* the partition was revoked meanwhile: its new owner handles it again */
        ao_warn("kafka: offset of '%s' [%d] not stored: %s", rd_kafka_topic_name(rm->rkt),
                rm->partition, rd_kafka_err2str(e));
    }
    release_held(p);
    return 0;
}

static void kafka_close(struct ao_io *io)
{
    struct kafka_priv *p = io->priv;

    release_held(p);
    if (p->producer) {
        rd_kafka_flush(p->producer, 5000);
        rd_kafka_destroy(p->producer);
    }
    if (p->consumer) {
        rd_kafka_consumer_close(p->consumer);
        rd_kafka_destroy(p->consumer);
    }
    free(p);
}

static const struct ao_io_ops kafka_ops = {kafka_next, kafka_emit, kafka_commit, kafka_close};

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

/* Apply bootstrap servers and the -X lines to a config; 0 or -1 + err
 * (which names the key, never the value). */
static int configure(rd_kafka_conf_t *conf, const char *brokers, const char *props, char *err,
                     size_t errlen)
{
    char e[256];
    const char *line = props;

    rd_kafka_conf_set_log_cb(conf, log_cb);
    if (rd_kafka_conf_set(conf, "bootstrap.servers", brokers, e, sizeof e) != RD_KAFKA_CONF_OK) {
        snprintf(err, errlen, "bad --brokers: %s", e);
        return -1;
    }
    while (line && *line) {
        const char *nl = strchr(line, '\n'), *eq;
        size_t n = nl ? (size_t)(nl - line) : strlen(line);
        char kv[1024];
        snprintf(kv, sizeof kv, "%.*s", (int)(n < sizeof kv - 1 ? n : sizeof kv - 1), line);
        line = nl ? nl + 1 : NULL;
        if (!kv[0])
            continue;
        if (!(eq = strchr(kv, '='))) {
            snprintf(err, errlen, "-X wants key=value");
            return -1;
        }
        kv[eq - kv] = '\0';
        if (rd_kafka_conf_set(conf, kv, eq + 1, e, sizeof e) != RD_KAFKA_CONF_OK) {
            snprintf(err, errlen, "librdkafka refused the setting '%s'", kv);
            return -1;
        }
    }
    return 0;
}

struct ao_io *ao_io_kafka_new(const char *stage, const char *brokers, const char *group,
                              const char *const *topics, const char *props, char *err,
                              size_t errlen)
{
    struct ao_io *io = calloc(1, sizeof *io);
    struct kafka_priv *p = calloc(1, sizeof *p);
    rd_kafka_conf_t *cc = rd_kafka_conf_new(), *pc = rd_kafka_conf_new();
    rd_kafka_topic_partition_list_t *subs = NULL;
    char e[512];

    if (!io || !p || !cc || !pc) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    io->ops = &kafka_ops;
    io->stage = stage;
    io->priv = p;
    /* Latency defaults (-X may override them): a stage hands each message
     * on at once (no linger, no Nagle delay; its commit flushes anyway), and an idle fetch
     * returns soon, so a message waits milliseconds, not half a second, at
     * each of an iteration's hops (the 2.0.2 mock cluster does not answer a
     * waiting fetch early when data arrives). */
    if (rd_kafka_conf_set(cc, "fetch.wait.max.ms", "5", e, sizeof e) ||
        rd_kafka_conf_set(pc, "linger.ms", "0", e, sizeof e) ||
        rd_kafka_conf_set(cc, "socket.nagle.disable", "true", e, sizeof e) ||
        rd_kafka_conf_set(pc, "socket.nagle.disable", "true", e, sizeof e)) {
        snprintf(err, errlen, "kafka settings: %s", e);
        goto fail;
    }
    if (configure(cc, brokers, props, err, errlen) < 0 ||
        configure(pc, brokers, props, err, errlen) < 0)
        goto fail;
    if (rd_kafka_conf_set(cc, "group.id", group, e, sizeof e) ||
        rd_kafka_conf_set(cc, "enable.auto.offset.store", "false", e, sizeof e) ||
        rd_kafka_conf_set(cc, "auto.offset.reset", "earliest", e, sizeof e) ||
        rd_kafka_conf_set(pc, "enable.idempotence", "true", e, sizeof e)) {
        snprintf(err, errlen, "kafka settings: %s", e);
        goto fail;
    }
    rd_kafka_conf_set_dr_msg_cb(pc, on_delivery);
    rd_kafka_conf_set_opaque(pc, p);
    if (!(p->producer = rd_kafka_new(RD_KAFKA_PRODUCER, pc, e, sizeof e))) {
        snprintf(err, errlen, "cannot make a kafka producer: %s", e);
        goto fail;
    }
    pc = NULL;
    if (!topics || !topics[0]) { /* produce only */
        rd_kafka_conf_destroy(cc);
        return io;
    }
    if (!(p->consumer = rd_kafka_new(RD_KAFKA_CONSUMER, cc, e, sizeof e))) {
        snprintf(err, errlen, "cannot make a kafka consumer: %s", e);
        goto fail;
    }
    cc = NULL;
    rd_kafka_poll_set_consumer(p->consumer);
    subs = rd_kafka_topic_partition_list_new(4);
    for (int i = 0; topics[i]; i++)
        rd_kafka_topic_partition_list_add(subs, topics[i], RD_KAFKA_PARTITION_UA);
    if (rd_kafka_subscribe(p->consumer, subs)) {
        snprintf(err, errlen, "cannot subscribe to '%s'", topics[0]);
        goto fail;
    }
    rd_kafka_topic_partition_list_destroy(subs);
    return io;
fail:
    if (subs)
        rd_kafka_topic_partition_list_destroy(subs);
    if (cc)
        rd_kafka_conf_destroy(cc);
    if (pc)
        rd_kafka_conf_destroy(pc);
    if (p)
        kafka_close(io);
    free(io);
    return NULL;
}

struct ao_broker {
    rd_kafka_t *rk;
    rd_kafka_mock_cluster_t *mc;
};

struct ao_broker *ao_broker_new(int partitions, char *addr, size_t addrlen, char *err,
                                size_t errlen)
{
    struct ao_broker *b = calloc(1, sizeof *b);
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    char e[256];

    if (!b || !conf) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    /* the mock cluster lives inside a client handle that does nothing else */
    rd_kafka_conf_set_log_cb(conf, log_cb);
    if (!(b->rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, e, sizeof e))) {
        snprintf(err, errlen, "cannot start librdkafka: %s", e);
        goto fail;
    }
    conf = NULL;
    if (!(b->mc = rd_kafka_mock_cluster_new(b->rk, 1))) {
        snprintf(err, errlen, "cannot start the mock cluster");
        goto fail;
    }
    for (int i = 0; ao_kafka_topics[i]; i++)
        if (rd_kafka_mock_topic_create(b->mc, ao_kafka_topics[i], partitions, 1)) {
            snprintf(err, errlen, "cannot make topic '%s'", ao_kafka_topics[i]);
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
