/* test_runstate.c - a run's state decoded and encoded whole: the phase by
 * name, the counts, the config within its bounds, nothing else */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "state/runstate.h"

/* A state as the selector has always stored it (an open memory phase). */
static const char *const stored =
    "{\"phase\":\"memory\",\"task\":\"matmul\",\"target\":\"cpu\",\"size\":\"tiny\","
    "\"task_path\":\"/t/matmul\",\"task_sha256\":\"aa\",\"baseline_sha256\":\"bb\",\"iter\":2,"
    "\"candidates\":3,\"completed\":1,\"kernels\":20,\"failures\":4,\"lost\":1,"
    "\"started\":1700000000.5,\"opened\":1700000100.25,\"progress\":1700000110,"
    "\"baseline_ns\":123456.5,\"deadline\":1700000700,\"memory_deadline_missed\":true,"
    "\"history\":[{\"iter\":0,\"kernels\":1},{\"iter\":1,\"kernels\":19}],"
    "\"pairs\":[\"r:pair:2:0:1\"],"
    "\"config\":{\"beam\":3,\"plans\":4,\"samples\":2,\"iters\":5,\"memory_scope\":\"task\","
    "\"plan_mode\":\"independent\",\"slot_deadline_s\":60}}";

/* stored with one member replaced (value NULL: removed); the decode's verdict */
static int decode_with(const char *name, const char *value, char *err, size_t len)
{
    cJSON *j = cJSON_Parse(stored);
    struct ao_run_state s;
    int rc;

    cJSON_DeleteItemFromObjectCaseSensitive(j, name);
    if (value)
        cJSON_AddItemToObject(j, name, cJSON_Parse(value));
    rc = ao_run_state_decode(j, &s, err, len);
    ao_run_state_release(&s);
    cJSON_Delete(j);
    return rc;
}

int main(void)
{
    struct ao_run_state s, back;
    char err[256] = "";
    cJSON *j = cJSON_Parse(stored), *enc;
    int all = 1;

    CHECK(ao_run_state_decode(j, &s, err, sizeof err) == 0, "a stored state decodes (%s)", err);
    CHECK(s.phase == AO_PHASE_MEMORY && !strcmp(s.task, "matmul") && !strcmp(s.size, "tiny") &&
              s.iter == 2 && s.candidates == 3 && s.completed == 1 && s.kernels == 20 && s.failures == 4 &&
              s.lost == 1 && s.started == 1700000000.5 && s.baseline_ns == 123456.5 &&
              s.memory_deadline_missed == 1 && cJSON_GetArraySize(s.history) == 2 &&
              cJSON_GetArraySize(s.pairs) == 1 && !s.final_stop && !s.stopped,
          "its fields, each of its type; the absent ones absent");
    CHECK(s.config.beam == 3 && s.config.plan_mode == AO_PLAN_INDEPENDENT && s.config.slot_deadline_s == 60 &&
              !strcmp(s.config.memory_scope, "task") && s.config.topk == AO_ABSENT_INT && isnan(s.config.wall_s),
          "its config is the config record, absent fields absent");
    CHECK(ao_run_state_last(&s) && ao_json_num(ao_run_state_last(&s), "iter", -1) == 1,
          "the last history entry is the iteration closed last");
    enc = ao_run_state_json(&s);
    CHECK(enc && cJSON_Compare(enc, j, 1), "encoded, it is the state it was read from");
    {
        char *text = cJSON_PrintUnformatted(enc);
        CHECK(text && strstr(text, "\"phase\":\"memory\""), "the phase by its name, as tests and tools grep it");
        free(text);
    }
    cJSON_Delete(enc);
    ao_run_state_release(&s);
    CHECK(!s.task && !s.history && !s.config.memory_scope && s.iter == AO_ABSENT_INT, "released: all absent");

    for (int p = AO_PHASE_BASELINE; p < AO_PHASE_COUNT; p++) {
        char v[32];
        snprintf(v, sizeof v, "\"%s\"", ao_phase_name((enum ao_phase)p));
        cJSON *k = cJSON_Parse(stored);
        cJSON_ReplaceItemInObject(k, "phase", cJSON_Parse(v));
        all &= ao_run_state_decode(k, &back, err, sizeof err) == 0 && back.phase == (enum ao_phase)p;
        enc = all ? ao_run_state_json(&back) : NULL;
        all &= enc && !strcmp(ao_json_str(enc, "phase", ""), ao_phase_name((enum ao_phase)p));
        cJSON_Delete(enc);
        ao_run_state_release(&back);
        cJSON_Delete(k);
    }
    CHECK(all, "every phase is kept by its name and read back");
    CHECK(!strcmp(ao_phase_name(AO_PHASE_COLLECT), "collect") && !strcmp(ao_phase_name(AO_PHASE_DONE), "done") &&
              !strcmp(ao_phase_name(AO_PHASE_COUNT), "none") && !strcmp(ao_phase_name(AO_PHASE_NONE), "none"),
          "the names a state has always had (status and the report show them)");

    CHECK(decode_with("phase", "\"Done\"", err, sizeof err) < 0 && strstr(err, "phase"),
          "a phase of another name is refused (%s)", err);
    CHECK(decode_with("phase", "5", err, sizeof err) < 0, "so is a number for a phase (%s)", err);
    CHECK(decode_with("phase", NULL, err, sizeof err) < 0, "and a state without one (%s)", err);
    CHECK(decode_with("iter", "1.5", err, sizeof err) < 0 && strstr(err, "iter"),
          "a count that is not whole is refused (%s)", err);
    CHECK(decode_with("kernels", "-1", err, sizeof err) < 0, "so is a negative count (%s)", err);
    CHECK(decode_with("task", NULL, err, sizeof err) < 0 && strstr(err, "task"),
          "what every run has must be there (%s)", err);
    CHECK(decode_with("history", "{}", err, sizeof err) < 0 && strstr(err, "history"),
          "the history is an array (%s)", err);
    CHECK(decode_with("pairs", "{\"a\":1}", err, sizeof err) < 0, "so are the pairs (%s)", err);
    CHECK(decode_with("favourite", "1", err, sizeof err) < 0 && strstr(err, "favourite"),
          "an unknown field is refused, not carried (%s)", err);
    CHECK(decode_with("config", NULL, err, sizeof err) < 0 && strstr(err, "config"),
          "a state without its config is refused (%s)", err);
    CHECK(decode_with("config", "{\"beam\":65}", err, sizeof err) < 0 && strstr(err, "beam"),
          "a config out of bounds is refused as at the edge (%s)", err);
    CHECK(decode_with("config", "{\"beems\":3}", err, sizeof err) < 0 && strstr(err, "beems"),
          "so is a config with a field of another name (%s)", err);
    CHECK(decode_with("pairs", NULL, err, sizeof err) == 0 && decode_with("final_stop", "\"iterations\"", err,
                                                                          sizeof err) == 0,
          "the fields of some phases only may be there or not (%s)", err);
    CHECK(ao_run_state_decode(NULL, &back, err, sizeof err) < 0 && !back.task, "no state is not a state");
    cJSON_Delete(j);
    return CHECK_DONE();
}
