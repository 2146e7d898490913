/* test_broker.c - the embedded broker answers without Nagle's delay (its
 * accepted sockets have TCP_NODELAY, or two responses written back to back
 * wait for a delayed ACK: 40 ms on Linux, the stall issue 28 traced to the
 * selector's flush of two candidates); a batch's place reaches the
 * partitioner; a topic prefix keeps a deployment to its own topics */
#include <dirent.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <librdkafka/rdkafka.h>

#include "check.h"
#include "wire/io.h"
#include "wire/kafka.h"
#include "targets/target.h"
#include "wire/names.h"

/* The broker's side of our connections to it: sockets of this process whose
 * local port is the broker's and that have a peer.  How many; how many of
 * them have TCP_NODELAY. */
static void broker_side(int port, int *n, int *nodelay)
{
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;

    *n = *nodelay = 0;
    while (d && (e = readdir(d))) {
        int fd = atoi(e->d_name), one = 0;
        struct sockaddr_in a, b;
        socklen_t la = sizeof a, lb = sizeof b, lo = sizeof one;
        if (e->d_name[0] == '.' || getsockname(fd, (struct sockaddr *)&a, &la) < 0 ||
            a.sin_family != AF_INET || ntohs(a.sin_port) != port ||
            getpeername(fd, (struct sockaddr *)&b, &lb) < 0)
            continue;
        (*n)++;
        if (getsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, &lo) == 0 && one)
            (*nodelay)++;
    }
    if (d)
        closedir(d);
}

/* The messages on one partition of a topic, summed over partitions: the
 * partition that holds most (*most), and all of them. */
static int64_t on_topic(rd_kafka_t *rk, const char *topic, int *most)
{
    int64_t lo, hi, all = 0;

    *most = 0;
    for (int part = 0; rk && part < 64; part++)
        if (rd_kafka_query_watermark_offsets(rk, topic, part, &lo, &hi, 5000) == RD_KAFKA_RESP_ERR_NO_ERROR) {
            all += hi - lo;
            if (hi - lo > *most)
                *most = (int)(hi - lo);
        }
    return all;
}

int main(void)
{
    char addr[256], err[512], e[256];
    const char *topics[64];
    int nt = 0;
    for (const char *const *t = ao_topics(); *t && nt < 60; t++)
        topics[nt++] = *t;
    topics[nt++] = "team-1.accelopt.plans"; /* another deployment's, on the same cluster */
    topics[nt] = NULL;
    struct ao_broker *b = ao_broker_new(topics, 8, addr, sizeof addr, err, sizeof err);
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    rd_kafka_t *rk = NULL;
    const struct rd_kafka_metadata *md = NULL;
    const char *colon;
    int n = 0, nodelay = 0;

    CHECK(b != NULL, "the embedded broker starts (%s)", b ? addr : err);
    if (!b)
        return CHECK_DONE();
    colon = strrchr(addr, ':');
    if (rd_kafka_conf_set(conf, "bootstrap.servers", addr, e, sizeof e) == RD_KAFKA_CONF_OK)
        rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, e, sizeof e);
    CHECK(rk && rd_kafka_metadata(rk, 0, NULL, &md, 5000) == RD_KAFKA_RESP_ERR_NO_ERROR,
          "a client reaches it");
    if (md)
        rd_kafka_metadata_destroy(md);
    broker_side(colon ? atoi(colon + 1) : 0, &n, &nodelay);
    CHECK(n >= 1, "the broker's end of the client's connection is found (%d)", n);
    CHECK(n >= 1 && nodelay == n, "every accepted connection has TCP_NODELAY (%d of %d)", nodelay, n);
    {
        /* a batch's place reaches the partitioner: four plans at one place
         * all land on its partition (round robin would give four) */
        struct ao_kafka_site site = {.brokers = addr};
        struct ao_io *io = ao_io_kafka_new("test", &site, "unused", NULL, err, sizeof err);
        cJSON *m = cJSON_Parse("{\"type\":\"plan\"}");
        struct ao_inmsg none = {0};
        int sent = io && m, most = 0;
        for (int i = 0; sent && i < 4; i++)
            sent = ao_io_emit_json_at(io, AO_TOPIC_PLANS, "run-1", 5, m) == 0;
        sent = sent && ao_io_commit(io, &none) == 0;
        if (sent)
            on_topic(rk, AO_TOPIC_PLANS, &most);
        CHECK(sent && most == 4, "four plans at one place share one partition (%d)", most);
        ao_io_free(io);

        /* the same with a prefix: they go to team-1's topic alone, still
         * at their place; team-1's consumer sees them on accelopt.plans */
        struct ao_kafka_site team = {.brokers = addr, .prefix = "team-1."};
        static const char *const plans[] = {AO_TOPIC_PLANS, NULL};
        int64_t ours, theirs;
        io = ao_io_kafka_new("test", &team, "unused", NULL, err, sizeof err);
        sent = io && m;
        for (int i = 0; sent && i < 3; i++)
            sent = ao_io_emit_json_at(io, AO_TOPIC_PLANS, "run-1", 5, m) == 0;
        sent = sent && ao_io_commit(io, &none) == 0;
        ao_io_free(io);
        theirs = on_topic(rk, "team-1.accelopt.plans", &most);
        ours = on_topic(rk, AO_TOPIC_PLANS, &n);
        CHECK(sent && theirs == 3 && most == 3 && ours == 4,
              "with --topic-prefix team-1. three plans go to team-1.accelopt.plans, at one place "
              "(%lld there, %d on one partition; %lld unprefixed)", (long long)theirs, most, (long long)ours);
        io = ao_io_kafka_new("test", &team, "readers", plans, err, sizeof err);
        {
            struct ao_inmsg in;
            int got = 0, named = 0;
            for (int i = 0; io && i < 300 && got < 3; i++)
                if (ao_io_next(io, &in, 100) == 1) {
                    got++;
                    named += strcmp(in.topic, AO_TOPIC_PLANS) == 0;
                    ao_io_commit(io, &in);
                }
            CHECK(got == 3 && named == 3, "team-1's consumer reads its three, named %s (%d read, %d so "
                  "named)", AO_TOPIC_PLANS, got, named);
        }
        if (io)
            ao_io_free(io);
        cJSON_Delete(m);
    }
    {
        struct ao_kafka_site bad = {.brokers = addr, .prefix = "team 1/"};
        CHECK(!ao_io_kafka_new("test", &bad, "unused", NULL, err, sizeof err) && strstr(err, "--topic-prefix"),
              "a prefix no topic may start with is refused (%s)", err);
    }
    if (rk)
        rd_kafka_destroy(rk);
    ao_broker_free(b);
    return CHECK_DONE();
}
