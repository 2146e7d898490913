/* test_broker.c - the embedded broker answers without Nagle's delay (its
 * accepted sockets have TCP_NODELAY, or two responses written back to back
 * wait for a delayed ACK: 40 ms on Linux, the stall issue 28 traced to the
 * selector's flush of two candidates); a batch's place reaches the
 * partitioner; a quiet consumer fetches nothing and loses nothing */
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

/* ao_io_quiet: a quiet consumer is handed nothing; once it fetches again
 * it is handed everything after what it handled, in order, none twice
 * (what it had fetched before the pause comes again) */
static void quiet(const char *addr)
{
    static const char *const topics[] = {AO_TOPIC_PAIRS, NULL};
    char err[512];
    struct ao_io *out = ao_io_kafka_new("test", addr, NULL, NULL, NULL, err, sizeof err),
                 *in = ao_io_kafka_new("test", addr, "quiet-test", topics, NULL, err, sizeof err);
    struct ao_inmsg m, none = {0};
    long long first = -1, last = -1, seen = 0, during = 0, in_order = 1;
    int sent = out && in;

    for (int i = 0; sent && i < 6; i++) {
        cJSON *j = cJSON_CreateObject();
        cJSON_AddNumberToObject(j, "n", i);
        sent = ao_io_emit_json_at(out, AO_TOPIC_PAIRS, "run-q", 0, j) == 0;
        cJSON_Delete(j);
    }
    sent = sent && ao_io_commit(out, &none) == 0;
    for (int t = 0; sent && first < 0 && t < 300; t++) /* the group's first join */
        if (ao_io_next(in, &m, 100) > 0) {
            first = last = m.offset;
            seen = 1;
            ao_io_commit(in, &m);
        }
    CHECK(first >= 0, "a consumer is handed the first message");
    if (first < 0) {
        ao_io_free(in);
        ao_io_free(out);
        return;
    }
    ao_io_quiet(in, 1);
    for (int i = 6; i < 9; i++) {
        cJSON *j = cJSON_CreateObject();
        cJSON_AddNumberToObject(j, "n", i);
        ao_io_emit_json_at(out, AO_TOPIC_PAIRS, "run-q", 0, j);
        cJSON_Delete(j);
    }
    ao_io_commit(out, &none);
    for (int t = 0; t < 8; t++)
        if (ao_io_next(in, &m, 100) > 0) {
            during++;
            ao_io_commit(in, &m);
        }
    CHECK(during == 0, "while quiet it is handed nothing (%lld)", during);
    ao_io_quiet(in, 0);
    for (int t = 0; t < 100 && seen < 9; t++)
        if (ao_io_next(in, &m, 100) > 0) {
            in_order = in_order && m.offset == last + 1;
            last = m.offset;
            seen++;
            ao_io_commit(in, &m);
        }
    CHECK(seen == 9 && in_order, "fetching again, it is handed the other 8 in order, none twice (%lld, %s)",
          seen, in_order ? "in order" : "a gap or a repeat");
    ao_io_free(in);
    ao_io_free(out);
}

int main(void)
{
    char addr[256], err[512], e[256];
    struct ao_broker *b = ao_broker_new(8, addr, sizeof addr, err, sizeof err);
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
    quiet(addr);
    if (rk)
        rd_kafka_destroy(rk);
    ao_broker_free(b);
    return CHECK_DONE();
}
