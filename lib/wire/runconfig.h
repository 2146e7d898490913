/* runconfig.h - a run's config (schemas/config.json): set by `accelopt
 * run`, carried by the task message and every message after it, completed
 * by the selector with its defaults.  One struct, decoded by the field
 * tables of msg.h, its bounds in one table: every stage checks a config
 * where it enters (ao_msg_decode), none reads it by key name. */
#ifndef AO_RUNCONFIG_H
#define AO_RUNCONFIG_H

#include <cjson/cJSON.h>

#include "wire/record.h"

#define AO_MAX_BEAM 64
#define AO_MAX_PLANS 64
#define AO_MAX_SAMPLES 16
#define AO_MAX_FIX_ATTEMPTS 8

enum ao_plan_mode { AO_PLAN_MODE_NONE, AO_PLAN_DISTINCT, AO_PLAN_INDEPENDENT };

/* Absent fields are AO_ABSENT_INT, NAN, NULL and AO_PLAN_MODE_NONE. */
struct ao_run_config {
    long long beam, plans, samples, iters, topk, expn, seed, fix_attempts, budget_tokens;
    long long compare; /* 1: a child decides only head to head with its parent (issue 47); 0: on its own measurement */
    double memory_deadline_s, slot_deadline_s, budget_usd, wall_s;
    char *memory_scope;        /* target, task, none or a name */
    enum ao_plan_mode plan_mode;
    cJSON *models;             /* {"planner": NAME, ...}: the run's own model per role, which
                                * a stage uses only when it serves it (its --llm-models) */
};

extern const struct ao_msg_type ao_rec_run_config;

/* Decode j (a JSON object, or NULL: all absent) into c: each field of its
 * type and within its bounds, no other field.  0, or -1 + err ("config
 * 'beam' must be ..."; c released). */
int ao_run_config_decode(const cJSON *j, struct ao_run_config *c, char *err, size_t errlen);
void ao_run_config_release(struct ao_run_config *c);
/* The bounds of a numeric field (schemas/config.json says the same; the
 * schema test compares them).  1, or 0 for a field without bounds. */
int ao_run_config_bounds(const char *name, double *lo, double *hi);
/* The model the run names for a role (planner, executor, summarizer), or
 * NULL: the stage's own. */
const char *ao_run_config_model(const struct ao_run_config *c, const char *role);
/* Is s a model name a run may carry: 1 to 128 of [A-Za-z0-9._:/@+-],
 * nothing a URL, a header or a terminal would read otherwise?  1 or 0. */
int ao_model_name_ok(const char *s);

/* c as a JSON object (absent fields left out). */
cJSON *ao_run_config_json(const struct ao_run_config *c);

#endif
