/* phase.c - a run's phase by name and back */
#include <string.h>

#include "state/phase.h"

static const char *const names[] = {"none", "baseline", "collect", "memory", "final", "done"};
_Static_assert(sizeof names / sizeof names[0] == AO_PHASE_COUNT, "a name per phase");

const char *ao_phase_name(enum ao_phase p)
{
    return p > AO_PHASE_NONE && p < AO_PHASE_COUNT ? names[p] : names[0];
}

enum ao_phase ao_phase_of(const cJSON *state)
{
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(state, "phase");

    for (int p = AO_PHASE_NONE + 1; cJSON_IsString(j) && p < AO_PHASE_COUNT; p++)
        if (strcmp(j->valuestring, names[p]) == 0)
            return (enum ao_phase)p;
    return AO_PHASE_NONE;
}

int ao_phase_set(cJSON *state, enum ao_phase p)
{
    cJSON_DeleteItemFromObjectCaseSensitive(state, "phase");
    return cJSON_AddStringToObject(state, "phase", ao_phase_name(p)) ? 0 : -1;
}
