/* kafka.h - the Kafka backend of the transport seam (librdkafka): consumer
 * groups, at-least-once (an input's offset is stored only after its outputs
 * were delivered), dead letters to accelopt.dlq */
#ifndef AO_KAFKA_H
#define AO_KAFKA_H

#include <stddef.h>

#include "core/config.h"
#include "core/redis.h"
#include "wire/io.h"

/* A Kafka cluster as the operator names it: the bootstrap brokers, the
 * deployment's namespace on it (prefix: put before every topic and consumer
 * group, so that deployments share a cluster without seeing each other's
 * messages; NULL or "": none) and librdkafka settings as "key=value" lines
 * (props: the -X flags; values are never logged). */
struct ao_kafka_site {
    const char *brokers, *prefix, *props;
    const char *file;     /* --kafka-file: more settings, credentials among them, or NULL */
    const char *instance; /* a consumer's static id in its group (--instance), or NULL */
};
#define AO_TOPIC_PREFIX_MAX 64
/* The option row of --kafka-file, beside -X in every tool's table: the
 * settings a command line must not carry (anyone may read it in ps) */
#define AO_KAFKA_FILE_OPTION                                                                    \
    {"kafka-file", 0, AO_OPT_STR, NULL, "FILE", "librdkafka settings from FILE, KEY=VALUE lines (SASL " \
     "credentials: yours alone, mode 600; -X wins over it)"}
/* The option row of --topic-prefix, beside --brokers in every tool's table. */
#define AO_TOPIC_PREFIX_OPTION                                                                  \
    {"topic-prefix", 0, AO_OPT_STR, NULL, "PREFIX", "put PREFIX before every Kafka topic and consumer " \
     "group: one cluster, many deployments"}
/* The site a tool's options name (--brokers, --topic-prefix, -X,
 * --kafka-file: its table must have all four). */
struct ao_kafka_site ao_kafka_site_of(const struct ao_config *c);

/* A transport that consumes topics (a NULL-terminated list; NULL or empty:
 * it only produces) in a consumer group and produces keyed messages.  The
 * topics and group are named without the site's prefix, and so are the
 * topics of the messages it hands out.  With site->instance, on a real
 * cluster, it is a static member of the group (KIP-345): restarted under
 * the same id, it takes back its partitions at once, where a new member
 * waits for the dead one's session to time out.  NULL + err. */
struct ao_io *ao_io_kafka_new(const char *stage, const struct ao_kafka_site *site, const char *group,
                              const char *const *topics, char *err, size_t errlen);

/* The doorbell of the embedded broker (librdkafka's mock cluster answers a
 * waiting fetch only when its wait is over, so its consumers fetch every 5
 * ms: a tenth of a core for five idle stages).  Every producer with a bell
 * rings `url`'s channel bell:<topic> when it writes to that topic (pub: the
 * Redis to ring on, borrowed).  With listen, a consumer that got nothing
 * for a second pauses its partitions and listens there instead; it fetches
 * again at the first ring, or every 5 s (a lost ring costs at most that).
 * The price: librdkafka 2.0.2 takes 0.4-0.9 s to fetch again after a
 * resume, which a message that wakes a dozing stage waits.  On a real
 * broker, which answers a waiting fetch as soon as a message comes,
 * nothing changes.  0, or -1 + err (the transport goes on without). */
int ao_io_kafka_bell(struct ao_io *io, const char *url, const char *prefix, struct ao_redis *pub, int listen,
                     char *err, size_t errlen);

/* Is prefix one a topic name can start with: at most AO_TOPIC_PREFIX_MAX
 * of Kafka's letters (A-Z a-z 0-9 . _ -)?  0, or -1 + err. */
int ao_kafka_prefix_check(const char *prefix, char *err, size_t errlen);

/* Is brokers a bootstrap list: HOST:PORT[,HOST:PORT...], each maybe with a
 * scheme (SSL://host:9093), a host name or address ([::1] for IPv6) and a
 * port of 1-65535?  An empty list, or one a script got wrong (an address
 * file not written yet), is refused here, before any client waits on it.
 * 0, or -1 + err. */
int ao_kafka_brokers_check(const char *brokers, char *err, size_t errlen);

/* Can the brokers be reached?  Asks them for their metadata, waiting
 * timeout_s at most, librdkafka's own log lines kept quiet (kcat's
 * behaviour: a tool facing no broker says so once and exits).  0, or -1 +
 * a one-line err naming the brokers and librdkafka's last complaint. */
int ao_kafka_reachable(const struct ao_kafka_site *site, double timeout_s, char *err, size_t errlen);

/* Make `topics` (NULL-terminated, after the site's prefix) on a cluster,
 * each with `partitions` partitions and `replication` replicas (-1: the cluster's default); those
 * that exist are left as they are.  *made counts the new ones.  0, or -1 +
 * err naming the first topic refused and why. */
int ao_kafka_make_topics(const struct ao_kafka_site *site, const char *const *topics, int partitions,
                         int replication, int *made, char *err, size_t errlen);

/* An embedded Kafka-protocol broker (librdkafka's mock cluster) with
 * `topics` (NULL-terminated: a deployment's are ao_topics(), targets/
 * target.h) made, each with `partitions` partitions.  Returns its
 * bootstrap address in addr; NULL + err.  Keep the handle while it serves. */
struct ao_broker;
struct ao_broker *ao_broker_new(const char *const *topics, int partitions, char *addr, size_t addrlen,
                                char *err, size_t errlen);
/* The same, with parts_of(topic, ctx) partitions for each topic (a stage
 * whose replicas each own one partition of its topic takes its work in
 * equal shares: a replica that owned two would take two candidates in turn
 * while another had none). */
struct ao_broker *ao_broker_new_sized(const char *const *topics, int (*parts_of)(const char *topic, void *ctx),
                                      void *ctx, char *addr, size_t addrlen, char *err, size_t errlen);
void ao_broker_free(struct ao_broker *b);

/* Fault injection on the embedded broker, one command a line:
 *   down | up              take the broker off the network, or back
 *   rtt MS                 delay every answer by MS milliseconds
 *   errors API N ERROR     fail the next N requests of API (produce, fetch,
 *                          metadata, offsetcommit, joingroup, heartbeat,
 *                          syncgroup, findcoordinator... or a number) with
 *                          ERROR (a Kafka error name, e.g. NOT_LEADER_FOR_PARTITION)
 *   clear                  forget the pending request errors
 * 0, or -1 + err for a command it does not know. */
int ao_broker_control(struct ao_broker *b, const char *line, char *err, size_t errlen);

#endif
