/* runconfig.c - a run's config: its fields, their bounds, decoded once */
#include <ctype.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "wire/runconfig.h"

_Static_assert(sizeof(enum ao_plan_mode) == sizeof(int), "a plan mode is kept as an int (AO_F_ENUM)");

static const char *const plan_modes[] = {"distinct", "independent", NULL};

#define C(name, kind) {#name, kind, offsetof(struct ao_run_config, name), 0, NULL}
static const struct ao_field fields[] = {
    C(beam, AO_F_INT),    C(plans, AO_F_INT),   C(samples, AO_F_INT),       C(iters, AO_F_INT),
    C(topk, AO_F_INT),    C(expn, AO_F_INT),    C(seed, AO_F_INT),          C(fix_attempts, AO_F_INT),
    C(budget_tokens, AO_F_INT), C(compare, AO_F_INT),
    C(memory_deadline_s, AO_F_NUM), C(slot_deadline_s, AO_F_NUM), C(budget_usd, AO_F_NUM),
    C(wall_s, AO_F_NUM),  C(memory_scope, AO_F_STR),
    {"plan_mode", AO_F_ENUM, offsetof(struct ao_run_config, plan_mode), 0, plan_modes},
    C(models, AO_F_JSON),
};
const struct ao_msg_type ao_rec_run_config = {"config", sizeof(struct ao_run_config), fields,
                                              (int)(sizeof fields / sizeof fields[0])};

/* the numbers' bounds; whole: no fraction */
static const struct bound {
    const char *name;
    double lo, hi;
    int whole;
} bounds[] = {
    {"beam", 1, AO_MAX_BEAM, 1},        {"plans", 1, AO_MAX_PLANS, 1},
    {"samples", 1, AO_MAX_SAMPLES, 1},  {"iters", 0, 10000, 1},
    {"topk", 0, 64, 1},                 {"expn", 1, 100000, 1},
    {"seed", 0, 1e15, 1},               {"fix_attempts", 0, AO_MAX_FIX_ATTEMPTS, 1},
    {"budget_tokens", 0, 1e15, 1},      {"compare", 0, 1, 1},
    {"memory_deadline_s", 0, 1e7, 0},   {"slot_deadline_s", 0.1, 1e7, 0},
    {"budget_usd", 0, 1e9, 0},          {"wall_s", 0, 1e9, 0},
};

static const char *const roles[] = {"planner", "executor", "summarizer"}; /* of models */

static int check_models(const cJSON *m, char *err, size_t errlen);

int ao_run_config_decode(const cJSON *j, struct ao_run_config *c, char *err, size_t errlen)
{
    ao_msg_init(&ao_rec_run_config, c);
    if (!j)
        return 0;
    if (!cJSON_IsObject(j)) {
        snprintf(err, errlen, "config must be an object");
        return -1;
    }
    for (size_t i = 0; i < sizeof bounds / sizeof bounds[0]; i++) {
        const struct bound *b = &bounds[i];
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, b->name);
        if (!v || cJSON_IsNull(v))
            continue;
        if (!cJSON_IsNumber(v) || (b->whole && v->valuedouble != floor(v->valuedouble)) ||
            !(v->valuedouble >= b->lo && v->valuedouble <= b->hi)) {
            snprintf(err, errlen, "config '%s' must be %s from %g to %g", b->name,
                     b->whole ? "a whole number" : "a number", b->lo, b->hi);
            return -1;
        }
    }
    if (ao_record_decode(&ao_rec_run_config, j, c, err, errlen) < 0)
        return -1;
    if (c->memory_scope && (!c->memory_scope[0] || strlen(c->memory_scope) > 64)) {
        snprintf(err, errlen, "config 'memory_scope' must be 1 to 64 characters");
        ao_run_config_release(c);
        return -1;
    }
    if (c->models && check_models(c->models, err, errlen) < 0) {
        ao_run_config_release(c);
        return -1;
    }
    return 0;
}

int ao_model_name_ok(const char *s)
{
    size_t n = s ? strlen(s) : 0;

    if (n < 1 || n > 128)
        return 0;
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && !strchr("._:/@+-", *s))
            return 0;
    return 1;
}

/* models: an object of roles, each a model name (only names: a URL or a
 * key never comes with a message, so a run cannot send a stage's key
 * elsewhere) */
static int check_models(const cJSON *m, char *err, size_t errlen)
{
    const cJSON *v;

    if (!cJSON_IsObject(m))
        return snprintf(err, errlen, "config 'models' must be an object of roles"), -1;
    cJSON_ArrayForEach(v, m) {
        size_t r = 0;
        while (r < sizeof roles / sizeof roles[0] && strcmp(roles[r], v->string) != 0)
            r++;
        if (r == sizeof roles / sizeof roles[0])
            return snprintf(err, errlen, "config 'models' takes planner, executor and summarizer, "
                            "not '%.40s'", v->string), -1;
        if (!cJSON_IsString(v) || !ao_model_name_ok(v->valuestring))
            return snprintf(err, errlen, "config 'models' '%s' must be a model name: 1 to 128 of "
                            "letters, digits and ._:/@+-", v->string), -1;
    }
    return 0;
}

const char *ao_run_config_model(const struct ao_run_config *c, const char *role)
{
    const cJSON *v = c->models ? cJSON_GetObjectItemCaseSensitive(c->models, role) : NULL;
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

int ao_run_config_bounds(const char *name, double *lo, double *hi)
{
    for (size_t i = 0; i < sizeof bounds / sizeof bounds[0]; i++)
        if (strcmp(bounds[i].name, name) == 0) {
            *lo = bounds[i].lo;
            *hi = bounds[i].hi;
            return 1;
        }
    return 0;
}

void ao_run_config_release(struct ao_run_config *c)
{
    ao_msg_release(&ao_rec_run_config, c);
}

cJSON *ao_run_config_json(const struct ao_run_config *c)
{
    return ao_msg_encode(&ao_rec_run_config, c);
}
