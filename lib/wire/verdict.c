/* verdict.c - the result statuses' names */
#include <string.h>

#include "wire/verdict.h"

const char *const ao_verdict_names[] = {
    "ok",      "compile_error", "incorrect",      "timeout", "crash",     "rejected",
    "no_code", "internal_error", "lost",          "duplicate", NULL,
};

/* one name per verdict, in order: checked at compile time */
typedef char names_match_verdicts[sizeof ao_verdict_names / sizeof ao_verdict_names[0] == AO_V_COUNT
                                      ? 1 : -1];

const char *ao_verdict_name(enum ao_verdict v)
{
    return v > AO_V_NONE && v < AO_V_COUNT ? ao_verdict_names[v - 1] : "none";
}

enum ao_verdict ao_verdict_of(const char *name)
{
    for (int i = 0; name && ao_verdict_names[i]; i++)
        if (strcmp(name, ao_verdict_names[i]) == 0)
            return (enum ao_verdict)(i + 1);
    return AO_V_NONE;
}

int ao_verdict_fixable(enum ao_verdict v)
{
    return v == AO_V_COMPILE_ERROR || v == AO_V_INCORRECT || v == AO_V_TIMEOUT || v == AO_V_CRASH;
}
