/* accelopt.c - the front: profile, calibrate, bench */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "calib.h"
#include "config.h"
#include "exitcode.h"
#include "log.h"
#include "msg.h"
#include "profstage.h"
#include "signals.h"
#include "util.h"
#include "version.h"

#define AO_EXIT_KERNEL 3 /* profile: the kernel was measured and is not ok */

static const struct ao_option profile_opts[] = {
    {"task", 'T', AO_OPT_STR, NULL, "DIR", "the task directory (e.g. nkibench/matmul)"},
    {"size", 's', AO_OPT_STR, "tiny", "CLASS", "size class: tiny, cpu or paper"},
    {"parent-latency", 0, AO_OPT_NUM, NULL, "NS", "the parent's latency, for the speedup"},
    {"baseline-latency", 0, AO_OPT_NUM, NULL, "NS", "the baseline's latency, for the speedup"},
    AO_PROFILER_OPTIONS,
    AO_COMMON_OPTIONS,
};

static const struct ao_option calibrate_opts[] = {
    {"calibration", 0, AO_OPT_STR, NULL, "FILE", "where to store it (default: in the state dir)"},
    {"bw-mib", 0, AO_OPT_INT, "256", "MIB", "array size for the bandwidth runs"},
    AO_COMMON_OPTIONS,
};

static const struct ao_option bench_opts[] = {
    {"size", 's', AO_OPT_STR, "cpu", "CLASS", "size class: tiny, cpu or paper"},
    {"tasks", 0, AO_OPT_STR, NULL, "LIST", "comma-separated task names (default: all)"},
    {"json", 0, AO_OPT_STR, NULL, "FILE", "also write the table as JSON to FILE"},
    AO_PROFILER_OPTIONS,
    AO_COMMON_OPTIONS,
};

#define N(a) ((int)(sizeof a / sizeof a[0]))

static void usage(FILE *out)
{
    fprintf(out,
            "usage: accelopt COMMAND [options]\n\n"
            "commands:\n"
            "  profile    compile, check and time one kernel file; prints one result line\n"
            "  calibrate  measure this machine's single-core peaks for the cpu target\n"
            "  bench      profile every benchmark baseline and print a table\n\n"
            "'accelopt COMMAND --help' shows a command's options.\n");
}

/* Parse a subcommand's options; returns -1 to exit with *code. */
static int setup(struct ao_config *c, const struct ao_option *opts, int n, int argc, char **argv,
                 const char *synopsis, int *code)
{
    char err[AO_ERRLEN];
    enum ao_log_level lv;

    if (ao_config_load(c, opts, n, argc, argv, err, sizeof err) < 0) {
        ao_err("%s", err);
        *code = AO_EXIT_USAGE;
        return -1;
    }
    if (ao_config_bool(c, "help")) {
        ao_config_usage(stdout, synopsis, opts, n);
        *code = AO_EXIT_OK;
        return -1;
    }
    if (ao_config_bool(c, "version")) {
        printf("accelopt %s\n", AO_VERSION);
        *code = AO_EXIT_OK;
        return -1;
    }
    if (ao_log_level_parse(ao_config_str(c, "log"), &lv) == 0)
        ao_log_set_level(lv);
    return 0;
}

static int print_json(const cJSON *j)
{
    char *s = cJSON_PrintUnformatted(j);
    int rc = s && printf("%s\n", s) > 0 ? 0 : -1;
    cJSON_free(s);
    return rc;
}

/* Profile one source through the stage core, as the profiler would. */
static int profile_source(struct ao_profstage *st, const char *task_dir, const char *task_name,
                          const char *size, const char *source, double parent, double baseline,
                          struct ao_result_msg *r, char *err, size_t errlen)
{
    struct ao_kernel_msg k;
    char hex[65], id[100];
    int rc;

    ao_msg_init(&ao_msg_kernel, &k);
    ao_sha256_hex(source, strlen(source), hex);
    snprintf(id, sizeof id, "cli:%.16s", hex);
    ao_env_set(&k.env, "kernel", id, "cli", task_name, "cpu", 0);
    k.source = strdup(source);
    k.sha256 = strdup(hex);
    k.size = strdup(size);
    k.task_path = strdup(task_dir);
    k.parent_latency_ns = parent;
    k.baseline_latency_ns = baseline;
    rc = ao_profstage_kernel(st, &k, r, err, errlen);
    ao_msg_release(&ao_msg_kernel, &k);
    return rc;
}

static int cmd_profile(int argc, char **argv)
{
    struct ao_config c;
    struct ao_profstage_opts po;
    struct ao_profstage *st = NULL;
    struct ao_result_msg r;
    struct ao_task t;
    char err[AO_ERRLEN], *src = NULL;
    cJSON *j = NULL;
    int code = AO_EXIT_FAIL;

    ao_msg_init(&ao_msg_result, &r);
    if (setup(&c, profile_opts, N(profile_opts), argc, argv,
              "accelopt profile --task DIR [--size CLASS] [options] FILE.c", &code) < 0)
        goto out;
    code = AO_EXIT_USAGE;
    if (!ao_config_str(&c, "task") || c.nargs != 1) {
        ao_err("profile needs --task DIR and one kernel file (see --help)");
        goto out;
    }
    if (ao_profstage_opts_from_config(&c, &po, err, sizeof err) < 0 ||
        ao_task_load(ao_config_str(&c, "task"), &t, err, sizeof err) < 0 ||
        ao_task_size(&t, ao_config_str(&c, "size"), (long long[AO_MAX_DIMS]){0}, err, sizeof err) < 0 ||
        !(src = ao_read_file(c.args[0], NULL, err, sizeof err))) {
        ao_err("%s", err);
        goto out;
    }
    code = AO_EXIT_FAIL;
    ao_signals_install();
    if (!(st = ao_profstage_new(&po, err, sizeof err)) ||
        profile_source(st, t.dir, t.name, ao_config_str(&c, "size"), src,
                       ao_config_str(&c, "parent-latency") ? ao_config_num(&c, "parent-latency") : NAN,
                       ao_config_str(&c, "baseline-latency") ? ao_config_num(&c, "baseline-latency") : NAN,
                       &r, err, sizeof err) < 0) {
        ao_err("%s", err);
        goto out;
    }
    if (!(j = ao_msg_encode(&ao_msg_result, &r)) || print_json(j) < 0) {
        ao_err("cannot write the result");
        goto out;
    }
    code = strcmp(r.status, "ok") == 0 ? AO_EXIT_OK :
           strcmp(r.status, "internal_error") == 0 ? AO_EXIT_FAIL : AO_EXIT_KERNEL;
out:
    cJSON_Delete(j);
    ao_msg_release(&ao_msg_result, &r);
    ao_profstage_free(st);
    free(src);
    ao_config_release(&c);
    return code;
}

static int cmd_calibrate(int argc, char **argv)
{
    struct ao_config c;
    struct ao_calib cal;
    char path[600], err[AO_ERRLEN];
    int code = AO_EXIT_FAIL;

    if (setup(&c, calibrate_opts, N(calibrate_opts), argc, argv,
              "accelopt calibrate [--calibration FILE] [--bw-mib MIB]", &code) < 0)
        goto out;
    if (ao_config_str(&c, "calibration"))
        snprintf(path, sizeof path, "%s", ao_config_str(&c, "calibration"));
    else
        ao_calib_default_path(path, sizeof path);
    ao_info("measuring single-core peaks (a few seconds)");
    if (ao_calib_measure(path, (int)ao_config_int(&c, "bw-mib"), &cal, err, sizeof err) < 0) {
        ao_err("%s", err);
        goto out;
    }
    printf("{\"calibration\":\"%s\",\"id\":\"%s\",\"cpu_model\":\"%s\",\"bandwidth_gbs\":%.2f,"
           "\"bandwidth_spread\":%.4f,\"bandwidth_method\":\"%s\",\"fma_gflops\":%.2f,"
           "\"fma_spread\":%.4f,\"vec_gflops\":%.2f,\"vec_spread\":%.4f}\n",
           path, cal.id, cal.cpu_model, cal.bw_gbs, cal.bw_spread, cal.bw_method, cal.fma_gflops,
           cal.fma_spread, cal.vec_gflops, cal.vec_spread);
    code = AO_EXIT_OK;
out:
    ao_config_release(&c);
    return code;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Task names: from --tasks, or every nkibench directory with a task.json. */
static int list_tasks(const char *only, char **names, int max)
{
    char dir[600], path[900];
    int n = 0;
    DIR *d;
    struct dirent *e;

    if (only) {
        char *copy = strdup(only), *save = NULL;
        for (char *s = strtok_r(copy, ",", &save); s && n < max; s = strtok_r(NULL, ",", &save))
            names[n++] = strdup(s);
        free(copy);
        return n;
    }
    snprintf(dir, sizeof dir, "%s/nkibench", ao_home());
    if (!(d = opendir(dir)))
        return 0;
    while ((e = readdir(d)) && n < max) {
        snprintf(path, sizeof path, "%s/%s/task.json", dir, e->d_name);
        if (e->d_name[0] != '.' && access(path, R_OK) == 0)
            names[n++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(names, (size_t)n, sizeof *names, cmp_str);
    return n;
}

static int cmd_bench(int argc, char **argv)
{
    struct ao_config c;
    struct ao_profstage_opts po;
    struct ao_profstage *st = NULL;
    char err[AO_ERRLEN], *names[64];
    const char *size;
    cJSON *rows = cJSON_CreateArray(), *doc = NULL;
    double logsum = 0;
    int n = 0, nok = 0, code = AO_EXIT_FAIL;

    if (setup(&c, bench_opts, N(bench_opts), argc, argv,
              "accelopt bench [--size CLASS] [--tasks a,b] [--json FILE] [options]", &code) < 0)
        goto out;
    if (ao_profstage_opts_from_config(&c, &po, err, sizeof err) < 0) {
        ao_err("%s", err);
        code = AO_EXIT_USAGE;
        goto out;
    }
    size = ao_config_str(&c, "size");
    ao_signals_install();
    if (!(st = ao_profstage_new(&po, err, sizeof err))) {
        ao_err("%s", err);
        goto out;
    }
    n = list_tasks(ao_config_str(&c, "tasks"), names, 64);
    if (ao_profstage_calib(st)) {
        const struct ao_calib *cal = ao_profstage_calib(st);
        printf("size %s; calibration %s: %s, %.1f GB/s (%s), FMA %.1f GFLOP/s, elementwise %.1f "
               "GFLOP/s\n", size, cal->id, cal->cpu_model, cal->bw_gbs, cal->bw_method,
               cal->fma_gflops, cal->vec_gflops);
    }
    printf("%-18s %-10s %14s %9s %12s %9s\n", "task", "status", "latency", "spread", "bound",
           "% of peak");
    for (int i = 0; i < n && !ao_stop_requested(); i++) {
        char tdir[700], bpath[800], *src;
        struct ao_result_msg r;
        cJSON *row;

        ao_msg_init(&ao_msg_result, &r);
        snprintf(tdir, sizeof tdir, "%s/nkibench/%s", ao_home(), names[i]);
        snprintf(bpath, sizeof bpath, "%s/baseline.c", tdir);
        if (!(src = ao_read_file(bpath, NULL, err, sizeof err)) ||
            profile_source(st, tdir, names[i], size, src, NAN, NAN, &r, err, sizeof err) < 0) {
            ao_err("%s: %s", names[i], err);
            free(src);
            continue;
        }
        free(src);
        printf("%-18s %-10s %11.3f ms %8.2f%% %12s %8.1f%%\n", names[i], r.status,
               r.latency_ns / 1e6, r.spread * 100, r.bound ? r.bound : "-",
               isfinite(r.pct_of_peak) ? r.pct_of_peak * 100 : NAN);
        fflush(stdout);
        if (strcmp(r.status, "ok") == 0 && r.pct_of_peak > 0) {
            logsum += log(r.pct_of_peak);
            nok++;
        } else if (r.reason) {
            ao_warn("%s: %s", names[i], r.reason);
        }
        if ((row = ao_msg_encode(&ao_msg_result, &r)))
            cJSON_AddItemToArray(rows, row);
        ao_msg_release(&ao_msg_result, &r);
    }
    if (nok)
        printf("%-18s %-10s %14s %9s %12s %8.1f%%\n", "geomean", "", "", "", "",
               exp(logsum / nok) * 100);
    if (ao_config_str(&c, "json")) {
        char *s;
        const struct ao_calib *cal = ao_profstage_calib(st);
        doc = cJSON_CreateObject();
        cJSON_AddStringToObject(doc, "size", size);
        if (cal) {
            cJSON_AddStringToObject(doc, "calibration", cal->id);
            cJSON_AddStringToObject(doc, "cpu_model", cal->cpu_model);
        }
        if (nok)
            cJSON_AddNumberToObject(doc, "geomean_pct_of_peak", exp(logsum / nok));
        cJSON_AddItemToObject(doc, "results", rows);
        rows = NULL;
        s = cJSON_Print(doc);
        if (!s || ao_write_file(ao_config_str(&c, "json"), s, strlen(s), err, sizeof err) < 0) {
            ao_err("%s", s ? err : "out of memory");
            cJSON_free(s);
            goto out;
        }
        cJSON_free(s);
    }
    code = nok == n && n > 0 ? AO_EXIT_OK : AO_EXIT_FAIL;
out:
    for (int i = 0; i < n; i++)
        free(names[i]);
    cJSON_Delete(rows);
    cJSON_Delete(doc);
    ao_profstage_free(st);
    ao_config_release(&c);
    return code;
}

int main(int argc, char **argv)
{
    int code;

    ao_log_init("accelopt");
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? AO_EXIT_USAGE : AO_EXIT_OK;
    }
    if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
        printf("accelopt %s\n", AO_VERSION);
        return AO_EXIT_OK;
    }
    if (!strcmp(argv[1], "profile"))
        code = cmd_profile(argc - 1, argv + 1);
    else if (!strcmp(argv[1], "calibrate"))
        code = cmd_calibrate(argc - 1, argv + 1);
    else if (!strcmp(argv[1], "bench"))
        code = cmd_bench(argc - 1, argv + 1);
    else {
        ao_err("unknown command '%s'", argv[1]);
        usage(stderr);
        return AO_EXIT_USAGE;
    }
    if (fclose(stdout) != 0 && code == AO_EXIT_OK)
        code = AO_EXIT_FAIL;
    return code;
}
