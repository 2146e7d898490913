/* test_phase.c - a run's phase by name and back */
#include <string.h>

#include "check.h"
#include "state/phase.h"

int main(void)
{
    cJSON *st = cJSON_CreateObject();
    int all = 1;

    CHECK(ao_phase_of(st) == AO_PHASE_NONE && ao_phase_of(NULL) == AO_PHASE_NONE,
          "a state without a phase, or no state, is in none");
    for (int p = AO_PHASE_BASELINE; p < AO_PHASE_COUNT; p++)
        all &= ao_phase_set(st, (enum ao_phase)p) == 0 && ao_phase_of(st) == (enum ao_phase)p &&
               !strcmp(cJSON_GetObjectItem(st, "phase")->valuestring, ao_phase_name((enum ao_phase)p));
    CHECK(all, "every phase is kept by its name and read back");
    CHECK(!strcmp(ao_phase_name(AO_PHASE_COLLECT), "collect") && !strcmp(ao_phase_name(AO_PHASE_DONE), "done") &&
              !strcmp(ao_phase_name(AO_PHASE_COUNT), "none"),
          "the names a state has always had (status and the report show them)");
    cJSON_ReplaceItemInObject(st, "phase", cJSON_CreateString("Done"));
    CHECK(ao_phase_of(st) == AO_PHASE_NONE, "a name that is none of them is no phase");
    cJSON_ReplaceItemInObject(st, "phase", cJSON_CreateNumber(5));
    CHECK(ao_phase_of(st) == AO_PHASE_NONE, "nor is a number");
    cJSON_Delete(st);
    return CHECK_DONE();
}
