/* rdkafka-idle.c - what one idle librdkafka client costs, alone: a
 * producer, or a consumer in a group of its own on one topic, does
 * nothing for SECONDS after a warm-up of 8 s, and prints its own CPU over
 * them as % of one core.  The floor under an idle stage (issue 67): a
 * stage is one consumer and one producer.  SLACK_NS=N makes the client
 * with its threads' timer slack at N ns (lib/wire/kafka.c rdk_new: 1 ms).
 * Built and run by rdkafka-idle.sh. */
#include <librdkafka/rdkafka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <time.h>

static double cpu_us(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return (u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1e6 + u.ru_utime.tv_usec + u.ru_stime.tv_usec;
}

static void idle(rd_kafka_t *rk, int consumer, int seconds)
{
    for (time_t end = time(NULL) + seconds; time(NULL) < end;) {
        if (consumer) {
            rd_kafka_message_t *m = rd_kafka_consumer_poll(rk, 1000);
            if (m)
                rd_kafka_message_destroy(m);
        } else {
            rd_kafka_poll(rk, 1000);
        }
    }
}

/* usage: rdkafka-idle BROKERS producer|consumer SECONDS [KEY=VALUE...] */
int main(int argc, char **argv)
{
    char e[512];
    rd_kafka_conf_t *c = rd_kafka_conf_new();
    int consumer = argc > 2 && strcmp(argv[2], "consumer") == 0, seconds = argc > 3 ? atoi(argv[3]) : 0;
    rd_kafka_t *rk;
    double t0;

    if (argc < 4 || seconds <= 0 || (!consumer && strcmp(argv[2], "producer") != 0)) {
        fprintf(stderr, "usage: %s BROKERS producer|consumer SECONDS [KEY=VALUE...]\n", argv[0]);
        return 2;
    }
    if (rd_kafka_conf_set(c, "bootstrap.servers", argv[1], e, sizeof e) ||
        (consumer && rd_kafka_conf_set(c, "group.id", "rdkafka-idle", e, sizeof e))) {
        fprintf(stderr, "%s\n", e);
        return 1;
    }
    for (int i = 4; i < argc; i++) {
        char *eq = strchr(argv[i], '=');
        if (!eq || (*eq = '\0', rd_kafka_conf_set(c, argv[i], eq + 1, e, sizeof e))) {
            fprintf(stderr, "%s: %s\n", argv[i], eq ? e : "not KEY=VALUE");
            return 1;
        }
    }
    if (getenv("SLACK_NS")) /* its threads take this thread's slack */
        prctl(PR_SET_TIMERSLACK, strtoul(getenv("SLACK_NS"), NULL, 10), 0, 0, 0);
    if (!(rk = rd_kafka_new(consumer ? RD_KAFKA_CONSUMER : RD_KAFKA_PRODUCER, c, e, sizeof e))) {
        fprintf(stderr, "%s\n", e);
        return 1;
    }
    if (consumer) {
        rd_kafka_topic_partition_list_t *t = rd_kafka_topic_partition_list_new(1);
        rd_kafka_topic_partition_list_add(t, "accelopt.plans", RD_KAFKA_PARTITION_UA);
        rd_kafka_poll_set_consumer(rk);
        rd_kafka_subscribe(rk, t);
        rd_kafka_topic_partition_list_destroy(t);
    }
    idle(rk, consumer, 8); /* connected, and in its group */
    t0 = cpu_us();
    idle(rk, consumer, seconds);
    printf("%s%s%s%s%s: %.3f%% of one core\n", argv[2], argc > 4 ? " " : "", argc > 4 ? argv[4] : "",
           getenv("SLACK_NS") ? ", timer slack ns " : "", getenv("SLACK_NS") ? getenv("SLACK_NS") : "",
           (cpu_us() - t0) / 1e4 / seconds);
    if (consumer)
        rd_kafka_consumer_close(rk);
    rd_kafka_destroy(rk);
    return 0;
}
