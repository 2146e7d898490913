/* rc.h - the return codes a caller decides on.  The text for people goes
 * in the err buffer beside them (as hiredis pairs err with errstr); a
 * caller branches on the code, never on the words. */
#ifndef AO_RC_H
#define AO_RC_H

#include "exitcode.h"

enum ao_rc {
    AO_RC_OK = 0,
    AO_RC_FAIL = -1,     /* failed, err says why: trying again may help */
    AO_RC_SETTING = -2,  /* a setting is wrong (a refused key, an unsafe directory, a bad flag):
                            trying again will not help; a tool exits 2 */
    AO_RC_CORRUPT = -3,  /* stored data does not decode: said, never guessed at */
    AO_RC_LATER = -4,    /* neither done nor failed (a stop was asked, a store is away): the
                            message is handled again later */
    AO_RC_REJECTED = -5, /* the kernel's own doing: a verdict on it, not our failure */
};

/* The exit status of a tool that stops on rc (< 0). */
static inline int ao_exit_for(int rc)
{
    return rc == AO_RC_SETTING ? AO_EXIT_USAGE : AO_EXIT_FAIL;
}

#endif
