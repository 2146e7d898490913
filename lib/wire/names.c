/* names.c - the checked name builders of names.h */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "wire/names.h"

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
