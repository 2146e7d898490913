/* trn_report.c - reading the Neuron tools' words: failure classes and the
 * profiler's summary (trn_report.h) */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "targets/trn_report.h"

/* Matched in order: the first rule with a needle in the text decides. */
static const struct {
    const char *cls;
    const char *needles[8];
} rules[] = {
    {"timeout", {"Hard timeout", "timed out after", NULL}},
    {"no_kernel", {"No kernel function found", NULL}},
    {"psum_overflow", {"couldn't be allocated in PSUM", "@PSUM", NULL}},
    {"sbuf_overflow", {"[GCA035]", "couldn't be allocated in SB", "Allocated memory out of bound",
                       "Total SB Partition Size", NULL}},
    {"partition_limit", {"number of partitions", "err_num_partition", "partition dimension",
                         NULL}},
    {"shape_limit", {"err_size_of_dimension_exceed_arch_limit", "exceed architecture limitation",
                     "err_shape_mismatch", NULL}},
    {"output_dependency", {"Unexpected output dependencies", NULL}},
    {"out_of_bounds", {"Out-of-bound access", "out-of-bound", "err_out_of_bound", NULL}},
    {"memory_space", {"to be in address space", "err_unsupported_memory", "is not psum", NULL}},
    {"device_oom", {"Failed to alloc DEVICE memory", "dmem_alloc", "NRT_RESOURCE", NULL}},
    {"api_version", {"deprecated `neuronxcc.nki", "deprecated neuronxcc.nki", "has been removed",
                     "is not available in", "err_needs_device", NULL}},
    {"internal_compiler", {"[F134]", "terminated abnormally", "[TEN404]", "Internal tensorizer error",
                           "Internal compiler error", "failed verifier check", NULL}},
};

/* The first "[ABC123]" code, or "err_..." name, in text. */
static void find_code(const char *text, char *code, size_t len)
{
    const char *p, *e;

    code[0] = '\0';
    for (p = strchr(text, '['); p; p = strchr(p + 1, '[')) {
        size_t n = 0;
        while (isupper((unsigned char)p[1 + n]))
            n++;
        if (n >= 2 && n <= 4 && isdigit((unsigned char)p[1 + n]) && isdigit((unsigned char)p[2 + n]) &&
            isdigit((unsigned char)p[3 + n]) && p[4 + n] == ']') {
            snprintf(code, len, "%.*s", (int)n + 3, p + 1);
            return;
        }
    }
    if ((p = strstr(text, "err_"))) {
        for (e = p + 4; islower((unsigned char)*e) || *e == '_' || isdigit((unsigned char)*e); e++)
            ;
        snprintf(code, len, "%.*s", (int)(e - p), p);
    }
}

const char *ao_trn_failure_class(const char *text, char *code, size_t codelen)
{
    if (code && codelen)
        code[0] = '\0';
    if (!text)
        return "other";
    if (code && codelen)
        find_code(text, code, codelen);
    for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++)
        for (int k = 0; rules[i].needles[k]; k++)
            if (strstr(text, rules[i].needles[k]))
                return rules[i].cls;
    return "other";
}

const char *const ao_trn_counter_names[AO_TRN_NCOUNTERS] = {
    "hbm_read_bytes", "hbm_write_bytes", "psum_read_bytes", "psum_write_bytes",
    "sbuf_read_bytes", "sbuf_write_bytes", "spill_reload_bytes", "spill_save_bytes",
    "hardware_flops", "transpose_flops", "peak_flops_bandwidth_ratio", "mm_arithmetic_intensity",
    "hfu_estimated_percent", "scalar_engine_active_time_percent",
    "vector_engine_active_time_percent", "gpsimd_engine_active_time_percent",
};

static int is_percent(int i)
{
    const char *n = ao_trn_counter_names[i];
    size_t l = strlen(n);
    return l > 8 && strcmp(n + l - 8, "_percent") == 0;
}

/* A number field; the profiler writes some as strings. */
static double num(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    char *end;
    double d;

    if (cJSON_IsNumber(v))
        return v->valuedouble;
    if (cJSON_IsString(v) && v->valuestring[0]) {
        d = strtod(v->valuestring, &end);
        if (*end == '\0' && isfinite(d))
            return d;
    }
    return NAN;
}

int ao_trn_summary_parse(const char *json, double peak_flops, struct ao_trn_summary *s, char *err,
                         size_t errlen)
{
    cJSON *root = cJSON_Parse(json ? json : "");
    const cJSON *sum = root;
    double hfu, expect;
    int any_over = 0;

    memset(s, 0, sizeof *s);
    s->total_time_s = NAN;
    for (int i = 0; i < AO_TRN_NCOUNTERS; i++)
        s->counter[i] = NAN;
    if (!root || !cJSON_IsObject(root)) {
        snprintf(err, errlen, "the profile summary is not a JSON object");
        cJSON_Delete(root);
        return -1;
    }
    /* {"<neff or trace name>": {...}}, as AccelOpt reads it; or the summary itself */
    if (!cJSON_GetObjectItemCaseSensitive(root, "total_time") && root->child) {
        sum = root->child;
        if (cJSON_IsArray(sum))
            sum = sum->child;
    }
    if (!cJSON_IsObject(sum) || !(num(sum, "total_time") > 0)) {
        snprintf(err, errlen, "the profile summary has no positive total_time");
        cJSON_Delete(root);
        return -1;
    }
    s->total_time_s = num(sum, "total_time");
    for (int i = 0; i < AO_TRN_NCOUNTERS; i++) {
        s->counter[i] = num(sum, ao_trn_counter_names[i]);
        any_over |= is_percent(i) && s->counter[i] > 1.0;
    }
    /* the schema says "percent"; AccelOpt's trn1 data are fractions: decide
     * by which scale makes hfu agree with the flops over the time */
    hfu = s->counter[12];
    expect = peak_flops > 0 && s->counter[8] > 0 ? s->counter[8] / (peak_flops * s->total_time_s) : NAN;
    if (isfinite(expect) && expect > 0 && hfu > 0)
        s->percent_scale = fabs(log(hfu / 100 / expect)) < fabs(log(hfu / expect));
    else
        s->percent_scale = any_over;
    if (s->percent_scale)
        for (int i = 0; i < AO_TRN_NCOUNTERS; i++)
            if (is_percent(i) && isfinite(s->counter[i]))
                s->counter[i] /= 100;
    cJSON_Delete(root);
    return 0;
}

cJSON *ao_trn_counters_json(const struct ao_trn_summary *s)
{
    cJSON *o = cJSON_CreateObject();

    for (int i = 0; i < AO_TRN_NCOUNTERS; i++)
        if (isfinite(s->counter[i]))
            cJSON_AddNumberToObject(o, ao_trn_counter_names[i], s->counter[i]);
    return o;
}
