/* selector.c - accelopt-selector: owns each run (docs/PROTOCOL.md, "The loop").
 *
 * A task starts a run: the baseline kernel goes out to be profiled.  Each
 * result fills its slot of the iteration; when every slot has one, the beam
 * keeps the best B of parents and correct children, the instructive pairs go
 * to the summarizer, and once every pair is acked (or the memory deadline
 * passed) the beam goes out as the next iteration's candidates, or the run
 * ends with a `done`.  A slot whose result never comes (its kernel went to
 * the dead letters, a stage never answered) is filled with a `lost` result
 * once no result of its iteration has come for the slot deadline, so every
 * run ends with one `done`.
 *
 * All state lives in the run store (Redis, or a JSON file in pipe mode), so a
 * restarted selector carries on.  A step that sends messages first writes
 * them to the run's outbox with the new state, then sends and flushes them,
 * then clears the outbox's pending mark; a selector that starts finds the
 * outboxes still pending and sends them again (ids are stable, so the
 * receivers see a duplicate at worst).  Results and acks are recorded with
 * HSETNX by slot and pair id, so redelivered messages count once. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/exitcode.h"
#include "core/log.h"
#include "core/redis.h"
#include "core/util.h"
#include "state/runstore.h"
#include "wire/msg.h"
#include "wire/names.h"
#include "wire/sign.h"
#include "wire/stage.h"

#include "selector.h"

static const struct ao_option options[] = {
    {"beam", 'b', AO_OPT_INT, "6", "B", "kernels kept per iteration when the run names none"},
    {"plans", 'n', AO_OPT_INT, "12", "N", "plans per candidate when the run names none"},
    {"samples", 'k', AO_OPT_INT, "2", "K", "kernels per plan when the run names none"},
    {"iters", 't', AO_OPT_INT, "16", "T", "iterations when the run names none"},
    {"topk", 0, AO_OPT_INT, "8", "N", "pairs summarized per iteration at most"},
    {"expn", 0, AO_OPT_INT, "16", "N", "memory items kept per scope"},
    {"memory-scope", 0, AO_OPT_STR, "target", "SCOPE", "memory: target, task, none or a name"},
    {"seed", 0, AO_OPT_INT, "0", "N", "seed passed to the agents"},
    {"memory-deadline", 0, AO_OPT_NUM, "600", "SECONDS",
     "release the next iteration this long after its pairs were sent, acked or not"},
    {"slot-deadline", 0, AO_OPT_NUM, "1800", "SECONDS",
     "an iteration's missing results are lost once none has come for this long"},
    {"fix-attempts", 0, AO_OPT_INT, "2", "F",
     "send a failed model kernel back to the model this many times (0: never)"},
    {"compare", 0, AO_OPT_INT, "1", "0|1",
     "1: a child is faster or slower than its parent only head to head with it; 0: on its own measurement"},
    {"plan-mode", 0, AO_OPT_STR, "distinct", "MODE",
     "distinct (each plan call is told the earlier titles) or independent (the paper's)"},
    {"size", 0, AO_OPT_STR, "tiny", "CLASS", "size class when a task names none"},
    {"redis", 0, AO_OPT_STR, NULL, "URL", "keep run state in redis (redis://host:port)"},
    {"redis-prefix", 0, AO_OPT_STR, "accelopt:", "PREFIX", "prefix of every redis key"},
    {"state", 0, AO_OPT_STR, NULL, "FILE", "pipe mode without redis: keep run state in FILE"},
    {"reask-after", 0, AO_OPT_NUM, "0", "SECONDS",
     "send a run's open phase again each time its missing results have been missing this long (a message "
     "the transport lost; the stages answer again from what they kept, the model not asked twice; 0: never)"},
    {"resend", 0, AO_OPT_BOOL, "0", NULL,
     "the broker lost what was in flight (a new one): send every run's current phase again"},
    AO_STAGE_OPTIONS,
    AO_COMMON_OPTIONS,
};
#define NOPTS ((int)(sizeof options / sizeof options[0]))

static const char *const topics[] = {AO_TOPIC_TASKS, AO_TOPIC_RESULTS, AO_TOPIC_EXPERIENCES,
                                     NULL};

/* A result or an experience reads its run's state and beam first: both
 * in one round trip, or none where they are kept from the run's last
 * message (the run's partition is this selector's alone, so nothing else
 * writes them meanwhile; a rebalance forgets them). */
static int read_ahead(struct selector *sel, struct ao_io *io, const cJSON *msg)
{
    static const char *const fields[] = {"state", "beam"};
    const char *run = ao_json_str(msg, "run", NULL);
    char key[AO_KEY_MAX], err[AO_ERRLEN];

    if (!run || ao_name(key, sizeof key, AO_KEY_RUN, run) < 0)
        return 0; /* the handler says what is wrong with it */
    if (ao_rs_prefetch(sel->store, key, 2, fields, err, sizeof err) < 0)
        return ao_io_fail(io, "run store: %s", err);
    return 0;
}

static int process(void *ctx, struct ao_io *io, const cJSON *msg, char *reason, size_t len)
{
    struct selector *sel = ctx;
    const char *type = ao_json_str(msg, "type", NULL);
    int rc;

    sel_keep_fresh(sel, io);
    if (!type)
        return snprintf(reason, len, "no message type"), -1;
    if (strcmp(type, "task") == 0)
        return sel_on_task(ctx, io, msg, reason, len);
    if (strcmp(type, "result") != 0 && strcmp(type, "experience") != 0) {
        snprintf(reason, len, "the selector takes task, result and experience messages, not '%.40s'",
                 type);
        return -1;
    }
    if (read_ahead(sel, io, msg) < 0)
        return -1;
    rc = type[0] == 'r' ? sel_on_result(ctx, io, msg, reason, len)
                        : sel_on_experience(ctx, io, msg, reason, len);
    ao_rs_forget(sel->store);
    return rc;
}

int main(int argc, char **argv)
{
    struct ao_stage s;
    struct selector sel = {0};
    char err[AO_ERRLEN];
    const char *url, *state_file;
    int code;

    if (!ao_stage_open(&s, "accelopt-selector",
                       "accelopt-selector [options] < tasks-results-experiences.jsonl > out.jsonl",
                       options, NOPTS, topics, argc, argv, &code))
        return ao_stage_close(&s, code);
    sel.cfg = &s.cfg;
    sel.resend = ao_config_bool(&s.cfg, "resend");
    sel.reask_s = ao_config_num(&s.cfg, "reask-after");
    url = ao_config_str(&s.cfg, "redis");
    state_file = ao_config_str(&s.cfg, "state");
    if (url && state_file) {
        ao_err("--redis and --state are two places for the same state: give one");
        return ao_stage_close(&s, AO_EXIT_USAGE);
    }
    {
        char reason[AO_ERRLEN];
        struct ao_run_config c;
        if (sel_run_config(&sel, NULL, &c, reason, sizeof reason) < 0) {
            ao_err("%s", reason);
            return ao_stage_close(&s, AO_EXIT_USAGE);
        }
        ao_run_config_release(&c);
    }
    if (ao_sign_key_load(&sel.key, err, sizeof err) < 0) {
        ao_err("%s", err);
        return ao_stage_close(&s, AO_EXIT_USAGE);
    }
    if (url && !(sel.redis = ao_redis_new(url, ao_config_str(&s.cfg, "redis-prefix"), err,
                                          sizeof err))) {
        ao_err("%s", err);
        return ao_stage_close(&s, AO_EXIT_FAIL);
    }
    sel.store = sel.redis ? ao_runstore_redis(sel.redis)
                          : ao_runstore_file(state_file, err, sizeof err);
    if (!sel.store) {
        ao_err("%s", err); /* (the file's: a Redis store is always made) */
        ao_redis_free(sel.redis);
        return ao_stage_close(&s, AO_EXIT_FAIL);
    }
    {
        static const char *const kept[] = {"state", "beam"};
        ao_rs_keep(sel.store, 2, kept);
    }
    s.tick = sel_tick;
    code = ao_stage_run(&s, process, &sel, "messages", "messages");
    {
        char e2[AO_ERRLEN];
        if (ao_runstore_save(sel.store, e2, sizeof e2) < 0)
            ao_err("%s", e2);
    }
    sel_forget_results(&sel, NULL);
    ao_runstore_free(sel.store);
    ao_redis_free(sel.redis);
    while (sel.warned) {
        struct warned *w = sel.warned;
        sel.warned = w->next;
        free(w);
    }
    return code;
}
