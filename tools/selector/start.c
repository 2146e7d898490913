/* start.c - a task message starts a run: its config, its task, its baseline */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/log.h"
#include "core/task.h"
#include "core/util.h"
#include "state/runstore.h"
#include "targets/target.h"
#include "wire/msg.h"
#include "wire/names.h"

#include "selector.h"

/* A run it will not start (a task its machine cannot load), said in the
 * run's own hash ("refused": the reason): `accelopt run` ends its wait on
 * that, never on a dead letter, which a replayed copy of the run's own
 * task message would bring too (issue 68). */
static int refuse(struct selector *sel, struct ao_io *io, const char *run, const char *reason)
{
    char key[AO_KEY_MAX], err[AO_ERRLEN];

    if (ao_name(key, sizeof key, AO_KEY_RUN, run) < 0)
        return 0; /* no run could have that id: nobody waits on it */
    if (ao_rs_hset(sel->store, key, "refused", reason[0] ? reason : "refused", err, sizeof err) < 0)
        return ao_io_fail(io, "run store: %s", err);
    return sel_save(sel, io);
}

int sel_on_task(struct selector *sel, struct ao_io *io, const cJSON *msg, char *reason,
                size_t len)
{
    const struct ao_target *target;
    struct ao_task_msg t;
    struct ao_task task;
    struct ao_kernel_msg k;
    struct ao_run_state st;
    cJSON *outbox = NULL;
    char path[600], hex[65], id[AO_ID_BUF], err[AO_ERRLEN], *src = NULL;
    const char *size;
    int rc = -1, have = -1;

    ao_msg_init(&ao_msg_kernel, &k);
    ao_run_state_init(&st);
    if (ao_msg_decode(&ao_msg_task, msg, &t, reason, len) < 0)
        return -1;
    if ((have = sel_load_state(sel, t.env.run, &st, io, reason, len)) < 0)
        goto out;
    if (have) {
        ao_info("run %s: already started; task message %s ignored", t.env.run, t.env.id);
        rc = 0;
        goto out;
    }
    if (!(target = ao_target_get(t.env.target, reason, len)))
        goto out;
    if (ao_name(path, sizeof path, "%s", t.spec ? t.spec : t.env.task) < 0) {
        snprintf(reason, len, "the task's path is over %zu bytes", sizeof path - 1);
        goto out;
    }
    if (ao_task_find(path, &task, err, sizeof err) < 0) {
        snprintf(reason, len, "task '%.60s': %s", t.env.task, err);
        goto out;
    }
    size = t.size ? t.size : ao_config_str(sel->cfg, "size");
    {
        long long dims[AO_MAX_DIMS];
        char p2[700];
        if (ao_task_size(&task, size, dims, err, sizeof err) < 0) {
            snprintf(reason, len, "%s", err);
            goto out;
        }
        if (ao_name(p2, sizeof p2, "%s/baseline.%s", task.dir, target->ext) < 0 ||
            !(src = ao_read_file(p2, NULL, err, sizeof err))) {
            snprintf(reason, len, "task '%.60s' has no baseline: %s", t.env.task, err);
            goto out;
        }
    }
    if (sel_run_config(sel, t.config, &st.config, reason, len) < 0)
        goto out;
    ao_sha256_hex(src, strlen(src), hex);
    st.phase = AO_PHASE_BASELINE;
    st.iter = st.completed = st.kernels = st.failures = st.lost = 0;
    st.candidates = 1;
    st.started = st.opened = sel_now_s();
    st.task = ao_strdup(t.env.task);
    st.target = ao_strdup(t.env.target);
    st.size = ao_strdup(size);
    st.task_path = ao_strdup(task.dir);
    st.task_sha256 = ao_strdup(task.sha256);
    st.baseline_sha256 = ao_strdup(hex); /* the one kernel iteration 0 takes */
    st.history = cJSON_CreateArray();
    outbox = cJSON_CreateArray();
    /* iteration 0: the baseline, profiled like any kernel */
    if (ao_name(id, sizeof id, AO_ID_KERNEL, t.env.run, 0LL, "0.0.0") < 0)
        goto too_long; /* (a run id is at most AO_RUN_ID_MAX: it fits) */
    k.size = ao_strdup(size);
    k.sha256 = ao_strdup(hex);
    k.slot = ao_strdup("0.0.0");
    k.task_path = ao_strdup(task.dir);
    k.task_sha256 = ao_strdup(task.sha256);
    k.plan_text = ao_strdup("the baseline");
    sel_env_from(&k.env, "kernel", id, t.env.run, &st, 0);
    k.source = src;
    src = NULL;
    {
        char topic[AO_TOPIC_MAX];
        if (ao_name(topic, sizeof topic, AO_TOPIC_KERNELS, target->name) < 0)
            goto too_long;
        sel_out_add(outbox, topic, &ao_msg_kernel, &k);
    }
    if (ao_rs_sadd(sel->store, AO_KEY_ACTIVE, t.env.run, err, sizeof err) < 0) {
        rc = ao_io_fail(io, "run store: %s", err);
        goto out;
    }
    ao_info("run %s: %s at %s, baseline sent", t.env.run, t.env.task, size);
    {
        struct ao_beam none = {0}; /* the baseline's result makes the first */
        rc = sel_step(sel, io, t.env.run, &st, &none, outbox);
    }
    goto out;
too_long:
    rc = ao_io_fail(io, "run %.40s: its kernel's id or topic is too long", t.env.run);
out:
    if (rc < 0 && have == 0 && !io->err[0])
        refuse(sel, io, t.env.run, reason);
    free(src);
    ao_run_state_release(&st);
    cJSON_Delete(outbox);
    ao_msg_release(&ao_msg_kernel, &k);
    ao_msg_release(&ao_msg_task, &t);
    return rc;
}
