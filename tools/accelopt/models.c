/* models.c - accelopt run's model settings: taken as flags, from the
 * config file or the environment (the names of docs/MODELS.md), checked
 * before anything starts, handed to the stages by their environment, and
 * each model server asked once whether it is there, takes the key and
 * serves the model */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "agents/llm.h"
#include "core/exitcode.h"
#include "core/log.h"
#include "core/util.h"
#include "wire/names.h"
#include "wire/runconfig.h"
#include "models.h"

static const char *const roles[] = {"planner", "executor", "summarizer"};
#define NROLES 3

/* Is this option a model setting that run hands to the stages? */
static int is_model_option(const char *name)
{
    if (strncmp(name, "llm-", 4) == 0)
        return 1;
    for (int r = 0; r < NROLES; r++) {
        size_t n = strlen(roles[r]);
        if (strncmp(name, roles[r], n) == 0 && name[n] == '-')
            return 1;
    }
    return 0;
}

static int is_key_option(const char *name)
{
    size_t n = strlen(name);
    return n >= 4 && strcmp(name + n - 4, "-key") == 0;
}

int run_model_secret(const char *name)
{
    return is_model_option(name) && is_key_option(name);
}

int run_model_settings(const struct ao_config *c, char *err, size_t errlen)
{
    struct ao_llm_conf conf;

    for (int i = 0; i < c->nopts; i++) {
        const char *name = c->opts[i].name;
        if (run_model_secret(name) && strcmp(ao_config_source(c, name), "flag") == 0)
            return ao_errf(err, errlen, "--%s puts the key where every user of the machine can read it "
                           "(the command line): use --%s-file FILE or ACCELOPT_%s", name, name,
                           strncmp(name, "llm", 3) == 0 ? "LLM_KEY" : "<ROLE>_KEY");
    }
    for (int r = 0; r < NROLES; r++) {
        if (ao_llm_conf_from_config(c, roles[r], &conf, err, errlen) < 0) {
            char e[AO_ERRLEN];
            snprintf(e, sizeof e, "%s", err);
            return ao_errf(err, errlen, "the %s's model: %s", roles[r], e);
        }
        ao_llm_conf_release(&conf);
    }
    /* the stages read the same names from their environment */
    for (int i = 0; i < c->nopts; i++) {
        const char *name = c->opts[i].name, *v = c->values[i], *src = ao_config_source(c, name);
        char var[128] = "ACCELOPT_";
        size_t n = strlen(var);
        if (!is_model_option(name) || !v || strcmp(src, "default") == 0 || strcmp(src, "env") == 0)
            continue;
        for (const char *p = name; *p && n < sizeof var - 1; p++)
            var[n++] = *p == '-' ? '_' : (char)toupper((unsigned char)*p);
        var[n] = '\0';
        if (setenv(var, v, 1) < 0)
            return ao_errf(err, errlen, "cannot set %s: %s", var, strerror(errno));
    }
    return 0;
}

int run_model_probe(const struct ao_config *c, char *err, size_t errlen)
{
    struct ao_llm_conf conf[NROLES];
    int rc = 0, n = 0;

    for (int r = 0; r < NROLES && rc == 0; r++) {
        int seen = 0;
        if (ao_llm_conf_from_config(c, roles[r], &conf[n], err, errlen) < 0)
            return -1; /* run_model_settings let it through: cannot happen */
        for (int k = 0; k < n && !seen; k++) /* one server, model and key: asked once */
            seen = !conf[n].builtin && !conf[k].builtin && strcmp(conf[k].url, conf[n].url) == 0 &&
                   strcmp(conf[k].model, conf[n].model) == 0 &&
                   (conf[k].key ? conf[n].key && strcmp(conf[k].key, conf[n].key) == 0 : !conf[n].key);
        if (!seen && !conf[n].builtin)
            rc = ao_llm_probe(&conf[n], err, errlen);
        n++;
    }
    for (int k = 0; k < n; k++)
        ao_llm_conf_release(&conf[k]);
    return rc;
}

cJSON *submit_models(const struct ao_config *c, char *err, size_t errlen)
{
    cJSON *m = NULL;

    err[0] = '\0';
    for (int r = 0; r < NROLES; r++) {
        char name[32];
        const char *v;
        snprintf(name, sizeof name, "%s-model", roles[r]);
        if (!(v = ao_config_str(c, name)) && !(v = ao_config_str(c, "llm-model")))
            continue;
        if (!ao_model_name_ok(v)) {
            cJSON_Delete(m);
            ao_errf(err, errlen, "--%s: '%.60s' is not a model name (1 to 128 of letters, digits and "
                    "._:/@+-; a run names a model, and the stages know its server)",
                    ao_config_str(c, name) ? name : "llm-model", v);
            return NULL;
        }
        if (!m)
            m = cJSON_CreateObject();
        cJSON_AddStringToObject(m, roles[r], v);
    }
    return m;
}

int submit_models_served(struct ao_redis *r, const cJSON *models, char *err, size_t errlen)
{
    const cJSON *v;

    cJSON_ArrayForEach(v, models) {
        char key[AO_KEY_MAX], e[AO_ERRLEN];
        const char *argv[2] = {"GET", key};
        redisReply *rep;
        int rc = 0;
        if (!ao_redis_key(r, key, sizeof key, AO_KEY_MODELS, v->string))
            return ao_errf(err, errlen, "redis key too long");
        if (!(rep = ao_redis_argv(r, 2, argv, NULL, e, sizeof e)))
            return ao_errf(err, errlen, "cannot ask which models the stages serve: %s", e);
        if (rep->type != REDIS_REPLY_STRING)
            ao_warn("no %s stage has said which models it serves yet; each refuses a model it does not "
                    "serve when it comes to the run", v->string);
        else if (!ao_models_listed(rep->str, v->valuestring))
            rc = ao_errf(err, errlen, "the %s stages do not serve the model '%s' (they serve: %.300s); "
                         "an operator adds one to their --llm-models", v->string, v->valuestring, rep->str);
        freeReplyObject(rep);
        if (rc < 0)
            return -1;
    }
    return 0;
}
