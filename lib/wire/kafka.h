/* kafka.h - the Kafka backend of the transport seam (librdkafka): consumer
 * groups, at-least-once (an input's offset is stored only after its outputs
 * were delivered), dead letters to accelopt.dlq */
#ifndef AO_KAFKA_H
#define AO_KAFKA_H

#include <stddef.h>

#include "wire/io.h"

/* A transport that consumes topics (a NULL-terminated list; NULL or empty:
 * it only produces) in a consumer group and produces keyed messages.  props holds librdkafka settings as
 * "key=value" lines (the -X flags; values are never logged).  NULL + err. */
struct ao_io *ao_io_kafka_new(const char *stage, const char *brokers, const char *group,
                              const char *const *topics, const char *props, char *err,
                              size_t errlen);

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
int ao_kafka_reachable(const char *brokers, const char *props, double timeout_s, char *err,
                       size_t errlen);

/* Make `topics` (NULL-terminated) on a cluster, each with `partitions`
 * partitions and `replication` replicas (-1: the cluster's default); those
 * that exist are left as they are.  *made counts the new ones.  0, or -1 +
 * err naming the first topic refused and why. */
int ao_kafka_make_topics(const char *brokers, const char *props, const char *const *topics, int partitions,
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
