/* acks.c - the summarizer's acks: once every pair of an iteration is
 * acked, the run goes on */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/log.h"
#include "core/util.h"
#include "state/runstore.h"
#include "wire/msg.h"
#include "wire/names.h"

#include "selector.h"

int sel_on_experience(struct selector *sel, struct ao_io *io, const cJSON *msg, char *reason,
                      size_t len)
{
    struct ao_experience_msg e;
    struct ao_run_state st;
    struct ao_beam beam;
    const cJSON *it;
    char key[AO_KEY_MAX], err[AO_ERRLEN], *ack = NULL;
    int rc = -1, ours = 0, found;
    long have;

    ao_beam_init(&beam);
    if (ao_msg_decode(&ao_msg_experience, msg, &e, reason, len) < 0)
        return -1;
    if ((found = sel_load_state(sel, e.env.run, &st, io, reason, len)) < 0)
        goto out;
    if (!found) {
        snprintf(reason, len, "no run '%.80s' (no task started it, or its state is gone)", e.env.run);
        goto out;
    }
    cJSON_ArrayForEach(it, st.pairs)
        ours |= cJSON_IsString(it) && strcmp(it->valuestring, e.pair_id) == 0;
    rc = 0;
    if (st.phase != AO_PHASE_MEMORY || !ours) {
        ao_debug("run %s: ack of %s is late or repeated; ignored", e.env.run, e.pair_id);
        goto out;
    }
    if (ao_name(key, sizeof key, AO_KEY_ACKS, e.env.run, st.iter) < 0) {
        rc = ao_io_fail(io, "run id '%.40s...' is too long for a key", e.env.run);
        goto out;
    }
    /* the ack itself is kept: the run's report lists what the run learned */
    ack = cJSON_PrintUnformatted(msg);
    if (ao_rs_hsetnx(sel->store, key, e.pair_id, ack, err, sizeof err) < 0 ||
        (have = ao_rs_hlen(sel->store, key, err, sizeof err)) < 0) {
        rc = ao_io_fail(io, "run store: %s", err);
        goto out;
    }
    if (sel_save(sel, io) < 0) {
        rc = -1;
        goto out;
    }
    if (have >= cJSON_GetArraySize(st.pairs)) {
        cJSON *h = ao_run_state_last(&st);
        cJSON_DeleteItemFromObjectCaseSensitive(h, "acked");
        if (h)
            cJSON_AddNumberToObject(h, "acked", (double)have);
        rc = sel_load_beam(sel, e.env.run, &beam, io, reason, len) < 0 ? -1
                                                                       : sel_advance(sel, io, e.env.run, &st, &beam);
    }
out:
    cJSON_free(ack);
    ao_run_state_release(&st);
    ao_beam_release(&beam);
    ao_msg_release(&ao_msg_experience, &e);
    return rc;
}
