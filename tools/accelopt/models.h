/* models.h - accelopt run's model settings (models.c) */
#ifndef AO_FRONT_MODELS_H
#define AO_FRONT_MODELS_H

#include <stddef.h>

#include "agents/llm.h"
#include "core/config.h"

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
 * (ao_llm_probe).  0, or -1 + a one-line err. */
int run_model_probe(const struct ao_config *c, char *err, size_t errlen);

#endif
