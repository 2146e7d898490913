/* topics.c - accelopt broker, produce and consume: an embedded Kafka-protocol
 * broker for local runs and tests, and kcat-like tools to feed and read it */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <time.h>
#include <unistd.h>

#include "core/alloc.h"
#include "core/exitcode.h"
#include "core/log.h"
#include "core/signals.h"
#include "core/util.h"
#include "front.h"
#include "targets/target.h"
#include "wire/io.h"
#include "wire/kafka.h"
#include "wire/stage.h"

#define N(a) ((int)(sizeof a / sizeof a[0]))
#define BROKER_WAIT_S 10.0 /* for the brokers to answer at all */
#define GROUP_JOIN_S 60    /* for consume's group to get its partitions */

#define KAFKA_OPTIONS                                                                          \
    {"brokers", 'b', AO_OPT_STR, NULL, "HOST:PORT", "bootstrap brokers (required)"},          \
    AO_TOPIC_PREFIX_OPTION,                                                                    \
    {"kafka", 'X', AO_OPT_LIST, NULL, "KEY=VALUE", "a librdkafka setting (repeatable)"},       \
    AO_KAFKA_FILE_OPTION

static const struct ao_option broker_opts[] = {
    {"partitions", 'p', AO_OPT_INT, "12", "N", "partitions of each accelopt topic"},
    {"brokers", 'b', AO_OPT_STR, NULL, "HOST:PORT", "make the accelopt topics on these brokers (a real "
     "cluster) and exit, instead of serving"},
    {"replication", 0, AO_OPT_INT, "-1", "N", "with --brokers: each topic's replicas (-1: the cluster's "
     "default)"},
    AO_TOPIC_PREFIX_OPTION,
    {"kafka", 'X', AO_OPT_LIST, NULL, "KEY=VALUE", "with --brokers: a librdkafka setting (repeatable)"},
    AO_KAFKA_FILE_OPTION,
    {"control", 0, AO_OPT_BOOL, "0", NULL, "read fault-injection commands from stdin "
     "(down, up, rtt MS, errors API N ERROR, clear)"},
    AO_COMMON_OPTIONS,
};

static const struct ao_option produce_opts[] = {
    KAFKA_OPTIONS,
    {"unsigned", 0, AO_OPT_BOOL, NULL, NULL, "send the lines as they are, unsigned (as anyone "
     "without the deployment's key can; stages refuse them)"},
    AO_COMMON_OPTIONS,
};

static const struct ao_option consume_opts[] = {
    KAFKA_OPTIONS,
    {"group", 'g', AO_OPT_STR, NULL, "ID", "consumer group (default: a new one, from the start)"},
    {"count", 'n', AO_OPT_INT, "0", "N", "stop after N messages (0: at the idle timeout)"},
    {"idle", 0, AO_OPT_NUM, "10", "SEC", "stop after SEC without a message"},
    AO_COMMON_OPTIONS,
};

static const struct ao_option relay_opts[] = {
    KAFKA_OPTIONS,
    {"group", 'g', AO_OPT_STR, "accelopt-relay", "ID", "consumer group"},
    AO_COMMON_OPTIONS,
};

static int topics_count(void)
{
    int n = 0;

    for (const char *const *t = ao_topics(); *t; t++)
        n++;
    return n;
}

int cmd_broker(int argc, char **argv)
{
    struct ao_config c;
    struct ao_broker *b = NULL;
    char addr[256], err[AO_ERRLEN];
    int code;

    if (ao_tool_setup("accelopt", &c, broker_opts, N(broker_opts), argc, argv, "accelopt broker [options]",
                    &code) < 0)
        goto out;
    code = AO_EXIT_USAGE;
    if (c.nargs || ao_config_int(&c, "partitions") < 1) {
        ao_err("broker takes no arguments and at least one partition");
        goto out;
    }
    if (ao_config_str(&c, "topic-prefix") && !ao_config_str(&c, "brokers")) {
        ao_err("--topic-prefix names a deployment's share of a cluster: it goes with --brokers");
        goto out;
    }
    code = AO_EXIT_FAIL;
    if (ao_config_str(&c, "brokers")) { /* a real cluster: its topics, made once */
        struct ao_kafka_site site = ao_kafka_site_of(&c);
        int made = 0;
        if (ao_kafka_reachable(&site, BROKER_WAIT_S, err, sizeof err) < 0 ||
            ao_kafka_make_topics(&site, ao_topics(), (int)ao_config_int(&c, "partitions"),
                                 (int)ao_config_int(&c, "replication"), &made, err, sizeof err) < 0) {
            ao_err("%s", err);
            goto out;
        }
        /* what it did is its output, as the address is a served broker's */
        if (printf("%d topics made on %s%s%s (%d there already)\n", made, ao_config_str(&c, "brokers"),
                   site.prefix ? ", prefixed " : "", site.prefix ? site.prefix : "", topics_count() - made) < 0 ||
            fflush(stdout) != 0)
            goto out;
        code = AO_EXIT_OK;
        goto out;
    }
    ao_signals_install();
    if (!(b = ao_broker_new(ao_topics(), (int)ao_config_int(&c, "partitions"), addr, sizeof addr, err,
                            sizeof err))) {
        ao_err("%s", err);
        goto out;
    }
    /* the address is the one line on stdout: scripts read it */
    if (printf("%s\n", addr) < 0 || fflush(stdout) != 0)
        goto out;
    ao_info("serving on %s until stopped", addr);
    if (ao_config_bool(&c, "control")) {
        char *line = NULL;
        size_t cap = 0;
        struct pollfd pf = {0, POLLIN, 0};
        while (!ao_stop_requested()) {
            ssize_t n;
            if (poll(&pf, 1, 100) <= 0)
                continue;
            if ((n = getline(&line, &cap, stdin)) < 0)
                break; /* the controller left: serve on, as without --control */
            while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
                line[--n] = '\0';
            if (n == 0)
                continue;
            if (ao_broker_control(b, line, err, sizeof err) < 0)
                ao_err("control '%s': %s", line, err);
            else
                ao_info("control: %s", line);
        }
        free(line);
    }
    while (!ao_stop_requested())
        usleep(100000);
    code = AO_EXIT_OK;
out:
    ao_broker_free(b);
    ao_config_release(&c);
    return code;
}

/* The run id of a message, its Kafka key (NULL when it has none). */
static char *run_key(const char *line)
{
    cJSON *j = cJSON_Parse(line);
    const cJSON *r = cJSON_GetObjectItemCaseSensitive(j, "run");
    char *k = cJSON_IsString(r) ? ao_strdup(r->valuestring) : NULL;
    cJSON_Delete(j);
    return k;
}

int cmd_produce(int argc, char **argv)
{
    struct ao_config c;
    struct ao_kafka_site site;
    struct ao_io *io = NULL;
    struct ao_inmsg none = {0};
    char err[AO_ERRLEN], *line = NULL;
    size_t cap = 0;
    ssize_t n;
    long sent = 0;
    int code;

    if (ao_tool_setup("accelopt", &c, produce_opts, N(produce_opts), argc, argv,
                    "accelopt produce --brokers B TOPIC < messages.jsonl", &code) < 0)
        goto out;
    code = AO_EXIT_USAGE;
    if (c.nargs != 1 || !ao_config_str(&c, "brokers")) {
        ao_err("produce wants --brokers and one topic");
        goto out;
    }
    code = AO_EXIT_FAIL;
    site = ao_kafka_site_of(&c);
    if (ao_kafka_reachable(&site, BROKER_WAIT_S, err, sizeof err) < 0) {
        ao_err("%s", err);
        goto out;
    }
    if (!(io = ao_io_kafka_new("produce", &site, "unused", NULL, err, sizeof err))) {
        ao_err("%s", err);
        goto out;
    }
    /* the operator's tool: what it sends is signed with the deployment's key
     * (a line that is not a JSON object goes as it is, for a stage to refuse) */
    if (!ao_config_bool(&c, "unsigned") && ao_io_set_key(io, 0, err, sizeof err) < 0) {
        ao_err("%s", err);
        goto out;
    }
    while ((n = getline(&line, &cap, stdin)) > 0) {
        cJSON *j;
        char *key;
        int rc;
        while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
            line[--n] = '\0';
        if (!n)
            continue;
        key = run_key(line);
        if (io->key && (j = cJSON_Parse(line)) && cJSON_IsObject(j)) {
            rc = ao_io_emit_json(io, c.args[0], key, j);
            io->out--; /* counted as sent below */
        } else {
            j = NULL;
            rc = io->ops->emit(io, c.args[0], key, -1, line);
        }
        cJSON_Delete(j);
        free(key);
        if (rc < 0) {
            ao_err("%s", io->err);
            goto out;
        }
        sent++;
    }
    if (ao_io_commit(io, &none) < 0) { /* waits for every delivery */
        ao_err("%s", io->err);
        goto out;
    }
    ao_info("%ld messages to '%s'", sent, c.args[0]);
    code = AO_EXIT_OK;
out:
    free(line);
    ao_io_free(io);
    ao_config_release(&c);
    return code;
}

int cmd_consume(int argc, char **argv)
{
    struct ao_config c;
    struct ao_kafka_site site;
    struct ao_io *io = NULL;
    const char *topics[2] = {NULL, NULL};
    char err[AO_ERRLEN], group[96];
    long want, got = 0;
    int64_t idle_ns, last, joined;
    int code;

    if (ao_tool_setup("accelopt", &c, consume_opts, N(consume_opts), argc, argv,
                    "accelopt consume --brokers B TOPIC > messages.jsonl", &code) < 0)
        goto out;
    code = AO_EXIT_USAGE;
    if (c.nargs != 1 || !ao_config_str(&c, "brokers")) {
        ao_err("consume wants --brokers and one topic");
        goto out;
    }
    topics[0] = c.args[0];
    want = ao_config_int(&c, "count");
    idle_ns = (int64_t)(ao_config_num(&c, "idle") * 1e9);
    snprintf(group, sizeof group, "accelopt-consume-%d-%lld", (int)getpid(), (long long)ao_now_ns());
    ao_signals_install();
    code = AO_EXIT_FAIL;
    site = ao_kafka_site_of(&c);
    if (ao_kafka_reachable(&site, BROKER_WAIT_S, err, sizeof err) < 0) {
        ao_err("%s", err);
        goto out;
    }
    if (!(io = ao_io_kafka_new("consume", &site, ao_config_str(&c, "group") ? ao_config_str(&c, "group") : group,
                               topics, err, sizeof err))) {
        ao_err("%s", err);
        goto out;
    }
    last = ao_now_ns();
    joined = last;
    while (!ao_stop_requested() && (!want || got < want) && ao_now_ns() - last < idle_ns) {
        struct ao_inmsg m;
        int rc = ao_io_next(io, &m, 100);
        if (rc < 0) {
            ao_err("%s", io->err);
            goto out;
        }
        /* idle counts from the group's first assignment: joining takes
         * seconds, which must not pass for an empty topic */
        if (ao_io_generation(io) == 0) {
            if (ao_now_ns() - joined > (int64_t)(GROUP_JOIN_S * 1e9)) {
                ao_err("the consumer group did not get its partitions of '%s' within %d s", topics[0],
                       GROUP_JOIN_S);
                goto out;
            }
            last = ao_now_ns();
        }
        if (rc == 0)
            continue;
        if (printf("%.*s\n", (int)m.len, m.raw) < 0 || fflush(stdout) != 0 ||
            ao_io_commit(io, &m) < 0)
            goto out;
        got++;
        last = ao_now_ns();
    }
    code = !want || got >= want ? AO_EXIT_OK : AO_EXIT_FAIL;
    if (code != AO_EXIT_OK)
        ao_err("%ld of %ld messages from '%s' before %.0f s idle", got, want, topics[0],
               ao_config_num(&c, "idle"));
out:
    ao_io_free(io);
    ao_config_release(&c);
    return code;
}

/* accelopt relay: the loop every stage runs, with no work in it: each
 * message of FROM is parsed and sent on to TO under its run, at least once
 * (offsets stored after delivery).  Copies a topic; measures the transport. */
struct relay {
    const char *to;
};

static int relay_one(void *ctx, struct ao_io *io, const cJSON *msg, char *reason, size_t len)
{
    struct relay *r = ctx;
    const cJSON *run = cJSON_GetObjectItemCaseSensitive(msg, "run");

    if (!cJSON_IsString(run)) {
        snprintf(reason, len, "no run: it has no key");
        return -1;
    }
    return ao_io_emit_json(io, r->to, run->valuestring, msg) < 0 ? -1 : 0;
}

int cmd_relay(int argc, char **argv)
{
    struct ao_config c;
    struct ao_kafka_site site;
    struct ao_io *io = NULL;
    struct relay r;
    const char *topics[2] = {NULL, NULL};
    char err[AO_ERRLEN];
    int code;

    if (ao_tool_setup("accelopt", &c, relay_opts, N(relay_opts), argc, argv,
                    "accelopt relay --brokers B FROM-TOPIC TO-TOPIC", &code) < 0)
        goto out;
    code = AO_EXIT_USAGE;
    if (c.nargs != 2 || !ao_config_str(&c, "brokers")) {
        ao_err("relay wants --brokers and two topics");
        goto out;
    }
    topics[0] = c.args[0];
    r.to = c.args[1];
    ao_signals_install();
    code = AO_EXIT_FAIL;
    site = ao_kafka_site_of(&c);
    if (!(io = ao_io_kafka_new("relay", &site, ao_config_str(&c, "group"), topics, err, sizeof err))) {
        ao_err("%s", err);
        goto out;
    }
    if (ao_io_set_key(io, 1, err, sizeof err) < 0) { /* what it copies is checked, and signed */
        ao_err("%s", err);
        goto out;
    }
    if (ao_io_run(io, relay_one, &r) < 0 && !ao_stop_requested()) {
        ao_err("%s", io->err);
        goto out;
    }
    ao_info("%lld messages in, %lld out, %lld dead letters", io->in, io->out, io->dead);
    code = AO_EXIT_OK;
out:
    ao_io_free(io);
    ao_config_release(&c);
    return code;
}
