/* compare.c - phase compare (issue 47): the children whose single
 * measurement would decide something go head to head with their parents;
 * here they are asked for and read back (the iteration closes on them in
 * results.c; each comes in through fixes.c) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "core/util.h"
#include "state/runstore.h"
#include "targets/target.h"
#include "wire/msg.h"
#include "wire/names.h"
#include "wire/verdict.h"

#include "selector.h"

int sel_compare_on(const struct ao_run_state *st)
{
    return sel_int_or(st->config.compare, 1) != 0;
}

/* The comparison kernel of one child: its source against its parent's. */
static int add_comparison(cJSON *outbox, const char *topic, const char *run, const struct ao_run_state *st,
                          const struct ao_beam_member *child, const struct ao_beam_member *parent)
{
    struct ao_kernel_msg k;
    char id[AO_ID_BUF];
    int rc;

    ao_msg_init(&ao_msg_kernel, &k);
    if (!child->slot || !child->source || !parent->source || !parent->sha256 ||
        ao_name(id, sizeof id, AO_ID_KERNEL_CMP, run, st->iter, child->slot) < 0)
        return 1; /* nothing to compare with: the child stays uncompared */
    rc = sel_env_from(&k.env, "kernel", id, run, st, st->iter) < 0 ||
         !(k.source = strdup(child->source)) || !(k.sha256 = sel_dup_or_null(child->sha256)) ||
         !(k.baseline_source = strdup(parent->source)) || !(k.parent = strdup(parent->sha256)) ||
         !(k.slot = strdup(child->slot)) || (child->plan && !(k.plan = strdup(child->plan))) ||
         !(k.plan_text = strdup("head to head with its parent")) ||
         !(k.size = strdup(st->size)) || !(k.task_path = strdup(st->task_path)) ||
         !(k.task_sha256 = strdup(st->task_sha256)) ||
         sel_out_add(outbox, topic, &ao_msg_kernel, &k) < 0 ? -1 : 0;
    ao_msg_release(&ao_msg_kernel, &k);
    return rc;
}

int sel_ask_compare(struct selector *sel, struct ao_io *io, const char *run, struct ao_run_state *st,
                    const struct ao_beam_member *const *child, const struct ao_beam_member *const *parent,
                    int n)
{
    const struct ao_target *tg = ao_target_get(st->target, NULL, 0);
    char topic[AO_TOPIC_MAX];
    cJSON *outbox = cJSON_CreateArray(), *slots = cJSON_CreateArray();
    int asked = 0, rc = 0;

    if (!outbox || !slots) {
        rc = ao_io_fail(io, "out of memory");
        goto out;
    }
    if (!tg || ao_name(topic, sizeof topic, AO_TOPIC_KERNELS, tg->name) < 0)
        goto out; /* a run's target is checked when it starts: not reached */
    for (int i = 0; i < n && rc == 0; i++) {
        int r = add_comparison(outbox, topic, run, st, child[i], parent[i]);
        if (r < 0 || (r == 0 && !cJSON_AddItemToArray(slots, cJSON_CreateString(child[i]->slot))))
            rc = ao_io_fail(io, "out of memory");
        asked += r == 0;
    }
    if (rc < 0 || asked == 0)
        goto out;
    st->phase = AO_PHASE_COMPARE;
    cJSON_Delete(st->compares);
    st->compares = slots;
    slots = NULL;
    st->progress = sel_now_s();
    ao_info("run %s: iteration %lld: %d %s head to head with %s parent%s", run, st->iter, asked,
            asked == 1 ? "child goes" : "children go", asked == 1 ? "its" : "their", asked == 1 ? "" : "s");
    rc = sel_step(sel, io, run, st, NULL, outbox) < 0 ? -1 : 1;
out:
    cJSON_Delete(outbox);
    cJSON_Delete(slots);
    return rc;
}

cJSON *sel_load_compares(struct selector *sel, const char *run, long long iter, struct ao_io *io)
{
    char key[AO_KEY_MAX], err[AO_ERRLEN];
    cJSON *all;

    if (ao_name(key, sizeof key, AO_KEY_CMP, run, iter) < 0) {
        ao_io_fail(io, "run id '%.40s...' is too long for a key", run);
        return NULL;
    }
    if (!(all = ao_rs_hgetall(sel->store, key, err, sizeof err)))
        ao_io_fail(io, "run store: %s", err);
    return all;
}

int sel_compare_of(const cJSON *all, const char *slot, struct ao_sel_cmp *c, char *why, size_t len)
{
    const cJSON *text = slot ? cJSON_GetObjectItemCaseSensitive(all, slot) : NULL;
    struct ao_result_msg r;
    char err[AO_ERRLEN];
    cJSON *j;
    int rc = 0;

    memset(c, 0, sizeof *c);
    if (!cJSON_IsString(text) || !(j = cJSON_Parse(text->valuestring)))
        return 0;
    if (ao_msg_decode(&ao_msg_result, j, &r, err, sizeof err) == 0) {
        enum ao_verdict v = ao_verdict_of(r.status);
        const cJSON *h = r.head_to_head;
        if (v == AO_V_OK && h) {
            c->speedup = ao_json_num(h, "speedup", NAN);
            c->low = ao_json_num(h, "speedup_low", NAN);
            c->high = ao_json_num(h, "speedup_high", NAN);
            c->have = c->speedup > 0 && c->low > 0 && c->high >= c->low;
            rc = c->have;
        } else if (v != AO_V_OK && v != AO_V_INTERNAL_ERROR && v != AO_V_LOST && v != AO_V_NONE) {
            /* measured again, the kernel failed: a flaky kernel is not kept */
            snprintf(why, len, "%s: %.300s", r.status, r.reason ? r.reason : "no reason given");
            rc = -1;
        }
        ao_msg_release(&ao_msg_result, &r);
    }
    cJSON_Delete(j);
    return rc;
}
