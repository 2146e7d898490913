/* llm.c - the model client: OpenAI-compatible chat completions over libcurl */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <cjson/cJSON.h>
#include <curl/curl.h>

#include "agents/flight.h"
#include "agents/gate.h"
#include "agents/llm.h"
#include "core/alloc.h"
#include "core/fiber.h"
#include "core/log.h"
#include "core/rc.h"
#include "core/signals.h"
#include "core/util.h"
#include "wire/msg.h"
#include "wire/runconfig.h"

#define MAX_REPLY (8u << 20)     /* a chat reply larger than this is refused */
#define RETRY_AFTER_MAX 120.0    /* seconds */
#define BACKOFF_MAX 60.0         /* seconds */

/* One call's transfer: a handle set up as the client's, and what came
 * back.  A process may have several calls in flight (agents/flight.h);
 * idle ones are kept for the next calls, with their connections. */
struct xfer {
    struct ao_llm *l;
    CURL *curl;
    struct ao_buf body;
    double retry_after; /* from the last response; < 0 when absent */
    struct xfer *next;  /* idle list */
};

struct ao_llm {
    struct ao_llm_conf conf; /* borrowed strings from the caller's conf */
    CURL *curl;              /* the settings every transfer copies */
    struct curl_slist *headers;
    char endpoint[1024];
    struct xfer *idle;
    unsigned long long rng;
    struct ao_gate *gate;    /* the server's calls in flight, shared (NULL: none) */
};

void ao_llm_set_gate(struct ao_llm *l, struct ao_gate *g)
{
    l->gate = g;
}

/* --- configuration ----------------------------------------------------- */

static const char *role_str(const struct ao_config *c, const char *role, const char *what)
{
    char name[64];
    const char *v;

    snprintf(name, sizeof name, "%s-%s", role, what);
    if ((v = ao_config_str(c, name)))
        return v;
    snprintf(name, sizeof name, "llm-%s", what);
    return ao_config_str(c, name);
}

static char *read_key_file(const char *path, char *err, size_t errlen)
{
    char e[AO_ERRLEN];
    char *k = ao_read_file(path, NULL, e, sizeof e);
    size_t n;

    if (!k) {
        snprintf(err, errlen, "cannot read the key file '%s': %s", path, e);
        return NULL;
    }
    n = strlen(k);
    while (n > 0 && isspace((unsigned char)k[n - 1]))
        k[--n] = '\0';
    if (n == 0) {
        snprintf(err, errlen, "the key file '%s' is empty", path);
        free(k);
        return NULL;
    }
    return k;
}

/* --llm-models: names a run may carry (runconfig.h), comma-separated; kept
 * without the spaces around them */
static int check_models(const char *list, struct ao_llm_conf *o, const char *role, char *err,
                        size_t errlen)
{
    struct ao_buf b = {0};
    const char *p = list;

    if (o->builtin)
        return ao_errf(err, errlen, "--llm-models (--%s-models) lists other models of the %s's server, "
                       "and the %s's model is the builtin, which has none", role, role, role);
    while (*p) {
        char name[160];
        size_t n;
        p += strspn(p, " ");
        n = strcspn(p, ",");
        snprintf(name, sizeof name, "%.*s", (int)(n < sizeof name ? n : sizeof name - 1), p);
        for (size_t k = strlen(name); k > 0 && name[k - 1] == ' '; k--)
            name[k - 1] = '\0';
        if (!ao_model_name_ok(name)) {
            free(b.data);
            return ao_errf(err, errlen, "--llm-models: '%.60s' is not a model name (1 to 128 of letters, "
                           "digits and ._:/@+-)", name);
        }
        ao_buf_printf(&b, "%s%s", b.len ? "," : "", name);
        p += n + (p[n] == ',');
    }
    o->models = b.data; /* NULL: an empty list */
    return 0;
}

int ao_llm_conf_from_config(const struct ao_config *c, const char *role, struct ao_llm_conf *o,
                            char *err, size_t errlen)
{
    const char *url = role_str(c, role, "url"), *model = role_str(c, role, "model");
    const char *v;
    char name[64];

    memset(o, 0, sizeof *o);
    snprintf(o->role, sizeof o->role, "%s", role);
    o->builtin = (model && strcmp(model, "builtin") == 0) || (!url && !model);
    if (!url && !o->builtin) {
        snprintf(err, errlen, "model '%s' needs a server: set --%s-url or ACCELOPT_LLM_URL "
                 "(or use the model 'builtin')", model, role);
        return -1;
    }
    if (!o->builtin && !model) {
        snprintf(err, errlen, "a model server is set but no model: set --%s-model or "
                 "ACCELOPT_LLM_MODEL", role);
        return -1;
    }
    o->model = ao_strdup(o->builtin ? "builtin" : model);
    o->url = url ? ao_strdup(url) : NULL;
    if ((v = role_str(c, role, "models")) && check_models(v, o, role, err, errlen) < 0)
        goto fail;
    /* the key: the role's own, its file, the shared one, the shared file */
    snprintf(name, sizeof name, "%s-key", role);
    if ((v = ao_config_str(c, name)))
        o->key = ao_strdup(v);
    else if ((snprintf(name, sizeof name, "%s-key-file", role), v = ao_config_str(c, name)) ||
             (!ao_config_str(c, "llm-key") && (v = ao_config_str(c, "llm-key-file")))) {
        if (!(o->key = read_key_file(v, err, errlen)))
            goto fail;
    } else if ((v = ao_config_str(c, "llm-key")))
        o->key = ao_strdup(v);
#define NUM(field, what)                                                  \
    do {                                                                  \
        const char *s = role_str(c, role, what);                          \
        o->field = s ? strtod(s, NULL) : 0;                               \
    } while (0)
    NUM(temperature, "temperature");
    NUM(timeout_s, "timeout");
    NUM(price_in, "price-in");
    NUM(price_out, "price-out");
#undef NUM
    v = role_str(c, role, "max-tokens");
    o->max_tokens = v ? strtol(v, NULL, 10) : 0;
    o->attempts = (int)ao_config_int(c, "llm-attempts");
    o->backoff_s = ao_config_num(c, "llm-backoff");
    o->stall_s = ao_config_num(c, "llm-stall");
    v = ao_config_str(c, "model-concurrency"); /* accelopt run has its own, unset by default */
    o->concurrency = v ? (int)strtol(v, NULL, 10) : 16;
    if (o->concurrency < 1 || o->concurrency > 4096) {
        snprintf(err, errlen, "--model-concurrency must be 1 to 4096");
        goto fail;
    }
    if (o->attempts < 1 || o->attempts > 100 || o->max_tokens < 1 || o->timeout_s <= 0 ||
        o->temperature < 0 || o->price_in < 0 || o->price_out < 0 || o->backoff_s < 0 || o->stall_s < 0) {
        snprintf(err, errlen, "bad %s model settings: attempts 1-100, max-tokens >= 1, "
                 "timeout > 0, temperature, prices, backoff and stall >= 0", role);
        goto fail;
    }
    if (o->url && strncmp(o->url, "http://", 7) != 0 && strncmp(o->url, "https://", 8) != 0) {
        snprintf(err, errlen, "the %s URL must start with http:// or https://", role);
        goto fail;
    }
    return 0;
fail:
    ao_llm_conf_release(o);
    return -1;
}

void ao_llm_conf_release(struct ao_llm_conf *o)
{
    if (o->key) {
        memset(o->key, 0, strlen(o->key));
        free(o->key);
    }
    free(o->url);
    free(o->model);
    free(o->models);
    memset(o, 0, sizeof *o);
}

int ao_models_listed(const char *list, const char *model)
{
    size_t n = strlen(model);

    while (list && *list) {
        size_t k = strcspn(list, ",");
        if (k == n && strncmp(list, model, n) == 0)
            return 1;
        list += k + (list[k] == ',');
    }
    return 0;
}

int ao_llm_conf_serves(const struct ao_llm_conf *o, const char *model)
{
    return strcmp(model, o->model) == 0 || ao_models_listed(o->models, model);
}

void ao_llm_usage_add(struct ao_llm_usage *to, const struct ao_llm_usage *u)
{
    to->prompt += u->prompt;
    to->completion += u->completion;
    to->cost_usd += u->cost_usd;
    to->calls += u->calls;
    to->attempts += u->attempts;
}

/* --- the client -------------------------------------------------------- */

/* A stop request ends a call in flight: a model that never answers must
 * not hold a stage past its shutdown (the message is then not committed). */
static int on_progress(void *p, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
    (void)p; (void)dt; (void)dn; (void)ut; (void)un;
    return ao_stop_requested();
}

static size_t on_body(char *p, size_t size, size_t n, void *ud)
{
    struct xfer *l = ud;
    if (l->body.len + size * n > MAX_REPLY)
        return 0; /* curl reports a write error */
    ao_buf_append(&l->body, p, size * n);
    return size * n;
}

static size_t on_header(char *p, size_t size, size_t n, void *ud)
{
    struct xfer *l = ud;
    size_t len = size * n;

    if (len > 12 && strncasecmp(p, "retry-after:", 12) == 0) {
        char v[128];
        char *end;
        double s;
        snprintf(v, sizeof v, "%.*s", (int)(len - 12 < sizeof v - 1 ? len - 12 : sizeof v - 1), p + 12);
        v[strcspn(v, "\r\n")] = '\0';
        s = strtod(v, &end);
        if (end != v && *end == '\0' && s >= 0) {
            l->retry_after = s;
        } else {
            time_t when = curl_getdate(v, NULL); /* an HTTP date */
            if (when > 0)
                l->retry_after = difftime(when, time(NULL)) > 0 ? difftime(when, time(NULL)) : 0;
        }
    }
    return len;
}

struct ao_llm *ao_llm_new(const struct ao_llm_conf *conf, char *err, size_t errlen)
{
    struct ao_llm *l = ao_calloc(1, sizeof *l);
    struct ao_buf auth = {0};
    size_t n;

    l->conf = *conf;
    ao_random_bytes(&l->rng, sizeof l->rng);
    l->rng |= 1;
    if (conf->builtin)
        return l; /* the builtin model makes no calls */
    n = strlen(conf->url);
    while (n > 0 && conf->url[n - 1] == '/')
        n--;
    snprintf(l->endpoint, sizeof l->endpoint, "%.*s/chat/completions", (int)n, conf->url);
    if (!(l->curl = curl_easy_init())) {
        snprintf(err, errlen, "cannot start libcurl");
        goto fail;
    }
    l->headers = curl_slist_append(NULL, "Content-Type: application/json");
    if (conf->key) {
        ao_buf_printf(&auth, "Authorization: Bearer %s", conf->key);
        l->headers = curl_slist_append(l->headers, auth.data);
        memset(auth.data, 0, auth.len);
        ao_buf_release(&auth);
    }
    if (!l->headers)
        goto no_headers;
    curl_easy_setopt(l->curl, CURLOPT_URL, l->endpoint);
    curl_easy_setopt(l->curl, CURLOPT_HTTPHEADER, l->headers);
    curl_easy_setopt(l->curl, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(l->curl, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(l->curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(l->curl, CURLOPT_CONNECTTIMEOUT_MS, 10000L);
    curl_easy_setopt(l->curl, CURLOPT_TIMEOUT_MS, (long)(conf->timeout_s * 1000));
    if (conf->stall_s > 0) { /* under a byte a second for that long: nothing comes */
        curl_easy_setopt(l->curl, CURLOPT_LOW_SPEED_LIMIT, 1L);
        curl_easy_setopt(l->curl, CURLOPT_LOW_SPEED_TIME, (long)ceil(conf->stall_s));
    }
    curl_easy_setopt(l->curl, CURLOPT_XFERINFOFUNCTION, on_progress);
    curl_easy_setopt(l->curl, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(l->curl, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(l->curl, CURLOPT_FOLLOWLOCATION, 0L); /* never carry the key elsewhere */
    return l;
no_headers:
    snprintf(err, errlen, "libcurl could not make the request's headers");
fail:
    ao_buf_release(&auth);
    ao_llm_free(l);
    return NULL;
}

void ao_llm_free(struct ao_llm *l)
{
    if (!l)
        return;
    while (l->idle) {
        struct xfer *x = l->idle;
        l->idle = x->next;
        curl_easy_cleanup(x->curl);
        ao_buf_release(&x->body);
        free(x);
    }
    if (l->curl)
        curl_easy_cleanup(l->curl);
    curl_slist_free_all(l->headers);
    free(l);
}

void ao_llm_redact(const struct ao_llm *l, char *s)
{
    const char *key = l ? l->conf.key : NULL;
    size_t kn = key ? strlen(key) : 0;
    char *p;

    if (kn < 4 || !s)
        return;
    while ((p = strstr(s, key))) {
        memcpy(p, "[key]", 5 < kn ? 5 : kn);
        if (kn > 5)
            memmove(p + 5, p + kn, strlen(p + kn) + 1);
    }
}

/* How one attempt ended. */
enum verdict { OK, RETRY, FATAL };

/* A short, key-free description of an error body: error.message, or the
 * start of the text. */
static void error_text(struct xfer *l, char *out, size_t len)
{
    cJSON *j = l->body.len ? cJSON_ParseWithLength(l->body.data, l->body.len) : NULL;
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(j, "error");
    const cJSON *m = cJSON_IsObject(e) ? cJSON_GetObjectItemCaseSensitive(e, "message") : e;

    if (cJSON_IsString(m))
        snprintf(out, len, "%.200s", m->valuestring);
    else
        snprintf(out, len, "%.200s", l->body.len ? l->body.data : "(empty body)");
    out[strcspn(out, "\r\n")] = '\0';
    ao_llm_redact(l->l, out);
    cJSON_Delete(j);
}

static int is_quota_error(struct xfer *l)
{
    cJSON *j = l->body.len ? cJSON_ParseWithLength(l->body.data, l->body.len) : NULL;
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(j, "error");
    const char *fields[] = {"code", "type"};
    int quota = 0;

    for (int i = 0; i < 2 && cJSON_IsObject(e); i++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(e, fields[i]);
        if (cJSON_IsString(v) && (strstr(v->valuestring, "insufficient_quota") ||
                                  strstr(v->valuestring, "quota_exceeded") ||
                                  strstr(v->valuestring, "billing")))
            quota = 1;
    }
    cJSON_Delete(j);
    return quota;
}

static char *request_body(const struct ao_llm *l, const char *model, const char *system, const char *user)
{
    cJSON *req = cJSON_CreateObject(), *msgs, *m;
    char *out;

    cJSON_AddStringToObject(req, "model", model ? model : l->conf.model);
    msgs = cJSON_AddArrayToObject(req, "messages");
    cJSON_AddItemToArray(msgs, m = cJSON_CreateObject());
    cJSON_AddStringToObject(m, "role", "system");
    cJSON_AddStringToObject(m, "content", system);
    cJSON_AddItemToArray(msgs, m = cJSON_CreateObject());
    cJSON_AddStringToObject(m, "role", "user");
    cJSON_AddStringToObject(m, "content", user);
    cJSON_AddNumberToObject(req, "temperature", l->conf.temperature);
    cJSON_AddNumberToObject(req, "max_tokens", (double)l->conf.max_tokens);
    /* streamed: a live call shows itself byte by byte, so a dead one is
     * known in --llm-stall, not at the end of --llm-timeout; the usage
     * comes in the last event */
    cJSON_AddTrueToObject(req, "stream");
    cJSON_AddTrueToObject(cJSON_AddObjectToObject(req, "stream_options"), "include_usage");
    out = cJSON_PrintUnformatted(req);
    cJSON_Delete(req);
    return out;
}

/* A streamed reply (server-sent events: "data: {chunk}" lines, then
 * "data: [DONE]") put together as the one-piece reply it stands for:
 * choices[0].message.content from the deltas, the last finish_reason, the
 * usage of the last event.  NULL + err where it does not parse or an event
 * carries an error. */
static cJSON *sse_reply(const char *body, size_t len, char *err, size_t errlen)
{
    struct ao_buf text = {0};
    cJSON *out = NULL, *usage = NULL, *finish = NULL, *choice, *msg;
    const char *p = body, *end = body + len;
    int events = 0;

    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p)), *q = p;
        size_t n = (nl ? (size_t)(nl - p) : (size_t)(end - p));
        cJSON *ev;
        const cJSON *c, *d, *e;
        p = nl ? nl + 1 : end;
        if (n && q[n - 1] == '\r')
            n--;
        if (n < 5 || strncmp(q, "data:", 5) != 0)
            continue; /* a blank line, a comment (": ping"), an event name */
        q += 5, n -= 5;
        while (n && *q == ' ')
            q++, n--;
        if (n == 6 && strncmp(q, "[DONE]", 6) == 0)
            break;
        if (!(ev = cJSON_ParseWithLength(q, n))) {
            snprintf(err, errlen, "an event of the streamed reply is not valid JSON");
            goto fail;
        }
        events++;
        if ((e = cJSON_GetObjectItemCaseSensitive(ev, "error"))) {
            const cJSON *m = cJSON_IsObject(e) ? cJSON_GetObjectItemCaseSensitive(e, "message") : e;
            snprintf(err, errlen, "the server broke off its reply: %.200s",
                     cJSON_IsString(m) ? m->valuestring : "an error event");
            cJSON_Delete(ev);
            goto fail;
        }
        c = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(ev, "choices"), 0);
        d = cJSON_GetObjectItemCaseSensitive(c, "delta");
        if (cJSON_IsString(e = cJSON_GetObjectItemCaseSensitive(d, "content")))
            ao_buf_append(&text, e->valuestring, strlen(e->valuestring));
        if (cJSON_IsString(e = cJSON_GetObjectItemCaseSensitive(c, "finish_reason"))) {
            cJSON_Delete(finish);
            finish = cJSON_CreateString(e->valuestring);
        }
        if (cJSON_IsObject(e = cJSON_GetObjectItemCaseSensitive(ev, "usage"))) {
            cJSON_Delete(usage);
            usage = cJSON_Duplicate(e, 1);
        }
        cJSON_Delete(ev);
    }
    if (!events) {
        snprintf(err, errlen, "the reply is neither JSON nor a stream of events");
        goto fail;
    }
    ao_buf_append(&text, "", 1);
    out = cJSON_CreateObject();
    choice = cJSON_CreateObject();
    cJSON_AddItemToArray(cJSON_AddArrayToObject(out, "choices"), choice);
    msg = cJSON_AddObjectToObject(choice, "message");
    cJSON_AddStringToObject(msg, "content", text.data);
    if (finish)
        cJSON_AddItemToObject(choice, "finish_reason", finish), finish = NULL;
    if (usage)
        cJSON_AddItemToObject(out, "usage", usage), usage = NULL;
    ao_buf_release(&text);
    return out;
fail:
    cJSON_Delete(out);
    cJSON_Delete(usage);
    cJSON_Delete(finish);
    ao_buf_release(&text);
    return NULL;
}

/* Does the body look like a stream of events rather than one JSON object? */
static int is_stream(const char *body, size_t len)
{
    while (len && (*body == ' ' || *body == '\r' || *body == '\n'))
        body++, len--;
    return len && *body != '{';
}

/* Read usage and the first choice out of a 200 reply, streamed or not. */
static enum verdict parse_reply(struct xfer *x, char **reply, struct ao_llm_usage *u,
                                char *err, size_t errlen)
{
    const struct ao_llm *l = x->l;
    cJSON *j;
    const cJSON *usage, *choice, *msg, *content, *finish;
    enum verdict v = RETRY;

    if (is_stream(x->body.data, x->body.len)) {
        if (!(j = sse_reply(x->body.data, x->body.len, err, errlen)))
            return RETRY; /* a stream cut or garbled: the server's, tried again */
    } else if (!(j = cJSON_ParseWithLength(x->body.data, x->body.len))) {
        snprintf(err, errlen, "the reply is not valid JSON");
        return RETRY;
    }
    if (cJSON_IsObject(usage = cJSON_GetObjectItemCaseSensitive(j, "usage"))) {
        const cJSON *pt = cJSON_GetObjectItemCaseSensitive(usage, "prompt_tokens");
        const cJSON *ct = cJSON_GetObjectItemCaseSensitive(usage, "completion_tokens");
        long long p = cJSON_IsNumber(pt) && pt->valuedouble > 0 ? (long long)pt->valuedouble : 0;
        long long c = cJSON_IsNumber(ct) && ct->valuedouble > 0 ? (long long)ct->valuedouble : 0;
        u->prompt += p;
        u->completion += c;
        u->cost_usd += (double)p * l->conf.price_in / 1e6 + (double)c * l->conf.price_out / 1e6;
    }
    choice = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(j, "choices"), 0);
    msg = cJSON_GetObjectItemCaseSensitive(choice, "message");
    content = cJSON_GetObjectItemCaseSensitive(msg, "content");
    finish = cJSON_GetObjectItemCaseSensitive(choice, "finish_reason");
    if (!cJSON_IsString(content) || !content->valuestring[0]) {
        snprintf(err, errlen, "the reply has no message content");
    } else if (cJSON_IsString(finish) && strcmp(finish->valuestring, "length") == 0) {
        snprintf(err, errlen, "the reply was cut off at the token limit (%ld)", l->conf.max_tokens);
    } else {
        *reply = ao_strdup(content->valuestring);
        v = OK;
    }
    cJSON_Delete(j);
    return v;
}

/* A transfer for one call: an idle one, or a copy of the client's. */
static struct xfer *xfer_take(struct ao_llm *l)
{
    struct xfer *x = l->idle;

    if (x) {
        l->idle = x->next;
        return x;
    }
    if (!(x = ao_calloc(1, sizeof *x)) || !(x->curl = curl_easy_duphandle(l->curl))) {
        free(x);
        return NULL;
    }
    x->l = l;
    curl_easy_setopt(x->curl, CURLOPT_WRITEDATA, x);
    curl_easy_setopt(x->curl, CURLOPT_HEADERDATA, x);
    return x;
}

static void xfer_give(struct ao_llm *l, struct xfer *x)
{
    x->body.len = 0;
    x->next = l->idle;
    l->idle = x;
}

static enum verdict attempt(struct xfer *l, const char *body, char **reply,
                            struct ao_llm_usage *u, char *err, size_t errlen)
{
    char ebuf[CURL_ERROR_SIZE] = "", text[256];
    long status = 0;
    CURLcode rc;

    l->body.len = 0;
    l->retry_after = -1;
    u->attempts++;
    curl_easy_setopt(l->curl, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(l->curl, CURLOPT_ERRORBUFFER, ebuf);
    rc = ao_flight_perform(l->curl); /* the stage's other calls go on meanwhile */
    curl_easy_setopt(l->curl, CURLOPT_ERRORBUFFER, NULL);
    if (rc == CURLE_OPERATION_TIMEDOUT) { /* the whole limit, or a stall */
        double t = 0;
        curl_easy_getinfo(l->curl, CURLINFO_TOTAL_TIME, &t);
        if (l->l->conf.stall_s > 0 && t < l->l->conf.timeout_s - 0.5)
            snprintf(err, errlen, "stalled: nothing received for %.0f s (--llm-stall), %.0f s into the "
                     "request", l->l->conf.stall_s, t);
        else
            snprintf(err, errlen, "timed out after %.0f s (--llm-timeout)", t);
        return RETRY;
    }
    if (rc != CURLE_OK) {
        snprintf(err, errlen, "no reply: %s", ebuf[0] ? ebuf : curl_easy_strerror(rc));
        ao_llm_redact(l->l, err);
        return rc == CURLE_WRITE_ERROR && l->body.len > 0 ? FATAL : RETRY;
    }
    ao_buf_append(&l->body, "", 1);
    l->body.len--;
    curl_easy_getinfo(l->curl, CURLINFO_RESPONSE_CODE, &status);
    if (status == 200)
        return parse_reply(l, reply, u, err, errlen);
    error_text(l, text, sizeof text);
    if (status == 401 || status == 403) {
        snprintf(err, errlen, "the server refused the key (HTTP %ld): %s", status, text);
        return FATAL;
    }
    if (status == 429 && is_quota_error(l)) {
        snprintf(err, errlen, "the account's quota is exhausted (HTTP 429): %s", text);
        return FATAL;
    }
    snprintf(err, errlen, "HTTP %ld: %s", status, text);
    return status == 408 || status == 409 || status == 429 || status >= 500 ? RETRY : FATAL;
}

/* Wait (a stop request cuts it short; the stage's other calls go on
 * meanwhile); 0 or -1 when stopped. */
static int wait_s(double s)
{
    ao_nap_ns((long long)(s * 1e9));
    return ao_stop_requested() ? -1 : 0;
}

static double jitter(struct ao_llm *l, double cap)
{
    l->rng ^= l->rng << 13;
    l->rng ^= l->rng >> 7;
    l->rng ^= l->rng << 17;
    return cap * (double)(l->rng >> 11) / 9007199254740992.0;
}

int ao_llm_chat(struct ao_llm *l, const char *system, const char *user, char **reply,
                struct ao_llm_usage *u, char *err, size_t errlen)
{
    return ao_llm_chat_as(l, NULL, system, user, reply, u, NULL, err, errlen);
}

int ao_llm_chat_as(struct ao_llm *l, const char *model, const char *system, const char *user,
                   char **reply, struct ao_llm_usage *u, const struct ao_llm_watch *w, char *err,
                   size_t errlen)
{
    char *body = NULL, last[AO_ERRLEN] = "";
    int rc = -1, n;
    struct xfer *x;
    struct ao_gate_slot slot;

    *reply = NULL;
    if (l->conf.builtin) {
        snprintf(err, errlen, "the builtin model takes no chat calls");
        return -1;
    }
    body = request_body(l, model, system, user);
    if (!(x = xfer_take(l))) {
        free(body);
        snprintf(err, errlen, "libcurl could not make a transfer");
        return -1;
    }
    u->calls++;
    for (n = 1; n <= l->conf.attempts; n++) {
        enum verdict v;
        double delay;
        if (l->gate && ao_gate_enter(l->gate, &slot, last, sizeof last) < 0)
            break; /* stopped, or redis failed: the call is not made */
        v = attempt(x, body, reply, u, last, sizeof last);
        if (l->gate) {
            ao_gate_leave(l->gate, &slot);
            if (x->retry_after > 0) /* the server is busy for everyone */
                ao_gate_pause(l->gate, x->retry_after < RETRY_AFTER_MAX ? x->retry_after : RETRY_AFTER_MAX);
        }
        if (v == OK) {
            rc = 0;
            goto out;
        }
        if (v == FATAL)
            break;
        if (n == l->conf.attempts)
            break;
        delay = jitter(l, l->conf.backoff_s * (double)(1u << (n - 1 < 16 ? n - 1 : 16)));
        if (delay > BACKOFF_MAX)
            delay = jitter(l, BACKOFF_MAX);
        if (x->retry_after >= 0)
            delay = x->retry_after < RETRY_AFTER_MAX ? x->retry_after : RETRY_AFTER_MAX;
        ao_warn("%s model: attempt %d of %d failed (%s); retrying in %.2f s", l->conf.role, n,
                l->conf.attempts, last, delay);
        if (w && w->retrying) {
            char what[AO_ERRLEN + 96];
            snprintf(what, sizeof what, "attempt %d of %d failed (%.300s); retrying in %.1f s", n,
                     l->conf.attempts, last, delay);
            w->retrying(w->ctx, what);
        }
        if (wait_s(delay) < 0) {
            snprintf(last + strlen(last), sizeof last - strlen(last), "; stopped");
            break;
        }
    }
    snprintf(err, errlen, "%s model call failed after %d attempt%s: %s", l->conf.role,
             n > l->conf.attempts ? l->conf.attempts : n, n == 1 ? "" : "s", last);
out:
    xfer_give(l, x);
    free(body);
    return rc;
}

/* --- the check before a run ---------------------------------------------- */

/* "a, b, c" of a models list's ids, cut to fit. */
static void model_ids(const cJSON *data, char *out, size_t len)
{
    const cJSON *m;
    size_t at = 0;

    out[0] = '\0';
    cJSON_ArrayForEach(m, data) {
        const char *id = ao_json_str(m, "id", NULL);
        if (id && at + strlen(id) + 8 < len)
            at += (size_t)snprintf(out + at, len - at, "%s%s", at ? ", " : "", id);
        else if (id) {
            snprintf(out + at, len - at, "%s...", at ? ", " : "");
            break;
        }
    }
}

int ao_llm_probe(const struct ao_llm_conf *conf, char *err, size_t errlen)
{
    struct ao_llm *l;
    struct xfer *x;
    char url[1100], what[AO_ERRLEN], ids[300];
    size_t n = conf->url ? strlen(conf->url) : 0;
    long status = 0;
    CURLcode rc;
    cJSON *j = NULL;
    const cJSON *data, *m;
    int found = 0, out = -1;

    if (conf->builtin)
        return 0;
    if (!(l = ao_llm_new(conf, err, errlen)))
        return -1;
    if (!(x = xfer_take(l))) {
        snprintf(err, errlen, "libcurl could not make a transfer");
        ao_llm_free(l);
        return -1;
    }
    while (n > 0 && conf->url[n - 1] == '/')
        n--;
    snprintf(url, sizeof url, "%.*s/models", (int)n, conf->url);
    curl_easy_setopt(x->curl, CURLOPT_URL, url);
    curl_easy_setopt(x->curl, CURLOPT_HTTPGET, 1L);
    curl_easy_setopt(x->curl, CURLOPT_CONNECTTIMEOUT_MS, 5000L);
    curl_easy_setopt(x->curl, CURLOPT_TIMEOUT_MS, 10000L);
    rc = curl_easy_perform(x->curl);
    if (rc != CURLE_OK) {
        snprintf(err, errlen, "the %s model server %s is unreachable: %s", conf->role, conf->url,
                 curl_easy_strerror(rc));
        goto done;
    }
    curl_easy_getinfo(x->curl, CURLINFO_RESPONSE_CODE, &status);
    if (status == 404 || status == 405 || status == 501) { /* no models list: taken on trust */
        out = 0;
        goto done;
    }
    if (status != 200) {
        error_text(x, what, sizeof what);
        snprintf(err, errlen, "the %s model server %s %s (HTTP %ld): %s", conf->role, conf->url,
                 status == 401 || status == 403 ? "refuses the key" : "answers an error", status, what);
        out = status == 401 || status == 403 ? AO_RC_SETTING : AO_RC_FAIL;
        goto done;
    }
    j = cJSON_ParseWithLength(x->body.data ? x->body.data : "", x->body.len);
    data = cJSON_GetObjectItemCaseSensitive(j, "data");
    if (!cJSON_IsArray(data)) { /* a 200 that is no list: the server is there, the model unknown */
        out = 0;
        goto done;
    }
    cJSON_ArrayForEach(m, data) {
        const char *id = ao_json_str(m, "id", NULL);
        found |= id && strcmp(id, conf->model) == 0;
    }
    if (!found) {
        model_ids(data, ids, sizeof ids);
        snprintf(err, errlen, "the %s model server %s has no model '%s' (it serves: %s)", conf->role,
                 conf->url, conf->model, ids[0] ? ids : "none");
        ao_llm_redact(l, err);
        out = AO_RC_SETTING;
        goto done;
    }
    out = 0;
done:
    cJSON_Delete(j);
    xfer_give(l, x);
    ao_llm_free(l);
    return out;
}
