/* test_selector.c - the selector's parts without its main: a run's config
 * completed with the defaults and checked whole, read back as a struct */
#include <math.h>
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
    cJSON *given, *c, *state;
    struct ao_run_config rc;

    memset(&sel, 0, sizeof sel);
    CHECK(ao_config_load(&cfg, opts, (int)(sizeof opts / sizeof opts[0]), 1, argv, err, sizeof err) == 0,
          "the selector's options load");
    sel.cfg = &cfg;
    given = cJSON_Parse("{\"beam\": 3, \"memory_scope\": \"task\"}");
    c = sel_run_config(&sel, given, err, sizeof err);
    CHECK(c && ao_json_num(c, "beam", 0) == 3 && ao_json_num(c, "plans", 0) == 12 &&
              !strcmp(ao_json_str(c, "memory_scope", ""), "task") && !strcmp(ao_json_str(c, "plan_mode", ""), "distinct") &&
              ao_json_num(c, "slot_deadline_s", 0) == 1800,
          "the task's values stand; the rest are the selector's defaults");
    state = cJSON_CreateObject();
    cJSON_AddItemToObject(state, "config", c);
    rc = sel_config_of(state);
    CHECK(rc.beam == 3 && rc.samples == 2 && rc.iters == 16 && rc.plan_mode == AO_PLAN_DISTINCT && !rc.memory_scope &&
              isnan(rc.budget_usd) && sel_int_or(rc.budget_tokens, 0) == 0,
          "read back as the struct: numbers set, a budget absent");
    CHECK(sel_memory_on(state) && sel_slot_deadline(state) == 1800, "memory on, the slot deadline as set");
    cJSON_ReplaceItemInObject(c, "memory_scope", cJSON_CreateString("none"));
    cJSON_DeleteItemFromObject(c, "slot_deadline_s");
    CHECK(!sel_memory_on(state) && sel_slot_deadline(state) == 1800, "scope none: no memory; no deadline: 30 minutes");
    cJSON_Delete(state);
    cJSON_Delete(given);

    given = cJSON_Parse("{\"beam\": 65}");
    CHECK(!sel_run_config(&sel, given, err, sizeof err) && strstr(err, "'beam'"),
          "a task's value out of bounds is refused (%s)", err);
    cJSON_Delete(given);
    given = cJSON_Parse("{\"memory_scope\": \"no spaces\"}");
    CHECK(!sel_run_config(&sel, given, err, sizeof err) && strstr(err, "memory scope"),
          "so is a memory scope that is not a name (%s)", err);
    cJSON_Delete(given);
    ao_config_release(&cfg);

    argv[1] = (char *)"--slot-deadline";
    CHECK(ao_config_load(&cfg, opts, (int)(sizeof opts / sizeof opts[0]), 3, argv, err, sizeof err) == 0,
          "a selector started with --slot-deadline 0.05");
    sel.cfg = &cfg;
    CHECK(!sel_run_config(&sel, NULL, err, sizeof err) && strstr(err, "slot_deadline_s"),
          "its default is out of bounds too, and refused as a task's would be (%s)", err);
    ao_config_release(&cfg);
    return CHECK_DONE();
}
