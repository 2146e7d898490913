/* test_names.c - the checked name builder, the topic list and cut messages */
#include <string.h>

#include "check.h"
#include "core/util.h"
#include "targets/target.h"
#include "wire/names.h"

#define E6 "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9" /* six e-acute */
#define E8 E6 "\xc3\xa9\xc3\xa9"

int main(void)
{
    char b17[17];
    char buf[16], key[AO_KEY_MAX], a[AO_KEY_MAX], b[AO_KEY_MAX], run[402];
    const char *const *t = ao_topics();
    int n = 0, kernels = 0;

    CHECK(ao_name(buf, sizeof buf, "run:%s", "abc") == 0 && strcmp(buf, "run:abc") == 0,
          "a name that fits is written whole");
    CHECK(ao_name(buf, sizeof buf, "run:%s", "0123456789ab") == -1 && buf[0] == '\0',
          "a name that would not fit is refused and the buffer emptied, not cut");
    CHECK(ao_name(buf, sizeof buf, "%s", "0123456789abcde") == 0 &&
              ao_name(buf, sizeof buf, "%s", "0123456789abcdef") == -1,
          "the limit is the buffer less its NUL, to the byte");
    /* the audit's case: two 401-byte run ids that differ only at the end */
    memset(run, 'r', 401);
    run[401] = '\0';
    CHECK(ao_name(a, sizeof a, AO_KEY_ITER, run, 3LL) == 0 && (run[400] = 's') &&
              ao_name(b, sizeof b, AO_KEY_ITER, run, 3LL) == 0 && strcmp(a, b) != 0,
          "two long run ids that differ at the end make two keys");
    CHECK(ao_name(key, 40, AO_KEY_ITER, run, 3LL) == -1, "and a key buffer too short for them refuses both");

    for (; t[n]; n++)
        kernels += strncmp(t[n], AO_TOPIC_KERNELS_PREFIX, strlen(AO_TOPIC_KERNELS_PREFIX)) == 0;
    CHECK(kernels >= 2 && ao_target_at(kernels) == NULL && ao_target_at(kernels - 1) != NULL,
          "a kernels topic per built-in target (%d)", kernels);
    CHECK(n == kernels + 8 && strcmp(t[0], AO_TOPIC_TASKS) == 0 && strcmp(t[n - 1], AO_TOPIC_DLQ) == 0,
          "and the eight others (%d topics)", n);
    CHECK(ao_topic_spread(AO_TOPIC_PLANS) && ao_topic_spread("accelopt.kernels.cpu") &&
              !ao_topic_spread(AO_TOPIC_RESULTS) && !ao_topic_spread(AO_TOPIC_TASKS),
          "plans and kernels go round-robin; results and tasks by the run's key");
    {
        /* a batch's places are shared out evenly: 72 plans of a run over
         * 32 partitions, 2 or 3 each, consecutive places next door */
        const char *rid = "20261124-1-matmul";
        int per[32] = {0}, lo = 99, hi = 0, ok = 1, first = ao_spread_partition(rid, strlen(rid), 0, 32);
        for (long i = 0; i < 72; i++) {
            int at = ao_spread_partition(rid, strlen(rid), i, 32);
            ok &= at >= 0 && at == (first + i) % 32;
            if (at >= 0)
                per[at]++;
        }
        for (int i = 0; i < 32; i++) {
            lo = per[i] < lo ? per[i] : lo;
            hi = per[i] > hi ? per[i] : hi;
        }
        CHECK(ok && lo == 2 && hi == 3, "a batch takes consecutive partitions (%d to %d each)", lo, hi);
        CHECK(ao_spread_partition(rid, strlen(rid), -1, 32) == -1 && ao_spread_partition(rid, 3, 5, 0) == -1,
              "no place, or no partitions: none (round robin)");
        CHECK(ao_spread_partition(NULL, 0, 7, 32) >= 0 && ao_spread_partition(rid, strlen(rid), 1L << 40, 32) >= 0,
              "a message with no key, or a place past any batch, still gets a partition");
    }

    CHECK(ao_errf(buf, sizeof buf, "%s", "a message much longer than this") == -1 &&
              strcmp(buf, "a message mu...") == 0,
          "a message that does not fit ends in '...' (%s)", buf);
    /* nine 2-byte characters into 17 bytes: the "..." would start inside the 7th */
    CHECK(ao_errf(b17, sizeof b17, "%s", E8 "\xc3\xa9") == -1 && strcmp(b17, E6 "...") == 0,
          "and is never cut inside a UTF-8 character");
    CHECK(ao_errf(buf, sizeof buf, "%s", "short") == -1 && strcmp(buf, "short") == 0,
          "a message that fits is as it was");
    return CHECK_DONE();
}
