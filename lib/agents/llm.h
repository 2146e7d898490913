/* llm.h - the model client: OpenAI-compatible chat completions over libcurl,
 * configured per role, with one retry layer and token/cost accounting */
#ifndef AO_LLM_H
#define AO_LLM_H

#include <stddef.h>

#include "core/config.h"

/* The options of one role ("planner", "executor", "summarizer").  Each has a
 * shared llm-* form (ACCELOPT_LLM_URL...) and a per-role override
 * (--planner-url, ACCELOPT_PLANNER_URL...); the role's value wins. */
#define AO_LLM_ROLE_OPTIONS(R)                                                                 \
    {R "-url", 0, AO_OPT_STR, NULL, "URL", "this role's model server (overrides llm-url)"},   \
    {R "-model", 0, AO_OPT_STR, NULL, "NAME", "this role's model (overrides llm-model)"},     \
    {R "-models", 0, AO_OPT_STR, NULL, "LIST", "the other models of this role's server a run may name (overrides llm-models)"}, \
    {R "-key", 0, AO_OPT_STR, NULL, "KEY", "this role's API key (prefer the key file)"},      \
    {R "-key-file", 0, AO_OPT_STR, NULL, "FILE", "read this role's API key from FILE"},       \
    {R "-temperature", 0, AO_OPT_NUM, NULL, "T", "this role's sampling temperature"},          \
    {R "-max-tokens", 0, AO_OPT_INT, NULL, "N", "this role's completion token limit"},         \
    {R "-timeout", 0, AO_OPT_NUM, NULL, "SEC", "this role's request timeout"},                 \
    {R "-price-in", 0, AO_OPT_NUM, NULL, "USD", "this role's price per million prompt tokens"}, \
    {R "-price-out", 0, AO_OPT_NUM, NULL, "USD", "this role's price per million completion tokens"}

/* Another role's options: accepted (so one config file serves every stage)
 * but unused and hidden from --help. */
#define AO_LLM_OTHER_ROLE_OPTIONS(R)                                                    \
    {R "-url", 0, AO_OPT_STR, NULL, "URL", NULL},                                       \
    {R "-model", 0, AO_OPT_STR, NULL, "NAME", NULL},                                    \
    {R "-models", 0, AO_OPT_STR, NULL, "LIST", NULL},                                   \
    {R "-key", 0, AO_OPT_STR, NULL, "KEY", NULL},                                       \
    {R "-key-file", 0, AO_OPT_STR, NULL, "FILE", NULL},                                 \
    {R "-temperature", 0, AO_OPT_NUM, NULL, "T", NULL},                                 \
    {R "-max-tokens", 0, AO_OPT_INT, NULL, "N", NULL},                                  \
    {R "-timeout", 0, AO_OPT_NUM, NULL, "SEC", NULL},                                   \
    {R "-price-in", 0, AO_OPT_NUM, NULL, "USD", NULL},                                  \
    {R "-price-out", 0, AO_OPT_NUM, NULL, "USD", NULL}

/* The model server's settings (AO_LLM_OPTIONS less the concurrency, which
 * accelopt run spells its own way) */
#define AO_LLM_SERVER_OPTIONS                                                                   \
    {"llm-url", 0, AO_OPT_STR, NULL, "URL", "OpenAI-compatible base URL, e.g. http://127.0.0.1:8000/v1 " \
     "(unset: the builtin model)"},                                                            \
    {"llm-model", 0, AO_OPT_STR, NULL, "NAME", "model name; 'builtin' is the offline knob search"}, \
    {"llm-models", 0, AO_OPT_STR, NULL, "LIST", "other models of the same server, comma-separated, that a " \
     "submitted run may name for a role (accelopt submit --llm-model); the same key and settings"}, \
    {"llm-key", 0, AO_OPT_STR, NULL, "KEY", "API key (prefer --llm-key-file: argv is visible)"}, \
    {"llm-key-file", 0, AO_OPT_STR, NULL, "FILE", "read the API key from FILE"},               \
    {"llm-temperature", 0, AO_OPT_NUM, "0.7", "T", "sampling temperature"},                    \
    {"llm-max-tokens", 0, AO_OPT_INT, "8192", "N", "completion token limit per call"},         \
    {"llm-timeout", 0, AO_OPT_NUM, "600", "SEC", "limit for one request, however much it streams"}, \
    {"llm-stall", 0, AO_OPT_NUM, "120", "SEC", "a request that has received nothing for SEC is given up " \
     "and tried again (replies are streamed; 0: only --llm-timeout)"},                       \
    {"llm-price-in", 0, AO_OPT_NUM, "0", "USD", "price per million prompt tokens"},            \
    {"llm-price-out", 0, AO_OPT_NUM, "0", "USD", "price per million completion tokens"},       \
    {"llm-attempts", 0, AO_OPT_INT, "3", "N", "attempts per call before the slot fails"},      \
    {"llm-backoff", 0, AO_OPT_NUM, "1", "SEC", "first retry delay (doubles, full jitter, at most 60 s)"}

#define AO_LLM_OPTIONS                                                                          \
    AO_LLM_SERVER_OPTIONS,                                                                      \
    {"model-concurrency", 0, AO_OPT_INT, "16", "C", "model calls in flight to one server at most, every " \
     "stage that shares the redis together (without --redis: this process's one)"}

struct ao_llm_conf {
    char role[16];
    char *url, *model, *key; /* key: wiped when released */
    char *models;            /* "a,b": the other models a run may name (NULL: none) */
    int builtin;             /* the offline model: no URL, or model "builtin" */
    double temperature, timeout_s, price_in, price_out, backoff_s;
    double stall_s; /* nothing received for this long: the attempt is dead (0: no such limit) */
    long max_tokens;
    int attempts;
    int concurrency; /* calls in flight to the server, all stages sharing the redis */
};

/* Fill o for a role from a tool's config (which must hold AO_LLM_OPTIONS
 * and AO_LLM_ROLE_OPTIONS(role)).  0, or -1 + err on a usage error. */
int ao_llm_conf_from_config(const struct ao_config *c, const char *role, struct ao_llm_conf *o,
                            char *err, size_t errlen);
void ao_llm_conf_release(struct ao_llm_conf *o);
/* Does the role's server serve this model to a run that names it: its own
 * model, or one of --llm-models (the builtin serves only "builtin")?  1/0. */
int ao_llm_conf_serves(const struct ao_llm_conf *o, const char *model);
/* Is model one of "a,b,c" (a list as --llm-models keeps it; NULL: none)? */
int ao_models_listed(const char *list, const char *model);

/* What calls cost: tokens of every attempt the server answered, and dollars. */
struct ao_llm_usage {
    long long prompt, completion;
    double cost_usd;
    int calls, attempts;
};

void ao_llm_usage_add(struct ao_llm_usage *to, const struct ao_llm_usage *u);

struct ao_llm;
struct ao_gate;

/* A client for one role (one reused curl handle).  NULL + err. */
struct ao_llm *ao_llm_new(const struct ao_llm_conf *conf, char *err, size_t errlen);
void ao_llm_free(struct ao_llm *l);
/* Every attempt of a call takes a slot of g first (gate.h), and a 429's
 * Retry-After pauses g for all; NULL: no gate (the default). */
void ao_llm_set_gate(struct ao_llm *l, struct ao_gate *g);

/* One chat completion (a system and a user message), its reply streamed
 * (server-sent events; a server that answers in one piece is read as
 * such), retried per the policy: connection errors, timeouts, a stall
 * (nothing received for stall_s), 408, 409, 429 and 5xx, replies cut off at the
 * token limit and replies that do not parse are retried with exponential
 * backoff and full jitter (Retry-After honoured up to 120 s); auth and quota
 * errors are not.  Returns 0 with *reply (malloc'd text), or -1 with err.
 * u (added to, never reset) counts every answered attempt either way. */
int ao_llm_chat(struct ao_llm *l, const char *system, const char *user, char **reply,
                struct ao_llm_usage *u, char *err, size_t errlen);
/* Told of each failed attempt that is tried again ("attempt 1 of 3 ...:
 * retrying in 1.2 s"), as it happens: a caller says so where the user
 * looks, not only after the last attempt. */
struct ao_llm_watch {
    void (*retrying)(void *ctx, const char *what);
    void *ctx;
};
/* The same, asking the server for another of its models (NULL: the role's),
 * with a watch (NULL: none). */
int ao_llm_chat_as(struct ao_llm *l, const char *model, const char *system, const char *user,
                   char **reply, struct ao_llm_usage *u, const struct ao_llm_watch *w, char *err,
                   size_t errlen);

/* Is the role's server there, does it take the key, does it serve the
 * model?  One GET of URL/models (10 s at most): 0 when it answers with a
 * list holding the model, or cannot list models (404, 405, 501: nothing
 * more is learned without spending a call); AO_RC_SETTING + a one-line err (no key in
 * it) when the settings are wrong: it refuses the key (401, 403) or lists
 * models without this one (trying again will not help); -1 + err when it
 * is unreachable or answers anything else. */
int ao_llm_probe(const struct ao_llm_conf *conf, char *err, size_t errlen);

/* Replace every occurrence of the key in s (in place) by "[key]"; texts that
 * came from a server may echo it. */
void ao_llm_redact(const struct ao_llm *l, char *s);

#endif
