/* test_broker.c - the embedded broker answers without Nagle's delay (its
 * accepted sockets have TCP_NODELAY, or two responses written back to back
 * wait for a delayed ACK: 40 ms on Linux, the stall issue 28 traced to the
 * selector's flush of two candidates); a batch's place reaches the
 * partitioner */
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

int main(void)
{
    char addr[256], err[512], e[256];
    struct ao_broker *b = ao_broker_new(ao_topics(), 8, addr, sizeof addr, err, sizeof err);
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
        struct ao_io *io = ao_io_kafka_new("test", addr, NULL, NULL, NULL, err, sizeof err);
        cJSON *m = cJSON_Parse("{\"type\":\"plan\"}");
        struct ao_inmsg none = {0};
        int64_t lo, hi;
        int sent = io && m, most = 0;
        for (int i = 0; sent && i < 4; i++)
            sent = ao_io_emit_json_at(io, AO_TOPIC_PLANS, "run-1", 5, m) == 0;
        sent = sent && ao_io_commit(io, &none) == 0;
        for (int part = 0; sent && rk && part < 64; part++)
            if (rd_kafka_query_watermark_offsets(rk, AO_TOPIC_PLANS, part, &lo, &hi, 5000) ==
                    RD_KAFKA_RESP_ERR_NO_ERROR && hi - lo > most)
                most = (int)(hi - lo);
        CHECK(sent && most == 4, "four plans at one place share one partition (%d)", most);
        cJSON_Delete(m);
        ao_io_free(io);
    }
    if (rk)
        rd_kafka_destroy(rk);
    ao_broker_free(b);
    return CHECK_DONE();
}
