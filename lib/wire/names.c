/* names.c - the topic list and the checked name builder of names.h */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "wire/names.h"
#include "targets/target.h"

const char *const *ao_topics(void)
{
    static char kernels[AO_MAX_TARGETS][AO_TOPIC_MAX];
    static const char *list[AO_MAX_TARGETS + 16];
    int n = 0;

    if (list[0])
        return list;
    list[n++] = AO_TOPIC_TASKS;
    list[n++] = AO_TOPIC_CANDIDATES;
    list[n++] = AO_TOPIC_PLANS;
    for (int i = 0; i < AO_MAX_TARGETS && ao_target_at(i); i++)
        if (ao_name(kernels[i], sizeof kernels[i], AO_TOPIC_KERNELS, ao_target_at(i)->name) == 0)
            list[n++] = kernels[i];
    list[n++] = AO_TOPIC_RESULTS;
    list[n++] = AO_TOPIC_PAIRS;
    list[n++] = AO_TOPIC_EXPERIENCES;
    list[n++] = AO_TOPIC_RUNS;
    list[n++] = AO_TOPIC_DLQ;
    list[n] = NULL;
    return list;
}

int ao_topic_spread(const char *t)
{
    return strcmp(t, AO_TOPIC_CANDIDATES) == 0 || strcmp(t, AO_TOPIC_PLANS) == 0 ||
           strcmp(t, AO_TOPIC_PAIRS) == 0 ||
           strncmp(t, AO_TOPIC_KERNELS_PREFIX, strlen(AO_TOPIC_KERNELS_PREFIX)) == 0;
}

int ao_spread_partition(const char *key, size_t keylen, long place, int count)
{
    uint32_t h = 2166136261u; /* FNV-1a of the key: where the batch starts */

    if (place < 0 || count < 1)
        return -1;
    for (size_t i = 0; key && i < keylen; i++)
        h = (h ^ (unsigned char)key[i]) * 16777619u;
    return (int)(((unsigned long)h + (unsigned long)place) % (unsigned long)count);
}
