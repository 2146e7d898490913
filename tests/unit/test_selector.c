/* test_selector.c - the selector's parts without its main: a run's config
 * completed with the defaults and checked whole; what the selector reads
 * of a run's state */
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
    AO_COMMON_OPTIONS,
};

int main(void)
{
    struct ao_config cfg;
    struct selector sel;
    char err[256], *argv[] = {(char *)"t", (char *)"--slot-deadline", (char *)"0.05", NULL};
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
    return CHECK_DONE();
}
