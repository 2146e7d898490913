/* runstate.c - a run's state: its fields, decoded and encoded whole */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "core/rc.h"
#include "core/util.h"

#include "state/runstate.h"

/* a field of kind AO_F_ENUM over phases + 1 holds 1 + the index there:
 * the phase itself */
static const char *const phases[] = {"none", "baseline", "collect", "compare", "memory", "final", "done", NULL};
_Static_assert(sizeof phases / sizeof phases[0] == AO_PHASE_COUNT + 1, "a name per phase");
_Static_assert(sizeof(enum ao_phase) == sizeof(int), "a phase is kept as an int (AO_F_ENUM)");

const char *ao_phase_name(enum ao_phase p)
{
    return p > AO_PHASE_NONE && p < AO_PHASE_COUNT ? phases[p] : phases[0];
}

/* required: what a run has from the moment its task is taken */
#define S(name, kind, req) {#name, kind, offsetof(struct ao_run_state, name), req, NULL}
static const struct ao_field fields[] = {
    {"phase", AO_F_ENUM, offsetof(struct ao_run_state, phase), 1, phases + 1},
    S(task, AO_F_STR, 1),          S(target, AO_F_STR, 1),         S(size, AO_F_STR, 1),
    S(task_path, AO_F_STR, 1),     S(task_sha256, AO_F_STR, 1),    S(baseline_sha256, AO_F_STR, 1),
    S(final_stop, AO_F_STR, 0),    S(final_kernel, AO_F_STR, 0),   S(stopped, AO_F_STR, 0),
    S(iter, AO_F_INT, 1),          S(completed, AO_F_INT, 1),      S(candidates, AO_F_INT, 1),
    S(kernels, AO_F_INT, 1),       S(failures, AO_F_INT, 1),       S(lost, AO_F_INT, 1),
    S(baseline_ns, AO_F_NUM, 0),   S(started, AO_F_NUM, 1),        S(opened, AO_F_NUM, 1),
    S(progress, AO_F_NUM, 0),      S(deadline, AO_F_NUM, 0),
    S(memory_deadline_missed, AO_F_BOOL, 0),
    S(history, AO_F_JSON, 1),      S(pairs, AO_F_JSON, 0),        S(compares, AO_F_JSON, 0),
    /* "config" is a record of its own (runconfig.h): decoded apart */
};
const struct ao_msg_type ao_rec_run_state = {"run state", sizeof(struct ao_run_state), fields,
                                             (int)(sizeof fields / sizeof fields[0])};

void ao_run_state_init(struct ao_run_state *s)
{
    ao_msg_init(&ao_rec_run_state, s);
    ao_msg_init(&ao_rec_run_config, &s->config);
}

void ao_run_state_release(struct ao_run_state *s)
{
    ao_run_config_release(&s->config);
    ao_msg_release(&ao_rec_run_state, s);
}

int ao_run_state_decode(const cJSON *j, struct ao_run_state *s, char *err, size_t errlen)
{
    cJSON *rest = cJSON_IsObject(j) ? cJSON_Duplicate(j, 1) : NULL, *config;
    struct ao_run_config c;

    ao_run_state_init(s);
    if (!cJSON_IsObject(j)) {
        snprintf(err, errlen, "the run state is not a JSON object");
        return -1;
    }
    config = cJSON_DetachItemFromObjectCaseSensitive(rest, "config");
    if (!config) {
        snprintf(err, errlen, "the run state has no config");
        goto fail;
    }
    if (ao_record_decode(&ao_rec_run_state, rest, s, err, errlen) < 0)
        goto fail;
    if (!cJSON_IsArray(s->history) || (s->pairs && !cJSON_IsArray(s->pairs)) ||
        (s->compares && !cJSON_IsArray(s->compares))) {
        snprintf(err, errlen, "the run state's %s is not an array",
                 !cJSON_IsArray(s->history) ? "history" : s->pairs && !cJSON_IsArray(s->pairs) ? "pairs" : "compares");
        goto fail;
    }
    if (s->iter < 0 || s->completed < 0 || s->candidates < 0 || s->kernels < 0 ||
        s->failures < 0 || s->lost < 0) {
        snprintf(err, errlen, "the run state has a negative count");
        goto fail;
    }
    if (ao_run_config_decode(config, &c, err, errlen) < 0)
        goto fail;
    s->config = c;
    cJSON_Delete(config);
    cJSON_Delete(rest);
    return 0;
fail:
    cJSON_Delete(config);
    cJSON_Delete(rest);
    ao_run_state_release(s);
    return -1;
}

cJSON *ao_run_state_json(const struct ao_run_state *s)
{
    cJSON *j = ao_msg_encode(&ao_rec_run_state, s);

    cJSON_AddItemToObject(j, "config", ao_run_config_json(&s->config));
    return j;
}

int ao_run_state_load(struct ao_runstore *rs, const char *run, struct ao_run_state *s, char *err,
                      size_t errlen)
{
    char why[AO_ERRLEN];
    const cJSON *j;
    int rc = ao_runstore_json_ref(rs, run, "state", &j, err, errlen);

    ao_run_state_init(s);
    if (rc <= 0)
        return rc;
    rc = ao_run_state_decode(j, s, why, sizeof why);
    if (rc < 0) {
        snprintf(err, errlen, "run '%.80s': its state does not read back (%s)", run, why);
        return AO_RC_CORRUPT;
    }
    return 1;
}

cJSON *ao_run_state_last(const struct ao_run_state *s)
{
    return cJSON_GetArrayItem(s->history, cJSON_GetArraySize(s->history) - 1);
}
