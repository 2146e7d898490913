/* accelopt.c - the front: profile, calibrate, bench (the topic commands are in topics.c) */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/alloc.h"
#include "core/config.h"
#include "core/exitcode.h"
#include "core/log.h"
#include "core/signals.h"
#include "core/task.h"
#include "core/util.h"
#include "core/version.h"
#include "front.h"
#include "measure/calib.h"
#include "profiler/profstage.h"
#include "measure/vendor.h"
#include "targets/target.h"
#include "wire/msg.h"
#include "wire/stage.h"
#include "wire/verdict.h"

static const struct ao_option profile_opts[] = {
    {"task", 'T', AO_OPT_STR, NULL, "DIR", "the task directory (e.g. nkibench/matmul)"},
    {"size", 's', AO_OPT_STR, "tiny", "CLASS", "size class: tiny, cpu or paper"},
    {"parent-latency", 0, AO_OPT_NUM, NULL, "NS", "the parent's latency, for the speedup"},
    {"baseline-latency", 0, AO_OPT_NUM, NULL, "NS", "the baseline's latency, for the speedup"},
    {"against", 0, AO_OPT_STR, "baseline", "FILE", "time the kernel head to head against FILE ('baseline': "
     "the task's own), in alternating rounds on the same fresh inputs, and give the speedup with its "
     "95% interval"},
    {"alone", 0, AO_OPT_BOOL, "0", NULL, "time the kernel alone, not head to head (the task's baseline "
     "itself is always timed alone)"},
    {"build-only", 0, AO_OPT_BOOL, "0", NULL, "build the kernel and check what was built, without "
     "running it (works where the target's device is absent)"},
    {"json", 0, AO_OPT_BOOL, "0", NULL, "print the result message (the default when stdout is not a terminal)"},
    AO_PROFILER_OPTIONS,
    AO_COMMON_OPTIONS,
};

static const struct ao_option calibrate_opts[] = {
    {"target", 0, AO_OPT_STR, AO_TARGET_DEFAULT, "NAME", "the target whose peaks to measure (built in: " AO_TARGET_NAMES ")"},
    {"calibration", 0, AO_OPT_STR, NULL, "FILE", "where to store it (default: in the state dir)"},
    {"bw-mib", 0, AO_OPT_INT, "256", "MIB", "array size for the bandwidth runs"},
    AO_COMMON_OPTIONS,
};

static const struct ao_option bench_opts[] = {
    {"size", 's', AO_OPT_STR, "cpu", "CLASS", "size class: tiny, cpu or paper"},
    {"tasks", 0, AO_OPT_STR, NULL, "LIST", "comma-separated task names (default: all)"},
    {"json", 0, AO_OPT_STR, NULL, "FILE", "also write the table as JSON to FILE"},
    {"examples", 0, AO_OPT_BOOL, "0", NULL, "also profile the hand-written kernels in nkibench/<task>/examples"},
    {"vendor", 0, AO_OPT_BOOL, "1", NULL, "time the vendor's sgemm (OpenBLAS, cuBLAS) on matmul's shape (--no-vendor: skip)"},
    {"openblas-core", 0, AO_OPT_STR, NULL, "NAME", "OpenBLAS kernels for the vendor point (default: "
     "its own choice and, on AVX-512 CPUs, SkylakeX; the faster counts)"},
    AO_PROFILER_OPTIONS,
    AO_COMMON_OPTIONS,
};

#define N(a) ((int)(sizeof a / sizeof a[0]))

/* Forward: the commands defined in this file. */
static int cmd_profile(int argc, char **argv);
static int cmd_calibrate(int argc, char **argv);
static int cmd_bench(int argc, char **argv);

/* The front's commands, one row each: the dispatch and the usage text both
 * read this table (as git's commands[] and Redis's command table do). */
static const struct command {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *what;
} commands[] = {
    {"run", cmd_run, "optimize tasks end to end: redis, broker and the five stages, then runs/<id>/"},
    {"submit", cmd_submit, "send tasks to stages already running (--brokers, --redis); --wait for them"},
    {"status", cmd_status, "the runs in flight and their progress: yours on this machine, or a redis's"},
    {"memory", cmd_memory, "list, show, export, import, rm, prune or clear the optimization memory"},
    {"report", cmd_report, "a run's report.html: one self-contained page of plots and kernels"},
    {"task", cmd_task, "task new NAME: a task directory from your reference function"},
    {"profile", cmd_profile, "compile, check and time one kernel file; prints its verdict (JSON when piped)"},
    {"calibrate", cmd_calibrate, "measure this machine's single-core peaks for the cpu target"},
    {"bench", cmd_bench, "profile every benchmark baseline and print a table"},
    {"broker", cmd_broker, "run an embedded Kafka-protocol broker; prints its address"},
    {"produce", cmd_produce, "send JSON Lines from stdin to a topic"},
    {"consume", cmd_consume, "print a topic's messages as JSON Lines"},
    {"relay", cmd_relay, "copy one topic to another through the stage loop (no work)"},
};

static void usage(FILE *out)
{
    fprintf(out, "usage: accelopt COMMAND [options]\n\ncommands:\n");
    for (int i = 0; i < N(commands); i++)
        fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].what);
    fprintf(out,
            "\n'accelopt help COMMAND' (or 'accelopt COMMAND --help') shows a command's options.\n"
            "\nexit status: 0 ok; 1 a failure (run: also a baseline that does not pass, or every model\n"
            "kernel failing); 2 a usage or configuration error; 3 done, but not what was asked (profile:\n"
            "the kernel is not ok; run: no task's result beats its baseline); 130 stopped.\n");
}

static int print_json(const cJSON *j)
{
    char *s = cJSON_PrintUnformatted(j);
    int rc = s && (ao_utf8_clean(s), printf("%s\n", s) > 0) ? 0 : -1;
    cJSON_free(s);
    return rc;
}

/* The kernel a file on the command line is, as the profiler stage gets
 * one: run "cli", id cli:<its hash>. */
static void cli_kernel(const struct ao_task *t, const char *target, const char *size,
                      const char *source, double parent, double baseline, const char *against,
                      struct ao_kernel_msg *k)
{
    char hex[65], id[100];

    ao_msg_init(&ao_msg_kernel, k);
    ao_sha256_hex(source, strlen(source), hex);
    snprintf(id, sizeof id, "cli:%.16s", hex);
    k->parent_latency_ns = parent;
    k->baseline_latency_ns = baseline;
    ao_env_set(&k->env, "kernel", id, "cli", t->name, target, 0);
    k->source = ao_strdup(source);
    k->sha256 = ao_strdup(hex);
    k->size = ao_strdup(size);
    k->task_sha256 = ao_strdup(t->sha256); /* found by name, and the same task */
    if (against)
        k->baseline_source = ao_strdup(against);
}

/* --against's kernel: FILE, or "baseline", the task's own for the target. */
static char *against_source(const struct ao_task *t, const char *against, const struct ao_target *tg,
                            char *err, size_t errlen)
{
    char path[800];

    if (strcmp(against, "baseline") != 0)
        return ao_read_file(against, NULL, err, errlen);
    if (ao_name(path, sizeof path, "%s/baseline.%s", t->dir, tg->ext) < 0)
        return ao_errf(err, errlen, "the task's directory '%s' is too long", t->dir), NULL;
    return ao_read_file(path, NULL, err, errlen);
}

/* Profile one source through the stage core, as the profiler would. */
static int profile_source(struct ao_profstage *st, const struct ao_task *t, const char *size,
                          const char *source, double parent, double baseline, const char *against,
                          struct ao_result_msg *r, char *err, size_t errlen)
{
    struct ao_kernel_msg k;
    int rc;

    cli_kernel(t, ao_profstage_target(st)->name, size, source, parent, baseline, against, &k);
    rc = ao_profstage_kernel(st, &k, r, err, errlen);

    ao_msg_release(&ao_msg_kernel, &k);
    return rc;
}

/* --build-only: build each file and check what was built, one result line
 * each, in order; one harness serves them all.  0 if every one is ok. */
static int profile_build_only(const struct ao_config *c, const struct ao_profstage_opts *po,
                              const struct ao_task *t)
{
    struct ao_profiler *p;
    char err[AO_ERRLEN];
    int code = AO_EXIT_OK;

    if (!(p = ao_profiler_new(&po->prof, err, sizeof err))) {
        ao_err("%s", err);
        return AO_EXIT_FAIL;
    }
    for (int i = 0; i < c->nargs && code != AO_EXIT_FAIL && !ao_stop_requested(); i++) {
        struct ao_result_msg r;
        struct ao_measurement m;
        struct ao_kernel_msg k;
        char *src;
        cJSON *j = NULL;

        ao_msg_init(&ao_msg_result, &r);
        ao_msg_init(&ao_msg_kernel, &k);
        ao_measurement_init(&m);
        err[0] = '\0';
        if (!(src = ao_source_read(c->args[i], err, sizeof err))) {
            ao_err("%s", err);
            code = AO_EXIT_USAGE;
        } else if (ao_profiler_build(p, t, src, &m, err, sizeof err) < 0 ||
                   (cli_kernel(t, po->target->name, ao_config_str(c, "size"), src, NAN, NAN, NULL, &k),
                    ao_result_of(&k, &m, NULL, NULL, -1, &r, err, sizeof err) < 0)) {
            ao_err("%s: %s", c->args[i], err);
            code = AO_EXIT_FAIL;
        } else {
            free(r.source); /* a build's result line carries no source, as before */
            r.source = NULL;
            if (print_json(j = ao_msg_encode(&ao_msg_result, &r)) < 0) {
                ao_err("cannot write the result");
                code = AO_EXIT_FAIL;
            } else if (ao_verdict_of(r.status) != AO_V_OK && code == AO_EXIT_OK) {
                code = AO_EXIT_KERNEL;
            }
        }
        cJSON_Delete(j);
        free(src);
        ao_msg_release(&ao_msg_result, &r);
        ao_msg_release(&ao_msg_kernel, &k);
        ao_measurement_release(&m);
    }
    ao_profiler_free(p);
    return code;
}

/* A time for people: ns, us or ms, whichever reads best. */
static const char *human_time(char *buf, size_t len, double ns)
{
    if (ns < 1e3)
        snprintf(buf, len, "%.0f ns", ns);
    else if (ns < 1e6)
        snprintf(buf, len, "%.1f us", ns / 1e3);
    else if (ns < 1e9)
        snprintf(buf, len, "%.2f ms", ns / 1e6);
    else
        snprintf(buf, len, "%.3f s", ns / 1e9);
    return buf;
}

/* The short verdict `accelopt profile` prints on a terminal: the status and
 * why, the latency with its spread, the % of peak and what bounds it, and a
 * word when the timing was noisy. */
static void print_verdict(struct ao_result_msg *r, const struct ao_task *t, const char *size,
                          double target_spread, const char *against)
{
    char a[32], b[32];

    ao_terminal_safe(r->reason); /* the kernel's own words may hold escape sequences */
    ao_terminal_safe(r->diagnostics);
    printf("%s at %s: %s%s%s\n", t->name, size, r->status, r->reason ? ": " : "", r->reason ? r->reason : "");
    if (ao_verdict_of(r->status) != AO_V_OK) {
        if (r->diagnostics && r->diagnostics[0])
            printf("\n%.2000s", r->diagnostics);
        return;
    }
    printf("  latency  %s +- %.1f%% (median of %lld calls; fastest %s)\n", human_time(a, sizeof a, r->latency_ns),
           100 * r->spread, r->repeats, human_time(b, sizeof b, r->latency_min_ns));
    if (isfinite(r->pct_of_peak) && r->pct_of_peak > 0)
        printf("  peak     %.2f%% of this machine's, bound by %s (the roofline's %s)\n", 100 * r->pct_of_peak,
               r->bound ? r->bound : "?", human_time(a, sizeof a, r->t_min_ns));
    if (isfinite(r->speedup) && r->speedup > 0)
        printf("  speedup  %.3fx over the parent\n", r->speedup);
    if (isfinite(r->speedup_vs_baseline) && r->speedup_vs_baseline > 0)
        printf("  speedup  %.3fx over the baseline\n", r->speedup_vs_baseline);
    if (r->head_to_head) { /* --against: both in alternating rounds, on the same inputs */
        double s = ao_json_num(r->head_to_head, "speedup", NAN), lo = ao_json_num(r->head_to_head, "speedup_low", NAN),
               hi = ao_json_num(r->head_to_head, "speedup_high", NAN);
        printf("  against  %s: %.3fx (95%% interval %.3f-%.3f, %.0f rounds head to head): %s\n", against,
               s, lo, hi, ao_json_num(r->head_to_head, "rounds", 0),
               lo > 1 ? "faster" : hi < 1 ? "slower" : "no difference this measurement can tell");
    }
    /* the probe's 1.2: quiet machines read 0.95-1.05, one busy loop beside
     * us on two cores 1.04, three 1.8-4 */
    if (isfinite(r->machine_slowdown) && r->machine_slowdown >= 1.2)
        printf("  busy     the profiler's own probe ran %.2fx slower than when calibrated (load %.2f per CPU): "
               "a figure taken at another moment may differ by more than this spread\n", r->machine_slowdown,
               r->machine_load);
    if (!r->steady)
        printf("  noisy    the spread (%.1f%%) stayed over the %.1f%% asked: the machine was busy, or the "
               "kernel's time varies; measure again, or give --budget more\n",
               100 * r->spread, 100 * target_spread);
}

/* Could a calibration measured now be kept at path: its directory made
 * (ours alone) and not one another user could write?  A place that is not
 * is a setting to fix, said before any measuring.  0, or -1 + err. */
static int calib_place_usable(const char *path, char *err, size_t errlen)
{
    char dir[PATH_MAX];

    if (ao_name(dir, sizeof dir, "%s", path) < 0)
        return ao_errf(err, errlen, "the calibration's path '%.200s...' is too long", path);
    if (strrchr(dir, '/') && strrchr(dir, '/') != dir)
        *strrchr(dir, '/') = '\0', (void)ao_mkdirs(dir, 0700);
    return ao_calib_place_ok(path, err, errlen);
}

static int cmd_profile(int argc, char **argv)
{
    struct ao_config c;
    struct ao_profstage_opts po;
    struct ao_profstage *st = NULL;
    struct ao_result_msg r;
    struct ao_task t;
    char err[AO_ERRLEN], *src = NULL, *other = NULL;
    const char *against;
    cJSON *j = NULL;
    int code = AO_EXIT_FAIL, asked;

    ao_msg_init(&ao_msg_result, &r);
    if (ao_tool_setup("accelopt", &c, profile_opts, N(profile_opts), argc, argv,
              "accelopt profile --task DIR [--size CLASS] [--target NAME] [options] FILE\n"
              "       accelopt profile --build-only --task DIR [--target NAME] FILE...", &code) < 0)
        goto out;
    code = AO_EXIT_USAGE;
    if (!ao_config_str(&c, "task") || c.nargs < 1 ||
        (c.nargs > 1 && !ao_config_bool(&c, "build-only"))) {
        ao_err("profile needs --task DIR and one kernel file (several with --build-only; see "
               "--help)");
        goto out;
    }
    if (ao_profstage_opts_from_config(&c, &po, err, sizeof err) < 0 ||
        ao_task_from_user(ao_config_str(&c, "task"), &t, err, sizeof err) < 0 ||
        ao_task_size(&t, ao_config_str(&c, "size"), (long long[AO_MAX_DIMS]){0}, err, sizeof err) < 0) {
        ao_err("%s", err);
        goto out;
    }
    asked = strcmp(ao_config_source(&c, "against"), "default") != 0;
    if (asked && (ao_config_bool(&c, "build-only") || ao_config_bool(&c, "alone"))) {
        ao_err("--against times two kernels: it has nothing to do with --%s",
               ao_config_bool(&c, "build-only") ? "build-only" : "alone");
        goto out;
    }
    against = ao_config_bool(&c, "alone") ? NULL : ao_config_str(&c, "against");
    if (!ao_config_bool(&c, "build-only") && !(src = ao_source_read(c.args[0], err, sizeof err))) {
        ao_err("%s", err); /* the file is the user's to mend: a usage error (2) */
        goto out;
    }
    code = AO_EXIT_FAIL;
    ao_signals_install();
    if (ao_config_bool(&c, "build-only")) {
        code = profile_build_only(&c, &po, &t);
        goto out;
    }
    if (against && !(other = against_source(&t, against, po.target, err, sizeof err))) {
        if (asked) {
            ao_err("%s", err);
            goto out;
        }
        ao_info("timed alone: the task has no baseline to time it against (%s)", err);
        against = NULL;
    }
    if (other && strcmp(other, src) == 0) { /* the baseline itself: against itself says nothing */
        free(other);
        other = NULL;
        against = NULL;
    }
    if (po.calibrate) { /* it would measure the peaks first, and keep them: refused before (issue 68), as
                         * `calibrate` and `run` refuse, not after seconds of measuring */
        char path[PATH_MAX];
        if (po.calib_path)
            snprintf(path, sizeof path, "%s", po.calib_path);
        else
            ao_calib_default_path(po.target->name, path, sizeof path);
        if (access(path, F_OK) < 0 && calib_place_usable(path, err, sizeof err) < 0) {
            ao_err("%s", err);
            code = AO_EXIT_USAGE;
            goto out;
        }
    }
    if (!(st = ao_profstage_new(&po, err, sizeof err)) ||
        (profile_source(st, &t, ao_config_str(&c, "size"), src,
                       ao_config_str(&c, "parent-latency") ? ao_config_num(&c, "parent-latency") : NAN,
                       ao_config_str(&c, "baseline-latency") ? ao_config_num(&c, "baseline-latency") : NAN,
                       other, &r, err, sizeof err) < 0)) {
        ao_err("%s", err);
        goto out;
    }
    if (!ao_config_bool(&c, "json") && isatty(1)) {
        print_verdict(&r, &t, ao_config_str(&c, "size"), po.prof.target_spread, against);
    } else if (print_json(j = ao_msg_encode(&ao_msg_result, &r)) < 0) {
        ao_err("cannot write the result");
        goto out;
    }
    code = ao_verdict_of(r.status) == AO_V_OK               ? AO_EXIT_OK
           : ao_verdict_of(r.status) == AO_V_INTERNAL_ERROR ? AO_EXIT_FAIL
                                                            : AO_EXIT_KERNEL;
out:
    cJSON_Delete(j);
    ao_msg_release(&ao_msg_result, &r);
    ao_profstage_free(st);
    free(src);
    free(other);
    ao_config_release(&c);
    return code;
}

static int cmd_calibrate(int argc, char **argv)
{
    struct ao_config c;
    const struct ao_target *tg;
    struct ao_calib cal;
    char path[600], err[AO_ERRLEN];
    int code = AO_EXIT_FAIL;

    if (ao_tool_setup("accelopt", &c, calibrate_opts, N(calibrate_opts), argc, argv,
              "accelopt calibrate [--target cpu] [--calibration FILE] [--bw-mib MIB]", &code) < 0)
        goto out;
    if (!(tg = ao_target_get(ao_config_str(&c, "target"), err, sizeof err))) {
        ao_err("--target: %s", err);
        code = AO_EXIT_USAGE;
        goto out;
    }
    if (ao_config_str(&c, "calibration"))
        snprintf(path, sizeof path, "%s", ao_config_str(&c, "calibration"));
    else
        ao_calib_default_path(tg->name, path, sizeof path);
    if (calib_place_usable(path, err, sizeof err) < 0) {
        ao_err("%s", err);
        code = AO_EXIT_USAGE;
        goto out;
    }
    ao_info("measuring the %s target's peaks (a few seconds)", tg->name);
    if (tg->calibrate(path, (int)ao_config_int(&c, "bw-mib"), &cal, err, sizeof err) < 0) {
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
        char *copy = ao_strdup(only), *save = NULL;
        for (char *s = strtok_r(copy, ",", &save); s && n < max; s = strtok_r(NULL, ",", &save))
            names[n++] = ao_strdup(s);
        free(copy);
        return n;
    }
    if (ao_name(dir, sizeof dir, "%s/nkibench", ao_home()) < 0 || !(d = opendir(dir)))
        return 0;
    while ((e = readdir(d)) && n < max) {
        if (e->d_name[0] != '.' && ao_name(path, sizeof path, "%s/%s/task.json", dir, e->d_name) == 0 &&
            access(path, R_OK) == 0)
            names[n++] = ao_strdup(e->d_name);
    }
    closedir(d);
    qsort(names, (size_t)n, sizeof *names, cmp_str);
    return n;
}

/* Profile one source of a task and print its row; adds the row to `rows`.
 * 1 if it ran ok with a % of peak, 0 if not, -1 if it could not run. */
static int bench_one(struct ao_profstage *st, const char *task, const char *label,
                     const char *path, const char *size, cJSON *rows, double *pct)
{
    char tdir[700], err[AO_ERRLEN], *src = NULL;
    struct ao_result_msg r;
    struct ao_task t;
    cJSON *row;
    int rc;

    ao_msg_init(&ao_msg_result, &r);
    if (ao_name(tdir, sizeof tdir, "%s/nkibench/%s", ao_home(), task) < 0) {
        ao_err("%s: the task's path is too long", label);
        return -1;
    }
    if (ao_task_find_dir(tdir, &t, err, sizeof err) < 0 ||
        !(src = ao_read_file(path, NULL, err, sizeof err)) ||
        profile_source(st, &t, size, src, NAN, NAN, NULL, &r, err, sizeof err) < 0) {
        ao_err("%s: %s", label, err);
        free(src);
        return -1;
    }
    free(src);
    printf("%-28s %-10s %11.3f ms %8.2f%% %12s %8.1f%%\n", label, r.status, r.latency_ns / 1e6,
           r.spread * 100, r.bound ? r.bound : "-",
           isfinite(r.pct_of_peak) ? r.pct_of_peak * 100 : NAN);
    fflush(stdout);
    rc = ao_verdict_of(r.status) == AO_V_OK && r.pct_of_peak > 0;
    if (rc)
        *pct = r.pct_of_peak;
    else if (r.reason)
        ao_warn("%s: %s", label, r.reason);
    if ((row = ao_msg_encode(&ao_msg_result, &r))) {
        cJSON_AddStringToObject(row, "source", path);
        cJSON_AddItemToArray(rows, row);
    }
    ao_msg_release(&ao_msg_result, &r);
    return rc;
}

/* The hand-written examples of a task: its target's files (.<ext>) in
 * nkibench/<task>/examples, sorted. */
static int list_examples(const char *task, const char *ext, char **paths, int max)
{
    char dir[700];
    size_t el = strlen(ext);
    int n = 0;
    DIR *d;
    struct dirent *e;

    if (ao_name(dir, sizeof dir, "%s/nkibench/%s/examples", ao_home(), task) < 0 || !(d = opendir(dir)))
        return 0;
    while ((e = readdir(d)) && n < max) {
        size_t len = strlen(e->d_name);
        if (len > el + 1 && e->d_name[len - el - 1] == '.' && strcmp(e->d_name + len - el, ext) == 0 &&
            e->d_name[0] != '.') {
            char *p = ao_malloc(strlen(dir) + len + 2);
            sprintf(p, "%s/%s", dir, e->d_name);
            paths[n++] = p;
        }
    }
    closedir(d);
    qsort(paths, (size_t)n, sizeof *paths, cmp_str);
    return n;
}

/* The vendor's sgemm (OpenBLAS, cuBLAS) at matmul's shape for the size
 * class, as % of the matmul peak, and held against the FMA rate it runs
 * at: far from 60-100% of that means the calibration is off.  OpenBLAS
 * releases that predate a CPU fall back to older kernels (AVX2 on an
 * AVX-512 core), so its own choice and its AVX-512 kernels are both timed,
 * and the faster is the reference point. */
static cJSON *bench_vendor(const struct ao_target *tg, const char *size,
                           const struct ao_calib *cal, int cpu, const char *core)
{
    char path[700], err[AO_ERRLEN];
    const char *cores[2];
    struct ao_task t;
    struct ao_vendor_result v, best;
    long long d[AO_MAX_DIMS];
    double mm, vec, bytes, pct;
    int ncores = 0, nok = 0;
    cJSON *o, *tried;
    char name[64];
    /* the rate sgemm runs at: the cpu's FMA peak; on a GPU its fp32 FMA
     * rate, not the matmul peak (the fp32-accurate tensor-core rate, which
     * sgemm does not use: 40% of it on an H200, docs/BENCHMARKS.md) */
    double rate = cal ? (tg == &ao_target_cuda ? cal->vec_gflops : cal->fma_gflops) : NAN;

    if (ao_path(path, sizeof path, ao_home(), "nkibench/matmul", err, sizeof err) < 0 ||
        ao_task_find_dir(path, &t, err, sizeof err) < 0 || ao_task_size(&t, size, d, err, sizeof err) < 0 ||
        ao_task_work(&t, d, &mm, &vec, &bytes, err, sizeof err) < 0) {
        ao_warn("vendor reference point: %s", err);
        return NULL;
    }
    if (core)
        cores[ncores++] = core;
    else {
        cores[ncores++] = NULL;
        if (tg == &ao_target_cpu && __builtin_cpu_supports("avx512f"))
            cores[ncores++] = "SkylakeX";
    }
    printf("\nvendor reference point (trusted, outside the sandbox; not in the geomean):\n");
    snprintf(name, sizeof name, "%s (matmul)", tg->vendor_name);
    tried = cJSON_CreateArray();
    for (int i = 0; i < ncores; i++) {
        cJSON *x;
        if (tg->vendor_sgemm((int)d[0], (int)d[1], (int)d[2], cpu, cores[i], &v, err,
                             sizeof err) < 0) {
            ao_warn("vendor reference point: %s", err);
            continue;
        }
        pct = cal ? mm / cal->fma_gflops / v.median_ns : NAN;
        printf("%-28s %-10s %11.3f ms %8.2f%% %12s %8.1f%%   %.1f GFLOP/s, %s kernels%s\n",
               name, "ok", v.median_ns / 1e6, v.spread * 100, "matmul",
               pct * 100, v.gflops, v.core, cores[i] ? "" : " (its own choice)");
        x = cJSON_CreateObject();
        cJSON_AddStringToObject(x, "openblas_core", v.core);
        cJSON_AddNumberToObject(x, "latency_ns", v.median_ns);
        cJSON_AddItemToArray(tried, x);
        if (!nok++ || v.median_ns < best.median_ns)
            best = v;
    }
    fflush(stdout);
    if (!nok) {
        cJSON_Delete(tried);
        return NULL;
    }
    pct = cal ? mm / cal->fma_gflops / best.median_ns : NAN;
    if (isfinite(rate) && (best.gflops > rate || best.gflops < 0.6 * rate))
        ao_warn("%s reaches %.0f%% of the calibrated fp32 FMA rate (%.0f GFLOP/s): expected "
                "60-100%%; the calibration (or the library's build) is suspect", tg->vendor_name,
                100 * best.gflops / rate, rate);
    o = cJSON_CreateObject();
    snprintf(name, sizeof name, "%s", tg->vendor_name);
    for (char *q = name; *q; q++)
        *q = *q == ' ' ? '_' : *q;
    cJSON_AddStringToObject(o, "name", name);
    cJSON_AddStringToObject(o, "openblas_core", best.core);
    cJSON_AddNumberToObject(o, "M", best.M);
    cJSON_AddNumberToObject(o, "K", best.K);
    cJSON_AddNumberToObject(o, "N", best.N);
    cJSON_AddNumberToObject(o, "latency_ns", best.median_ns);
    cJSON_AddNumberToObject(o, "latency_min_ns", best.min_ns);
    cJSON_AddNumberToObject(o, "spread", best.spread);
    cJSON_AddNumberToObject(o, "repeats", best.repeats);
    cJSON_AddNumberToObject(o, "gflops", best.gflops);
    cJSON_AddNumberToObject(o, "max_rel_err", best.max_rel_err);
    if (isfinite(pct))
        cJSON_AddNumberToObject(o, "pct_of_peak", pct);
    if (isfinite(rate))
        cJSON_AddNumberToObject(o, "pct_of_fma_rate", best.gflops / rate);
    cJSON_AddItemToObject(o, "tried", tried);
    return o;
}

static int cmd_bench(int argc, char **argv)
{
    struct ao_config c;
    struct ao_profstage_opts po;
    struct ao_profstage *st = NULL;
    const struct ao_calib *cal;
    char err[AO_ERRLEN], *names[64], bpath[800];
    const char *size;
    cJSON *rows = cJSON_CreateArray(), *examples = cJSON_CreateArray(), *vendor = NULL;
    cJSON *doc = NULL;
    double logsum = 0, pct;
    int n = 0, nok = 0, code = AO_EXIT_FAIL, with_matmul = 0;

    if (ao_tool_setup("accelopt", &c, bench_opts, N(bench_opts), argc, argv,
              "accelopt bench [--size CLASS] [--tasks a,b] [--json FILE] [--examples] "
              "[--no-vendor] [options]", &code) < 0)
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
    if ((cal = ao_profstage_calib(st)))
        printf("size %s; calibration %s: %s, %.1f GB/s (%s), FMA %.1f GFLOP/s, elementwise %.1f "
               "GFLOP/s\n", size, cal->id, cal->cpu_model, cal->bw_gbs, cal->bw_method,
               cal->fma_gflops, cal->vec_gflops);
    printf("%-28s %-10s %14s %9s %12s %9s\n", "task (baseline)", "status", "latency", "spread",
           "bound", "% of peak");
    for (int i = 0; i < n && !ao_stop_requested(); i++) {
        if (ao_name(bpath, sizeof bpath, "%s/nkibench/%s/baseline.%s", ao_home(), names[i],
                    ao_profstage_target(st)->ext) == 0 &&
            bench_one(st, names[i], names[i], bpath, size, rows, &pct) == 1) {
            logsum += log(pct);
            nok++;
        }
        with_matmul |= strcmp(names[i], "matmul") == 0;
    }
    if (nok)
        printf("%-28s %-10s %14s %9s %12s %8.1f%%   (%d of %d tasks)\n", "geomean", "", "", "",
               "", exp(logsum / nok) * 100, nok, n);
    if (ao_config_bool(&c, "examples")) {
        printf("\nhand-written examples (not in the geomean):\n");
        for (int i = 0; i < n && !ao_stop_requested(); i++) {
            char *ex[32], label[128];
            int m = list_examples(names[i], ao_profstage_target(st)->ext, ex, 32);
            for (int k = 0; k < m; k++) {
                const char *base = strrchr(ex[k], '/') + 1;
                snprintf(label, sizeof label, "%s/%.*s", names[i],
                         (int)(strlen(base) - strlen(ao_profstage_target(st)->ext) - 1), base);
                bench_one(st, names[i], label, ex[k], size, examples, &pct);
                free(ex[k]);
            }
        }
    }
    if (ao_config_bool(&c, "vendor") && with_matmul && ao_profstage_target(st)->vendor_sgemm &&
        !ao_stop_requested())
        vendor = bench_vendor(ao_profstage_target(st), size, cal, po.prof.cpu, ao_config_str(&c, "openblas-core"));
    if (ao_config_str(&c, "json")) {
        char *s;
        doc = cJSON_CreateObject();
        cJSON_AddStringToObject(doc, "size", size);
        if (cal) {
            cJSON_AddStringToObject(doc, "calibration", cal->id);
            cJSON_AddStringToObject(doc, "cpu_model", cal->cpu_model);
            cJSON_AddNumberToObject(doc, "bandwidth_gbs", cal->bw_gbs);
            cJSON_AddNumberToObject(doc, "fma_gflops", cal->fma_gflops);
            cJSON_AddNumberToObject(doc, "vec_gflops", cal->vec_gflops);
        }
        if (nok)
            cJSON_AddNumberToObject(doc, "geomean_pct_of_peak", exp(logsum / nok));
        cJSON_AddItemToObject(doc, "results", rows);
        rows = NULL;
        cJSON_AddItemToObject(doc, "examples", examples);
        examples = NULL;
        if (vendor) {
            cJSON_AddItemToObject(doc, "vendor", vendor);
            vendor = NULL;
        }
        s = cJSON_Print(doc);
        if (ao_write_file(ao_config_str(&c, "json"), s, strlen(s), err, sizeof err) < 0) {
            ao_err("%s", err);
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
    cJSON_Delete(examples);
    cJSON_Delete(vendor);
    cJSON_Delete(doc);
    ao_profstage_free(st);
    ao_config_release(&c);
    return code;
}

int main(int argc, char **argv)
{
    int code, i;

    ao_log_init("accelopt");
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? AO_EXIT_USAGE : AO_EXIT_OK;
    }
    if (!strcmp(argv[1], "help")) { /* accelopt help [COMMAND] */
        static char dash_help[] = "--help";
        if (argc < 3) {
            usage(stdout);
            return AO_EXIT_OK;
        }
        argv[1] = argv[2];
        argv[2] = dash_help;
        argc = 3;
    }
    if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
        printf("accelopt %s\n", AO_VERSION);
        return AO_EXIT_OK;
    }
    for (i = 0; i < N(commands) && strcmp(argv[1], commands[i].name) != 0; i++)
        ;
    if (i == N(commands)) {
        ao_err("unknown command '%s'", argv[1]);
        usage(stderr);
        return AO_EXIT_USAGE;
    }
    code = commands[i].fn(argc - 1, argv + 1);
    if (fclose(stdout) != 0 && code == AO_EXIT_OK)
        code = AO_EXIT_FAIL;
    return code;
}
