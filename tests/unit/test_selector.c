/* test_selector.c - the selector's parts without its main: a run's config
 * completed with the defaults and checked whole; what the selector reads
 * of a run's state; what it keeps of an open iteration's results */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "../../tools/selector/selector.h"

static const struct ao_option opts[] = {
    {"beam", 0, AO_OPT_INT, "6", "B", "b"},          {"plans", 0, AO_OPT_INT, "12", "N", "n"},
    {"samples", 0, AO_OPT_INT, "2", "K", "k"},       {"iters", 0, AO_OPT_INT, "16", "T", "t"},
    {"topk", 0, AO_OPT_INT, "8", "N", "k"},          {"expn", 0, AO_OPT_INT, "16", "N", "e"},
    {"memory-scope", 0, AO_OPT_STR, "target", "S", "s"}, {"seed", 0, AO_OPT_INT, "0", "N", "s"},
    {"memory-deadline", 0, AO_OPT_NUM, "600", "S", "m"}, {"slot-deadline", 0, AO_OPT_NUM, "1800", "S", "s"},
    {"fix-attempts", 0, AO_OPT_INT, "2", "F", "f"},  {"plan-mode", 0, AO_OPT_STR, "distinct", "M", "p"},
    {"compare", 0, AO_OPT_INT, "1", "C", "c"},
    AO_COMMON_OPTIONS,
};

/* a transport whose generation the test sets: a rebalance on demand */
static unsigned gen = 1;
static unsigned fake_generation(struct ao_io *io)
{
    (void)io;
    return gen;
}

static struct ao_result_msg result(double latency_ns)
{
    struct ao_result_msg r;
    ao_msg_init(&ao_msg_result, &r);
    r.status = strdup("ok");
    r.latency_ns = latency_ns;
    return r;
}

/* What the selector keeps of an open iteration's results: taken once, by
 * slot; forgotten at the close, and by a rebalance (another replica may
 * have written the run meanwhile); at most 32 iterations at once. */
static void kept_results(void)
{
    struct selector sel;
    struct ao_io *io = ao_io_stdio_new("test", stdin, stdout, stderr);
    const struct ao_io_ops *stdio_ops = io->ops;
    struct ao_io_ops ops = *io->ops;
    struct ao_result_msg r = result(10), got;
    char key[64], err[256];

    memset(&sel, 0, sizeof sel);
    sel.store = ao_runstore_file(NULL, err, sizeof err); /* in memory */
    ops.generation = fake_generation;
    io->ops = &ops;
    sel_keep_fresh(&sel, io);
    sel_keep_result(&sel, "run:a:iter:1", "0.0.0", &r);
    CHECK(!r.status, "a kept result is taken (the caller's is left empty)");
    r = result(20);
    sel_keep_result(&sel, "run:a:iter:1", "0.0.1", &r);
    sel_keep_fresh(&sel, io);
    CHECK(sel_take_result(&sel, "run:a:iter:1", "0.0.1", &got) == 1 && got.latency_ns == 20,
          "the same generation: the slot's result is there");
    ao_msg_release(&ao_msg_result, &got);
    CHECK(sel_take_result(&sel, "run:a:iter:1", "0.0.1", &got) == 0, "and taken once");
    CHECK(sel_take_result(&sel, "run:a:iter:2", "0.0.0", &got) == 0 &&
              sel_take_result(&sel, "run:b:iter:1", "0.0.0", &got) == 0,
          "another iteration's or run's slot is not it");
    gen++; /* a rebalance */
    sel_keep_fresh(&sel, io);
    CHECK(sel_take_result(&sel, "run:a:iter:1", "0.0.0", &got) == 0, "a rebalance forgets what was kept");
    r = result(30);
    sel_keep_result(&sel, "run:a:iter:1", "0.0.0", &r);
    sel_forget_results(&sel, "run:a:iter:1");
    CHECK(sel_take_result(&sel, "run:a:iter:1", "0.0.0", &got) == 0, "a close forgets its iteration's");
    for (int i = 0; i < 40; i++) {
        snprintf(key, sizeof key, "run:r%d:iter:1", i);
        r = result(i);
        sel_keep_result(&sel, key, "0.0.0", &r);
    }
    CHECK(sel_take_result(&sel, "run:r39:iter:1", "0.0.0", &got) == 1 && got.latency_ns == 39,
          "of 40 runs' iterations the newest is kept");
    ao_msg_release(&ao_msg_result, &got);
    CHECK(sel_take_result(&sel, "run:r0:iter:1", "0.0.0", &got) == 0, "and the oldest let go (32 at most)");
    sel_forget_results(&sel, NULL);
    ao_runstore_free(sel.store);
    io->ops = stdio_ops;
    ao_io_free(io);
}

/* a child's head-to-head with its parent, read from its own result (issue 66) */
static void compared(void)
{
    static const char *const cases[] = {
        "\"status\":\"ok\",\"head_to_head\":{\"speedup\":1.2,\"speedup_low\":1.1,\"speedup_high\":1.3}",
        "\"status\":\"ok\",\"head_to_head\":{\"speedup\":1.2,\"speedup_low\":1.1,\"speedup_high\":1.3,"
        "\"voided\":\"the parent's side ran at 2x\"}",
        "\"status\":\"rejected\",\"reason\":\"x\",\"head_to_head\":{\"speedup\":1.2,\"speedup_low\":1.1,"
        "\"speedup_high\":1.3}",
        "\"status\":\"ok\"",
        "\"status\":\"ok\",\"head_to_head\":{\"speedup\":1.2,\"speedup_low\":1.3,\"speedup_high\":1.1}",
    };
    const int want[] = {1, 0, 0, 0, 0};
    const char *what[] = {"a head-to-head: its figure and interval", "a voided pair decides nothing",
                          "nor a kernel that failed", "nor a lone measurement", "nor an interval upside down"};

    for (int i = 0; i < 5; i++) {
        char text[700], err[200];
        struct ao_result_msg r;
        struct ao_sel_cmp c;
        cJSON *j;
        snprintf(text, sizeof text, "{\"type\":\"result\",\"v\":1,\"id\":\"result:k\",\"run\":\"r\",\"task\":\"matmul\","
                 "\"target\":\"cpu\",\"iter\":2,\"kernel_id\":\"k\",\"slot\":\"0.1.0\",\"size\":\"tiny\",%s}", cases[i]);
        j = cJSON_Parse(text);
        ao_msg_init(&ao_msg_result, &r);
        CHECK(j && ao_msg_decode(&ao_msg_result, j, &r, err, sizeof err) == 0, "case %d decodes (%s)", i, err);
        CHECK(sel_compare_of(&r, &c) == want[i] && c.have == want[i] &&
                  (!want[i] || (c.speedup == 1.2 && c.low == 1.1 && c.high == 1.3)), "%s", what[i]);
        ao_msg_release(&ao_msg_result, &r);
        cJSON_Delete(j);
    }
}

int main(void)
{
    struct ao_config cfg;
    struct selector sel;
    char err[256] = "", *argv[] = {(char *)"t", (char *)"--slot-deadline", (char *)"0.05", NULL};
    cJSON *given;
    struct ao_run_state st;
    struct ao_run_config *rc, c;
    struct shape sh;

    memset(&sel, 0, sizeof sel);
    CHECK(ao_config_load(&cfg, opts, (int)(sizeof opts / sizeof opts[0]), 1, argv, err, sizeof err) == 0,
          "the selector's options load");
    sel.cfg = &cfg;
    given = cJSON_Parse("{\"beam\": 3, \"memory_scope\": \"task\"}");
    ao_run_state_init(&st);
    CHECK(sel_run_config(&sel, given, &st.config, err, sizeof err) == 0, "a task's config is taken (%s)", err);
    rc = &st.config;
    CHECK(rc->beam == 3 && rc->plans == 12 && rc->samples == 2 && rc->iters == 16 &&
              !strcmp(rc->memory_scope, "task") && rc->plan_mode == AO_PLAN_DISTINCT && rc->slot_deadline_s == 1800 &&
              isnan(rc->budget_usd) && sel_int_or(rc->budget_tokens, 0) == 0,
          "the task's values stand; the rest are the selector's defaults; a budget stays absent");
    CHECK(sel_memory_on(&st) && sel_slot_deadline(&st) == 1800, "memory on, the slot deadline as set");
    free(rc->memory_scope);
    rc->memory_scope = strdup("none");
    rc->slot_deadline_s = NAN;
    CHECK(!sel_memory_on(&st) && sel_slot_deadline(&st) == 1800, "scope none: no memory; no deadline: 30 minutes");
    st.iter = 0;
    st.candidates = 4;
    sh = sel_shape_of(&st);
    CHECK(sh.ranks == 1 && sh.plans == 1 && sh.samples == 1, "iteration 0 has the baseline's one slot");
    st.iter = 2;
    sh = sel_shape_of(&st);
    CHECK(sh.ranks == 4 && sh.plans == 12 && sh.samples == 2, "later ones: candidates x plans x samples");
    ao_run_state_release(&st);
    cJSON_Delete(given);

    given = cJSON_Parse("{\"beam\": 65}");
    CHECK(sel_run_config(&sel, given, &c, err, sizeof err) < 0 && strstr(err, "'beam'"),
          "a task's value out of bounds is refused (%s)", err);
    cJSON_Delete(given);
    given = cJSON_Parse("{\"memory_scope\": \"no spaces\"}");
    CHECK(sel_run_config(&sel, given, &c, err, sizeof err) < 0 && strstr(err, "memory scope"),
          "so is a memory scope that is not a name (%s)", err);
    cJSON_Delete(given);
    ao_config_release(&cfg);

    argv[1] = (char *)"--slot-deadline";
    CHECK(ao_config_load(&cfg, opts, (int)(sizeof opts / sizeof opts[0]), 3, argv, err, sizeof err) == 0,
          "a selector started with --slot-deadline 0.05");
    sel.cfg = &cfg;
    CHECK(sel_run_config(&sel, NULL, &c, err, sizeof err) < 0 && strstr(err, "slot_deadline_s"),
          "its default is out of bounds too, and refused as a task's would be (%s)", err);
    ao_config_release(&cfg);
    kept_results();
    compared();
    return CHECK_DONE();
}
