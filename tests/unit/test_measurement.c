/* test_measurement.c - a measurement kept as JSON and back, and the one
 * place a result is made from it */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "measure/measurement.h"

int main(void)
{
    struct ao_measurement m, back;
    struct ao_kernel_msg k;
    struct ao_result_msg r;
    char err[256];
    cJSON *j, *bad;

    ao_measurement_init(&m);
    CHECK(m.verdict == AO_V_NONE && isnan(m.latency_ns) && m.steady == -1 && !m.reason,
          "a new measurement has no verdict and no numbers");
    m.verdict = AO_V_OK;
    m.latency_ns = 200;
    m.spread = 0.01;
    m.repeats = 40;
    m.steady = 1;
    m.bound = strdup("memory");
    m.timing = cJSON_Parse("{\"compile_ns\": 5}");
    j = ao_msg_encode(&ao_rec_measurement, &m);
    CHECK(j && !strcmp(cJSON_GetObjectItem(j, "status")->valuestring, "ok") &&
              !cJSON_GetObjectItem(j, "pct_of_peak") && !cJSON_GetObjectItem(j, "type"),
          "kept as JSON: the verdict by its name, absent numbers left out, no envelope");
    CHECK(ao_record_decode(&ao_rec_measurement, j, &back, err, sizeof err) == 0 && back.verdict == AO_V_OK &&
              back.latency_ns == 200 && back.repeats == 40 && back.steady == 1 && !strcmp(back.bound, "memory") &&
              ao_json_num(back.timing, "compile_ns", 0) == 5,
          "and read back the same");
    ao_measurement_release(&back);
    cJSON_ReplaceItemInObject(j, "status", cJSON_CreateString("fast"));
    CHECK(ao_record_decode(&ao_rec_measurement, j, &back, err, sizeof err) < 0 && strstr(err, "unknown value"),
          "a verdict that is none of the names is refused (%s)", err);
    bad = cJSON_Parse("{\"type\":\"result\",\"status\":\"ok\"}");
    CHECK(ao_record_decode(&ao_rec_measurement, bad, &back, err, sizeof err) < 0 && strstr(err, "'type'"),
          "an old cache entry (a whole result) is not a measurement: a miss (%s)", err);
    cJSON_Delete(bad);
    cJSON_Delete(j);

    ao_msg_init(&ao_msg_kernel, &k);
    ao_env_set(&k.env, "kernel", "kernel:r1:2:0.1.0", "r1", "matmul", "cpu", 2);
    k.source = strdup("src");
    k.size = strdup("tiny");
    k.slot = strdup("0.1.0");
    k.parent_latency_ns = 400;
    k.baseline_latency_ns = 1000;
    k.attempt = 2;
    CHECK(ao_result_of(&k, &m, "abc", "def", 0, &r, err, sizeof err) == 0 && !strcmp(r.env.id, "result:kernel:r1:2:0.1.0") &&
              !strcmp(r.kernel_id, k.env.id) && !strcmp(r.status, "ok") && r.speedup == 2 &&
              r.speedup_vs_baseline == 5 && !strcmp(r.sha256, "abc") && !strcmp(r.task_sha256, "def") &&
              r.attempt == 2 && r.cached == 0 && !strcmp(r.slot, "0.1.0") && r.repeats == 40,
          "the result: the kernel's envelope and provenance, the numbers, speedups over parent and baseline");
    ao_msg_release(&ao_msg_result, &r);
    m.verdict = AO_V_REJECTED;
    CHECK(ao_result_of(&k, &m, NULL, NULL, 1, &r, err, sizeof err) == 0 && isnan(r.speedup) &&
              isnan(r.speedup_vs_baseline) && !strcmp(r.status, "rejected") && r.cached == 1,
          "a kernel that is not ok is given no speedup, whatever it measured");
    ao_msg_release(&ao_msg_result, &r);
    m.verdict = AO_V_OK;
    m.head_to_head = cJSON_Parse("{\"speedup\": 3.5, \"speedup_low\": 3.1, \"speedup_high\": 3.9}");
    CHECK(ao_result_of(&k, &m, NULL, NULL, 0, &r, err, sizeof err) == 0 && r.speedup_vs_baseline == 3.5 &&
              isnan(r.speedup),
          "a final head-to-head's speedup is its paired ratios' median, not a ratio of latencies");
    ao_msg_release(&ao_msg_result, &r);
    free(k.env.id);
    k.env.id = malloc(600);
    memset(k.env.id, 'k', 599);
    k.env.id[599] = '\0';
    CHECK(ao_result_of(&k, &m, NULL, NULL, 0, &r, err, sizeof err) < 0 && strstr(err, "too long"),
          "a kernel id too long for its result's id is an error, never a cut id (%s)", err);
    ao_msg_release(&ao_msg_kernel, &k);
    ao_measurement_release(&m);
    return CHECK_DONE();
}
