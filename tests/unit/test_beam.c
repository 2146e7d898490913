/* test_beam.c - the kept kernels decoded and encoded whole; a member made
 * from a result; what does not decode is refused */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "state/beam.h"

/* A beam as the selector has always stored it. */
static const char *const stored =
    "[{\"kernel_id\":\"kernel:r:1:0.1.0\",\"sha256\":\"aa\",\"source\":\"int k;\",\"parent\":\"bb\","
    "\"plan\":\"plan:r:1:0.1\",\"plan_text\":\"tile it\",\"slot\":\"0.1.0\",\"latency_ns\":1000.5,"
    "\"pct_of_peak\":0.25,\"iter\":1,\"profile\":{\"latency_min_ns\":990,\"spread\":0.02,\"t_min_ns\":500,"
    "\"bound\":\"memory\",\"t_memory_ns\":500,\"t_matmul_ns\":100,\"t_elementwise_ns\":10,"
    "\"speedup_vs_baseline\":2,\"max_rel_l2\":1e-7,\"repeats\":25}},"
    "{\"kernel_id\":\"kernel:r:0:0.0.0\",\"sha256\":\"bb\",\"source\":\"int b;\",\"slot\":\"0.0.0\","
    "\"latency_ns\":2001,\"iter\":0,\"profile\":{}}]";

static int decode_text(const char *text, struct ao_beam *b, char *err, size_t len)
{
    cJSON *j = cJSON_Parse(text);
    int rc = ao_beam_decode(j, b, err, len);

    cJSON_Delete(j);
    ao_beam_release(b);
    return rc;
}

int main(void)
{
    struct ao_beam b, c;
    struct ao_beam_member m, copy;
    struct ao_result_msg r;
    char err[256] = "", big[64 * 20 + 8];
    cJSON *j = cJSON_Parse(stored), *enc;
    size_t at = 0;

    CHECK(ao_beam_decode(j, &b, err, sizeof err) == 0 && b.n == 2, "a stored beam decodes (%s)", err);
    CHECK(!strcmp(b.m[0].sha256, "aa") && b.m[0].latency_ns == 1000.5 && b.m[0].iter == 1 &&
              b.m[0].profile.repeats == 25 && b.m[0].profile.spread == 0.02 && !strcmp(b.m[0].profile.bound, "memory"),
          "its members and their profiles, each field of its type");
    CHECK(!b.m[1].parent && isnan(b.m[1].pct_of_peak) && isnan(b.m[1].profile.spread) &&
              b.m[1].profile.repeats == AO_ABSENT_INT,
          "what a member lacks stays absent");
    enc = ao_beam_json(&b);
    CHECK(enc && cJSON_Compare(enc, j, 1), "encoded, it is the beam it was read from");
    cJSON_Delete(enc);

    CHECK(ao_beam_member_copy(&copy, &b.m[0]) == 0 && !strcmp(copy.source, "int k;") && copy.source != b.m[0].source &&
              copy.profile.t_matmul_ns == 100,
          "a copy is deep");
    ao_beam_member_release(&copy);

    ao_msg_init(&ao_msg_result, &r);
    r.kernel_id = strdup("kernel:r:2:1.0.0");
    r.sha256 = strdup("cc");
    r.source = strdup("int c;");
    r.slot = strdup("1.0.0");
    r.status = strdup("ok");
    r.bound = strdup("matmul");
    r.latency_ns = 500;
    r.spread = 0.04;
    r.repeats = 9;
    r.t_matmul_ns = 400;
    r.machine_load = 1.75;
    r.machine_slowdown = 2.5;
    r.machine_spread = 31;
    r.machine_spread_calibrated = 0.3;
    ao_beam_member_of(&m, &r, 2);
    CHECK(m.iter == 2 && m.latency_ns == 500 && !strcmp(m.slot, "1.0.0") &&
              m.profile.spread == 0.04 && m.profile.repeats == 9 && !strcmp(m.profile.bound, "matmul") &&
              m.profile.t_matmul_ns == 400 && !m.parent && isnan(m.profile.t_memory_ns),
          "a correct result becomes a member with its measurement as the profile");
    enc = ao_beam_member_json(&m);
    CHECK(enc && !cJSON_GetObjectItem(enc, "status") && cJSON_GetObjectItem(enc, "profile") &&
              ao_json_num(cJSON_GetObjectItem(enc, "profile"), "repeats", 0) == 9 &&
              ao_json_num(cJSON_GetObjectItem(enc, "profile"), "machine_load", 0) == 1.75 &&
              ao_json_num(cJSON_GetObjectItem(enc, "profile"), "machine_slowdown", 0) == 2.5 &&
              ao_json_num(cJSON_GetObjectItem(enc, "profile"), "machine_spread", 0) == 31 &&
              ao_json_num(cJSON_GetObjectItem(enc, "profile"), "machine_spread_calibrated", 0) == 0.3,
          "encoded: the member's fields only, its profile nested, with how busy the machine was "
          "(issue 47: the planner sees it)");
    cJSON_Delete(enc);
    ao_beam_member_release(&m);
    ao_msg_release(&ao_msg_result, &r);
    ao_beam_release(&b);

    CHECK(decode_text("{}", &c, err, sizeof err) < 0 && strstr(err, "array"), "a beam is an array (%s)", err);
    CHECK(decode_text("[{\"latency_ns\":\"fast\"}]", &c, err, sizeof err) < 0 && strstr(err, "latency_ns"),
          "a member's field of the wrong type is refused (%s)", err);
    CHECK(decode_text("[{\"sha256\":\"a\",\"verdict\":\"ok\"}]", &c, err, sizeof err) < 0 && strstr(err, "verdict"),
          "so is a field a member does not have (%s)", err);
    CHECK(decode_text("[{\"profile\":{\"spread\":\"wide\"}}]", &c, err, sizeof err) < 0 && strstr(err, "spread"),
          "and a profile's (%s)", err);
    CHECK(decode_text("[1]", &c, err, sizeof err) < 0, "a member is an object (%s)", err);
    big[at++] = '[';
    for (int i = 0; i <= AO_MAX_BEAM; i++)
        at += (size_t)snprintf(big + at, sizeof big - at, "%s{}", i ? "," : "");
    big[at++] = ']';
    big[at] = 0;
    CHECK(decode_text(big, &c, err, sizeof err) < 0, "a beam wider than %d is refused (%s)", AO_MAX_BEAM, err);
    cJSON_Delete(j);
    return CHECK_DONE();
}
