/* test_verdict.c - the typed statuses and their wire names */
#include <string.h>

#include "check.h"
#include "wire/verdict.h"

int main(void)
{
    int round = 1;

    for (int v = AO_V_OK; v < AO_V_COUNT; v++)
        round &= (int)ao_verdict_of(ao_verdict_name((enum ao_verdict)v)) == v;
    CHECK(round, "every verdict's name reads back as that verdict");
    CHECK(strcmp(ao_verdict_name(AO_V_COMPILE_ERROR), "compile_error") == 0 &&
              strcmp(ao_verdict_name(AO_V_DUPLICATE), "duplicate") == 0,
          "names are the wire's");
    CHECK(ao_verdict_of("OK") == AO_V_NONE && ao_verdict_of(NULL) == AO_V_NONE &&
              strcmp(ao_verdict_name(AO_V_NONE), "none") == 0 &&
              strcmp(ao_verdict_name(AO_V_COUNT), "none") == 0,
          "an unknown name is no verdict, and no verdict has no wire name");
    CHECK(ao_verdict_fixable(AO_V_INCORRECT) && ao_verdict_fixable(AO_V_CRASH) &&
              !ao_verdict_fixable(AO_V_REJECTED) && !ao_verdict_fixable(AO_V_OK) &&
              !ao_verdict_fixable(AO_V_NO_CODE),
          "a model is asked to fix what it can: not a rejected cheat, not a missing reply");
    return CHECK_DONE();
}
