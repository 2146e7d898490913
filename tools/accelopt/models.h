/* models.h - accelopt run's model settings (models.c) */
#ifndef AO_FRONT_MODELS_H
#define AO_FRONT_MODELS_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "agents/llm.h"
#include "core/config.h"
#include "core/redis.h"

/* The model settings accelopt run takes: the shared ones and each agent
 * role's (a key itself only from the environment or the config file, never
 * the command line) */
#define RUN_MODEL_OPTIONS                                                        \
    AO_LLM_SERVER_OPTIONS, AO_LLM_ROLE_OPTIONS("planner"), AO_LLM_ROLE_OPTIONS("executor"), \
        AO_LLM_ROLE_OPTIONS("summarizer")

/* Check the model settings of every role as its stage will (a key given on
 * the command line, a model without a server, an unreadable key file) and
 * put those given as flags or in the config file in the environment the
 * stages inherit.  0, or -1 + err: a usage error. */
int run_model_settings(const struct ao_config *c, char *err, size_t errlen);

/* Is the option a key (never written down: run.conf, logs)? */
int run_model_secret(const char *name);

/* Ask each model server the roles use, once per server, model and key
 * (ao_llm_probe).  0, or -1 (unreachable) or AO_RC_SETTING (a refused key, a model
 * it lacks) + a one-line err. */
int run_model_probe(const struct ao_config *c, char *err, size_t errlen);

/* The models accelopt submit's run names (names only: the stages call
 * their own servers with their own keys, and a URL or a key never goes on
 * a topic): --llm-model for every role, --<role>-model for one */
#define SUBMIT_MODEL_OPTIONS                                                                  \
    {"llm-model", 0, AO_OPT_STR, NULL, "NAME", "the run's model for every role: one the stages " \
     "serve (their own, or one of their --llm-models)"},                                      \
    {"planner-model", 0, AO_OPT_STR, NULL, "NAME", "the run's planner model (overrides llm-model)"}, \
    {"executor-model", 0, AO_OPT_STR, NULL, "NAME", "the run's executor model (overrides llm-model)"}, \
    {"summarizer-model", 0, AO_OPT_STR, NULL, "NAME", "the run's summarizer model (overrides llm-model)"}

/* The run config's "models" from those options: a new object, or NULL
 * with err "" when none is set; NULL + err when one is not a model name
 * (a usage error). */
cJSON *submit_models(const struct ao_config *c, char *err, size_t errlen);

/* Do the deployment's stages serve them?  Each role's stages say what
 * they serve at start (models:<role>).  0; -1 + err when a role's stages
 * do not serve the run's model; a role whose stages said nothing yet is
 * let through with a warning (its stages check every call anyway). */
int submit_models_served(struct ao_redis *r, const cJSON *models, char *err, size_t errlen);

#endif
