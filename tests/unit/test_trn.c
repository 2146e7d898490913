/* test_trn.c - reading the Neuron tools: failure classes of the documented
 * messages, and the profiler's summary-json (tests/fixtures/trn: recorded
 * shapes, not captures from a Trainium machine) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/util.h"
#include "targets/trn_report.h"

#define TRN1_PE_FLOPS (2.0 * 128 * 128 * 2.8e9) /* the profiler's trn1 TensorE peak (docs/TARGETS.md) */

static char *fixture(const char *name)
{
    char path[256], err[200];
    snprintf(path, sizeof path, "%s/tests/fixtures/trn/%s", ao_home(), name);
    return ao_read_file(path, NULL, err, sizeof err);
}

static double counter(const struct ao_trn_summary *s, const char *name)
{
    for (int i = 0; i < AO_TRN_NCOUNTERS; i++)
        if (!strcmp(ao_trn_counter_names[i], name))
            return s->counter[i];
    return NAN;
}

int main(void)
{
    char err[300], code[40], *text;
    struct ao_trn_summary s, s2;

    /* every documented message to its class, with the tool's code */
    if ((text = fixture("errors.txt"))) {
        int n = 0, bad = 0;
        for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
            char *tab = strchr(line, '\t');
            const char *got;
            if (!tab)
                continue;
            *tab = '\0';
            got = ao_trn_failure_class(tab + 1, code, sizeof code);
            n++;
            if (strcmp(got, line) != 0) {
                bad++;
                printf("# '%s' classed %s, not %s\n", tab + 1, got, line);
            }
        }
        CHECK(n >= 15 && !bad, "each of %d documented messages gets its class (%d wrong)", n, bad);
        free(text);
    } else {
        CHECK(0, "tests/fixtures/trn/errors.txt is there");
    }
    ao_trn_failure_class("[GCA035] Instruction: I-1 couldn't be allocated in SB", code, sizeof code);
    CHECK(!strcmp(code, "GCA035"), "a bracketed code is the message's code (%s)", code);
    ao_trn_failure_class("x: err_out_of_bound_access: index 9", code, sizeof code);
    CHECK(!strcmp(code, "err_out_of_bound_access"), "an err_ name is the code (%s)", code);
    CHECK(!strcmp(ao_trn_failure_class(NULL, code, sizeof code), "other") && !code[0],
          "no text: other, no code");

    /* the summary as AccelOpt's trn1 data have it: fractions stay fractions */
    text = fixture("summary-trn1.json");
    CHECK(text && ao_trn_summary_parse(text, TRN1_PE_FLOPS, &s, err, sizeof err) == 0 &&
              s.total_time_s == 0.004126 && !s.percent_scale &&
              counter(&s, "hbm_read_bytes") == 141623296 && counter(&s, "spill_save_bytes") == 67108864 &&
              fabs(counter(&s, "hfu_estimated_percent") - 0.41411) < 1e-9 &&
              fabs(counter(&s, "vector_engine_active_time_percent") - 0.135) < 1e-9,
          "a trn1 summary: total_time and the counters read, the fractions kept (%s)", err);
    {
        int all = 1;
        for (int i = 0; i < AO_TRN_NCOUNTERS; i++)
            all &= isfinite(s.counter[i]);
        CHECK(all, "all sixteen of AccelOpt's counters are in it");
    }
    free(text);
    /* the same on the schema's 0-100 scale, numbers as strings: the same fractions */
    text = fixture("summary-percent.json");
    CHECK(text && ao_trn_summary_parse(text, TRN1_PE_FLOPS, &s2, err, sizeof err) == 0 &&
              s2.percent_scale && fabs(counter(&s2, "hfu_estimated_percent") - 0.41411) < 1e-9 &&
              fabs(counter(&s2, "gpsimd_engine_active_time_percent") - 0.0007) < 1e-12 &&
              counter(&s2, "hardware_flops") == counter(&s, "hardware_flops"),
          "percent-scale fields become the same fractions (decided by hfu against flops/time)");
    free(text);
    /* the scale without the flops to decide by: from the range */
    text = fixture("summary-list.json");
    CHECK(text && ao_trn_summary_parse(text, 0, &s, err, sizeof err) == 0 && s.total_time_s == 0.000212 &&
              !s.percent_scale && counter(&s, "vector_engine_active_time_percent") == 0.61 &&
              isnan(counter(&s, "spill_save_bytes")),
          "a summary inside a list is read; counters it lacks are NAN (%s)", err);
    {
        cJSON *o = ao_trn_counters_json(&s);
        CHECK(o && cJSON_GetObjectItem(o, "hbm_read_bytes") && !cJSON_GetObjectItem(o, "spill_save_bytes"),
              "the counters' JSON leaves out those not measured");
        cJSON_Delete(o);
    }
    free(text);
    text = fixture("summary-no-time.json");
    CHECK(text && ao_trn_summary_parse(text, TRN1_PE_FLOPS, &s, err, sizeof err) < 0 &&
              strstr(err, "total_time"),
          "no total_time: refused (%s)", err);
    free(text);
    CHECK(ao_trn_summary_parse("[1,2]", 0, &s, err, sizeof err) < 0 &&
              ao_trn_summary_parse("{\"a\": {\"total_time\": -1}}", 0, &s, err, sizeof err) < 0 &&
              ao_trn_summary_parse("not json", 0, &s, err, sizeof err) < 0,
          "not an object, a negative time, not JSON: refused");
    return CHECK_DONE();
}
