/* report.c - progress lines, status rows and the runs/<id>/ directory of `accelopt run` */
#include <libgen.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>

#include "core/alloc.h"
#include "core/log.h"
#include "core/rc.h"
#include "core/util.h"
#include "report.h"
#include "state/beam.h"
#include "state/runstate.h"
#include "state/select.h"
#include "targets/target.h"
#include "wire/msg.h"
#include "wire/names.h"
#include "wire/verdict.h"

static int too_long(char *err, size_t errlen, const char *dir)
{
    return ao_errf(err, errlen, "the paths under '%s' are too long", dir);
}

cJSON *report_done_of(struct ao_runstore *rs, const char *run)
{
    struct ao_run_state st;
    char err[AO_ERRLEN];
    cJSON *out = NULL, *it, *done = NULL;

    if (ao_run_state_load(rs, run, &st, err, sizeof err) > 0 && st.phase == AO_PHASE_DONE &&
        ao_runstore_json(rs, run, "phase_outbox", &out, err, sizeof err) > 0) {
        cJSON_ArrayForEach(it, out)
            if (!done && !strcmp(ao_json_str(it, "topic", ""), AO_TOPIC_RUNS))
                done = cJSON_DetachItemFromObjectCaseSensitive(it, "msg");
    }
    cJSON_Delete(out);
    ao_run_state_release(&st);
    return done;
}

/* The run's model calls in flight, by role: {"planner": {"calls": 2,
 * "oldest_s": 45}, ...} (the roles with none left out). */
static void add_calls(struct ao_runstore *rs, const char *run, cJSON *o)
{
    struct ao_run_calls c = ao_runstore_calls(rs, run);
    cJSON *all = cJSON_AddObjectToObject(o, "calls_in_flight");

    for (int r = 0; all && r < AO_ROLES; r++) {
        cJSON *one;
        if (!c.n[r] || !(one = cJSON_AddObjectToObject(all, ao_role_names[r])))
            continue;
        cJSON_AddNumberToObject(one, "calls", c.n[r]);
        cJSON_AddNumberToObject(one, "oldest_s", round(c.oldest_s[r]));
    }
}

cJSON *report_run_row(struct ao_runstore *rs, const char *run)
{
    struct ao_run_state st;
    char err[AO_ERRLEN], path[512];
    int have = ao_run_state_load(rs, run, &st, err, sizeof err);
    cJSON *o = cJSON_CreateObject();
    const cJSON *h = ao_run_state_last(&st);
    struct ao_run_usage u = ao_runstore_usage(rs, run);
    struct timespec now;

    if (!o || !cJSON_AddStringToObject(o, "run", run)) {
        ao_run_state_release(&st);
        cJSON_Delete(o);
        return NULL;
    }
    if (have == AO_RC_CORRUPT) { /* a state the selector did not write: said, not guessed at */
        cJSON_AddStringToObject(o, "phase", "unreadable");
        cJSON_AddStringToObject(o, "error", err);
    }
    if (have <= 0)
        return o;
    clock_gettime(CLOCK_REALTIME, &now); /* the selector stamps `started` by this clock */
    snprintf(path, sizeof path, "%s", st.task_path);
    cJSON_AddStringToObject(o, "task", basename(path));
    cJSON_AddStringToObject(o, "phase", ao_phase_name(st.phase));
    cJSON_AddNumberToObject(o, "iter", (double)st.iter);
    cJSON_AddNumberToObject(o, "iters", (double)(st.config.iters == AO_ABSENT_INT ? 0 : st.config.iters));
    cJSON_AddNumberToObject(o, "kernels", (double)st.kernels);
    cJSON_AddNumberToObject(o, "failures", (double)st.failures);
    cJSON_AddNumberToObject(o, "speedup", ao_json_num(h, "speedup", 1));
    cJSON_AddNumberToObject(o, "pct_of_peak", ao_json_num(h, "pct_of_peak", 0));
    cJSON_AddNumberToObject(o, "tokens", (double)(u.prompt + u.completion));
    cJSON_AddNumberToObject(o, "cost_usd", u.usd);
    cJSON_AddNumberToObject(o, "age_s", round((double)now.tv_sec - st.started));
    ao_run_state_release(&st);
    add_calls(rs, run, o);
    return o;
}

void report_calls_text(const cJSON *row, char *out, size_t len)
{
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(row, "calls_in_flight"), *r;
    size_t at = 0;

    out[0] = '\0';
    cJSON_ArrayForEach(r, c) {
        int n = (int)ao_json_num(r, "calls", 0);
        double age = ao_json_num(r, "oldest_s", 0);
        if (n <= 0 || at >= len)
            continue;
        at += (size_t)snprintf(out + at, len - at, "%s%d %s call%s, %.0f s", at ? "; " : "waiting on ", n,
                               r->string, n == 1 ? "" : "s", age);
    }
}

void report_progress(FILE *tty, struct ao_runstore *rs, const struct run_task *t, int n,
                     int *drawn)
{
    struct winsize ws = {0};
    int cols = ioctl(fileno(tty), TIOCGWINSZ, &ws) == 0 ? ws.ws_col : 0; /* 0: not known */

    if (*drawn)
        fprintf(tty, "\033[%dA", *drawn);
    for (int i = 0; i < n; i++) {
        cJSON *o = report_run_row(rs, t[i].run);
        char line[600], calls[200];
        int at = snprintf(line, sizeof line, "%-22.22s ", t[i].task);

        if (!ao_json_str(o, "phase", NULL))
            snprintf(line + at, sizeof line - (size_t)at, "waiting for the selector");
        else if (ao_json_str(o, "error", NULL))
            snprintf(line + at, sizeof line - (size_t)at, "%.200s", ao_json_str(o, "error", ""));
        else {
            /* what it waits on before the figures that change slowly: a
             * narrow terminal cuts the end of the line */
            report_calls_text(o, calls, sizeof calls);
            snprintf(line + at, sizeof line - (size_t)at,
                     "%-8s iter %2.0f/%-2.0f  kernels %4.0f  failed %3.0f  best %5.2fx  %s%s"
                     "%5.1f%% of peak  %.0f tok  $%.4f",
                     ao_json_str(o, "phase", "?"), ao_json_num(o, "iter", 0),
                     ao_json_num(o, "iters", 0), ao_json_num(o, "kernels", 0),
                     ao_json_num(o, "failures", 0), ao_json_num(o, "speedup", 1), calls, calls[0] ? "  " : "",
                     100 * ao_json_num(o, "pct_of_peak", 0), ao_json_num(o, "tokens", 0),
                     ao_json_num(o, "cost_usd", 0));
        }
        /* one row each: a line the terminal wraps would take two, and the
         * next redraw would climb one short */
        fprintf(tty, "\r\033[K%.*s\n", cols > 1 ? cols - 1 : (int)sizeof line, line);
        cJSON_Delete(o);
    }
    fflush(tty);
    *drawn = n;
}

/* "r.p.s" slots in numeric order */
static int slot_cmp(const void *a, const void *b)
{
    const cJSON *x = *(const cJSON *const *)a, *y = *(const cJSON *const *)b;
    int p[3] = {0}, q[3] = {0};
    sscanf(x->string, "%d.%d.%d", &p[0], &p[1], &p[2]);
    sscanf(y->string, "%d.%d.%d", &q[0], &q[1], &q[2]);
    for (int i = 0; i < 3; i++)
        if (p[i] != q[i])
            return p[i] - q[i];
    return 0;
}

/* The model's kernels of a task that failed, by reason: a reason's words
 * up to its first number or detail, so that "error 0.53" and "error 0.61"
 * are one reason; each kept with its first full text. */
#define TALLY_MAX 16
struct fail_tally {
    int kernels, failed, duplicates, exhausted; /* the model's kernels (past the baseline) */
    int baseline_failed;                        /* and the baseline, which counts in the table */
    /* every slot, the baseline's too (issue 69: "kernels 93" for 8 sources):
     * distinct sources measured, slots whose source was measured before
     * (the cache answered), slots with no source to measure */
    int distinct, repeats, empty;
    char (*seen)[65];
    int nseen, capseen;
    int n, count[TALLY_MAX];
    char key[TALLY_MAX][96], text[TALLY_MAX][200];
};

/* A slot's result into the counts of distinct sources, repeats and empty
 * slots. */
static void tally_source(struct fail_tally *t, const char *status, const char *sha)
{
    enum ao_verdict v = ao_verdict_of(status);

    if (v == AO_V_DUPLICATE)
        return; /* counted apart (kernels_duplicate): never measured */
    if (v == AO_V_NO_CODE || v == AO_V_LOST || !sha || !*sha) {
        t->empty++;
        return;
    }
    for (int i = 0; i < t->nseen; i++)
        if (strcmp(t->seen[i], sha) == 0) {
            t->repeats++;
            return;
        }
    if (t->nseen == t->capseen) {
        int cap = t->capseen ? 2 * t->capseen : 64;
        char(*more)[65] = ao_realloc(t->seen, sizeof *more * (size_t)cap);
        if (!more) { /* counted, not remembered */
            t->distinct++;
            return;
        }
        t->seen = more;
        t->capseen = cap;
    }
    snprintf(t->seen[t->nseen++], sizeof t->seen[0], "%s", sha);
    t->distinct++;
}

static void tally_add(struct fail_tally *t, const char *status, const char *reason)
{
    char key[96];
    size_t n;
    int i;

    snprintf(key, sizeof key, "%s: %s", status, reason ? reason : "");
    n = strcspn(key, "0123456789('\"");
    key[n] = '\0';
    for (i = 0; i < t->n && strcmp(t->key[i], key) != 0; i++)
        ;
    if (i == t->n) {
        if (t->n == TALLY_MAX)
            return; /* the rarest reasons go uncounted */
        snprintf(t->key[i], sizeof t->key[i], "%s", key);
        snprintf(t->text[i], sizeof t->text[i], "%s%s%s", status, reason ? ": " : "", reason ? reason : "");
        t->text[i][strcspn(t->text[i], "\n")] = '\0';
        t->n++;
    }
    t->count[i]++;
}

/* A figure for the summary, or "-" where there is none (a run refused or
 * stopped before its baseline was measured): never "nan".  buf holds 24. */
static const char *num(char *buf, double v, int decimals, const char *unit)
{
    if (!isfinite(v))
        return "-";
    snprintf(buf, 24, "%.*f%s", decimals, v, unit);
    return buf;
}

/* Why the search kept a kernel or left it (issue 54), on its history row:
 * its comparison with its parent (cmp: that result, or NULL), the latency
 * the search ranked it at (the iteration's "ranked"), whether it went
 * into the next beam ("kept"), and in words. */
static void add_decision(cJSON *o, const cJSON *r, const cJSON *cmp, const cJSON *hist, long long iter,
                         const char *slot, const char *best_id)
{
    const cJSON *h = cJSON_GetObjectItemCaseSensitive(cmp, "head_to_head"), *k;
    double ranked = ao_json_num(cJSON_GetObjectItemCaseSensitive(hist, "ranked"), slot, NAN);
    double own = ao_json_num(r, "latency_ns", NAN);
    char at[64], why[400], how[200] = "";
    int kept = 0;

    if (best_id && strcmp(ao_json_str(r, "kernel_id", ""), best_id) == 0)
        cJSON_AddTrueToObject(o, "best");
    if (iter == 0 || strcmp(ao_json_str(r, "status", ""), "ok") != 0)
        return;
    snprintf(at, sizeof at, "%lld:%.40s", iter, slot);
    cJSON_ArrayForEach(k, cJSON_GetObjectItemCaseSensitive(hist, "kept"))
        kept |= cJSON_IsString(k) && strcmp(k->valuestring, at) == 0;
    if (h) {
        struct ao_sel_cmp c = {1, ao_json_num(h, "speedup", NAN), ao_json_num(h, "speedup_low", NAN),
                               ao_json_num(h, "speedup_high", NAN)};
        int voided = cJSON_GetObjectItemCaseSensitive(h, "voided") != NULL;
        enum ao_cmp_verdict v = ao_sel_cmp_verdict(&c);
        cJSON *p = cJSON_AddObjectToObject(o, "against_parent");
        if (p) {
            cJSON_AddNumberToObject(p, "speedup", c.speedup);
            cJSON_AddNumberToObject(p, "speedup_low", c.low);
            cJSON_AddNumberToObject(p, "speedup_high", c.high);
            cJSON_AddStringToObject(p, "verdict", voided ? "voided" : ao_sel_cmp_name(v));
        }
        snprintf(how, sizeof how, "head to head with its parent %.3fx (%.3f-%.3f), %s", c.speedup, c.low,
                 c.high, voided ? "voided (its parent ran well outside its own figures): ranked at its parent's latency"
                 : v == AO_CMP_TIE && cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(h, "undecidable"))
                 ? "a tie (its rounds fell on both sides of 1 early, and stopped): ranked at its parent's latency"
                 : v == AO_CMP_TIE ? "a tie: ranked at its parent's latency" : ao_sel_cmp_name(v));
    } else if (isfinite(ranked)) {
        snprintf(how, sizeof how, "not compared with its parent: ranked at its own measurement, never ahead of "
                 "its parent");
    }
    if (isfinite(ranked))
        cJSON_AddNumberToObject(o, "search_latency_ns", ranked);
    cJSON_AddBoolToObject(o, "kept", kept);
    if (!isfinite(ranked)) /* an iteration closed before the rankings were written, or dropped */
        snprintf(why, sizeof why, "%s", kept ? "kept" : "not kept");
    else
        snprintf(why, sizeof why, "%s: measured at %.1f us, ranked at %.1f us%s%s", kept ? "kept" : "not kept",
                 own / 1e3, ranked / 1e3, how[0] ? "; " : "", how);
    cJSON_AddStringToObject(o, "decision", why);
}

/* Every kernel of the run with its parent, plan and result, one per line;
 * the failed ones (past the baseline) counted in *tally; each with why it
 * was kept or not (add_decision), from the run's history and best. */
static int write_history(struct ao_runstore *rs, const char *run, long long iters, const cJSON *history,
                         const char *best_id, const char *path, struct fail_tally *tally, char *err,
                         size_t errlen)
{
    static const char *const keep[] = {
        "iter", "slot", "kernel_id", "parent", "sha256", "plan", "plan_text", "status", "reason",
        "latency_ns", "spread", "repeats", "speedup", "speedup_vs_baseline", "pct_of_peak", "max_rel_l2",
        "cached", "exhausted", "wall_ns", "machine_load", "machine_slowdown", "source", "model", "attempts", "fixes",
        "tokens", "memory_seen", "notes"};
    FILE *f = fopen(path, "w");
    int rc = 0;

    if (!f)
        return snprintf(err, errlen, "cannot write '%s'", path), -1;
    for (long long i = 0; i <= iters; i++) {
        char key[AO_KEY_MAX];
        cJSON *slots, *cmps, *it, **v;
        const cJSON *hist = NULL, *hx;
        int n, k = 0;

        if (ao_name(key, sizeof key, AO_KEY_ITER, run, i) < 0 || !(slots = ao_rs_hgetall(rs, key, err, errlen))) {
            rc = -1;
            break;
        }
        if (ao_name(key, sizeof key, AO_KEY_CMP, run, i) < 0 || !(cmps = ao_rs_hgetall(rs, key, err, errlen))) {
            cJSON_Delete(slots);
            rc = -1;
            break;
        }
        cJSON_ArrayForEach(hx, history)
            if (ao_json_num(hx, "iter", -1) == (double)i)
                hist = hx;
        n = cJSON_GetArraySize(slots);
        if ((v = ao_calloc((size_t)n + 1, sizeof *v))) {
            cJSON_ArrayForEach(it, slots)
                v[k++] = it;
            qsort(v, (size_t)n, sizeof *v, slot_cmp);
            for (k = 0; k < n; k++) {
                cJSON *r = cJSON_Parse(v[k]->valuestring), *o = cJSON_CreateObject();
                const char *status = ao_json_str(r, "status", NULL);
                char *line;
                tally->baseline_failed |= i == 0 && status && strcmp(status, "ok") != 0;
                int out_of_moves = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "exhausted"));
                if (status && !out_of_moves)
                    tally_source(tally, status, ao_json_str(r, "sha256", NULL));
                else if (status)
                    tally->empty++; /* the search had nothing left to try: no source */
                if (i > 0 && status) {
                    tally->kernels++;
                    if (ao_verdict_of(status) == AO_V_DUPLICATE) {
                        tally->duplicates++;
                    } else if (out_of_moves) {
                        tally->exhausted++;
                    } else if (strcmp(status, "ok") != 0) {
                        tally->failed++;
                        tally_add(tally, status, ao_json_str(r, "reason", NULL));
                    }
                }
                for (size_t q = 0; r && o && q < sizeof keep / sizeof keep[0]; q++) {
                    const cJSON *x = cJSON_GetObjectItemCaseSensitive(r, keep[q]);
                    if (x)
                        cJSON_AddItemToObject(o, keep[q], cJSON_Duplicate(x, 1));
                }
                if (o && r) {
                    const cJSON *ct = cJSON_GetObjectItemCaseSensitive(cmps, v[k]->string);
                    cJSON *cmp = cJSON_IsString(ct) ? cJSON_Parse(ct->valuestring) : NULL;
                    /* a child's head-to-head is in its own result (issue 66) */
                    add_decision(o, r, cmp ? cmp : r, hist, i, v[k]->string, best_id);
                    cJSON_Delete(cmp);
                }
                if (o && (line = cJSON_PrintUnformatted(o))) {
                    fprintf(f, "%s\n", line);
                    cJSON_free(line);
                }
                cJSON_Delete(r);
                cJSON_Delete(o);
            }
            free(v);
        }
        cJSON_Delete(slots);
        cJSON_Delete(cmps);
    }
    if (fclose(f) != 0 && rc == 0)
        rc = -1, snprintf(err, errlen, "cannot write '%s'", path);
    return rc;
}

/* What the run learned: every summarizer ack (the experience message), in
 * iteration order, one per line. */
static int write_experiences(struct ao_runstore *rs, const char *run, long long iters,
                             const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "w");
    int rc = 0;

    if (!f)
        return snprintf(err, errlen, "cannot write '%s'", path), -1;
    for (long long i = 1; i <= iters; i++) {
        char key[AO_KEY_MAX];
        cJSON *acks, *it;
        if (ao_name(key, sizeof key, AO_KEY_ACKS, run, i) < 0 || !(acks = ao_rs_hgetall(rs, key, err, errlen))) {
            rc = -1;
            break;
        }
        cJSON_ArrayForEach(it, acks) {
            cJSON *e = cJSON_IsString(it) ? cJSON_Parse(it->valuestring) : NULL;
            char *line = cJSON_IsObject(e) ? cJSON_PrintUnformatted(e) : NULL;
            if (line)
                fprintf(f, "%s\n", line);
            cJSON_free(line);
            cJSON_Delete(e);
        }
        cJSON_Delete(acks);
    }
    if (fclose(f) != 0 && rc == 0)
        rc = -1, snprintf(err, errlen, "cannot write '%s'", path);
    return rc;
}

/* The model usage of the run by role and iteration (lib/budget's
 * counters): {"total": {...}, "by": [{role, iter, prompt, completion,
 * cost_usd}...]}. */
static cJSON *usage_json(struct ao_runstore *rs, const char *run)
{
    char key[AO_KEY_MAX], err[AO_ERRLEN];
    cJSON *h, *o = cJSON_CreateObject(), *by = cJSON_AddArrayToObject(o, "by"), *it;
    struct ao_run_usage u = ao_runstore_usage(rs, run);
    cJSON *tot = cJSON_AddObjectToObject(o, "total");

    cJSON_AddNumberToObject(tot, "prompt", u.prompt);
    cJSON_AddNumberToObject(tot, "completion", u.completion);
    cJSON_AddNumberToObject(tot, "cost_usd", u.usd);
    if (ao_name(key, sizeof key, AO_KEY_RUN, run) < 0 || !(h = ao_rs_hgetall(rs, key, err, sizeof err)))
        return o;
    cJSON_ArrayForEach(it, h) {
        char role[48], field[24];
        long long iter;
        const cJSON *r;
        cJSON *row = NULL;
        /* tokens_prompt:<role>:<iter>, tokens_completion:..., cost_usd:... */
        if (sscanf(it->string, "%23[a-z_]:%47[a-z]:%lld", field, role, &iter) != 3 ||
            !cJSON_IsString(it))
            continue;
        cJSON_ArrayForEach(r, by) {
            if (!strcmp(ao_json_str(r, "role", ""), role) && ao_json_num(r, "iter", -1) == (double)iter)
                row = (cJSON *)r;
        }
        if (!row) {
            row = cJSON_CreateObject();
            cJSON_AddStringToObject(row, "role", role);
            cJSON_AddNumberToObject(row, "iter", (double)iter);
            cJSON_AddNumberToObject(row, "prompt", 0);
            cJSON_AddNumberToObject(row, "completion", 0);
            cJSON_AddNumberToObject(row, "cost_usd", 0);
            cJSON_AddItemToArray(by, row);
        }
        if (!row)
            continue;
        if (!strcmp(field, "tokens_prompt"))
            cJSON_SetNumberValue(cJSON_GetObjectItemCaseSensitive(row, "prompt"), atof(it->valuestring));
        else if (!strcmp(field, "tokens_completion"))
            cJSON_SetNumberValue(cJSON_GetObjectItemCaseSensitive(row, "completion"), atof(it->valuestring));
        else if (!strcmp(field, "cost_usd"))
            cJSON_SetNumberValue(cJSON_GetObjectItemCaseSensitive(row, "cost_usd"), atof(it->valuestring));
    }
    cJSON_Delete(h);
    return o;
}

static int write_json(const char *path, const cJSON *j, char *err, size_t errlen)
{
    char *text = cJSON_Print(j);
    struct ao_buf b = {0};
    int rc;

    ao_buf_printf(&b, "%s\n", text);
    cJSON_free(text);
    rc = ao_write_file(path, b.data, b.len, err, errlen);
    ao_buf_release(&b);
    return rc;
}

/* The fastest kernel measured `ok` in any iteration up to iters (the
 * baseline's included), its result as the profiler gave it, or NULL: a
 * stopped run's best so far, though its iteration never closed (issue 53:
 * a run stopped while comparing quoted the baseline at 1.000x beside a
 * child measured 40x faster). */
static cJSON *fastest_measured(struct ao_runstore *rs, const char *run, long long iters)
{
    cJSON *best = NULL;
    char e[AO_ERRLEN];

    for (long long i = 0; i <= iters; i++) {
        char key[AO_KEY_MAX];
        cJSON *slots, *it;
        if (ao_name(key, sizeof key, AO_KEY_ITER, run, i) < 0 || !(slots = ao_rs_hgetall(rs, key, e, sizeof e)))
            break;
        cJSON_ArrayForEach(it, slots) {
            cJSON *r = cJSON_IsString(it) ? cJSON_Parse(it->valuestring) : NULL;
            double ns = ao_json_num(r, "latency_ns", NAN);
            if (r && strcmp(ao_json_str(r, "status", ""), "ok") == 0 && ns > 0 &&
                ao_json_str(r, "source", NULL) && (!best || ns < ao_json_num(best, "latency_ns", NAN))) {
                cJSON_Delete(best);
                best = r;
            } else {
                cJSON_Delete(r);
            }
        }
        cJSON_Delete(slots);
    }
    return best;
}

/* A done's figure, or the search's where the done has none (an older
 * done, or an interrupted run). */
static double done_num(const cJSON *d, const char *name, double search)
{
    double v = ao_json_num(d, name, NAN);
    return isfinite(v) ? v : search;
}

/* What the row's speedup is, in words: "0.950-1.029, head to head", ... */
static void speedup_how(char *buf, size_t len, const cJSON *d)
{
    const char *how = d ? ao_json_str(d, "speedup_method", "search") : "search, interrupted";
    const cJSON *h = cJSON_GetObjectItemCaseSensitive(d, "head_to_head");

    if (d && isfinite(ao_json_num(d, "speedup_low", NAN)))
        snprintf(buf, len, "%.3f-%.3f, head to head", ao_json_num(d, "speedup_low", NAN),
                 ao_json_num(d, "speedup_high", NAN));
    else if (strcmp(how, "no_gain") == 0 && h)
        snprintf(buf, len, "no significant gain: %.3fx (%.3f-%.3f)", ao_json_num(h, "speedup", NAN),
                 ao_json_num(h, "speedup_low", NAN), ao_json_num(h, "speedup_high", NAN));
    else if (strcmp(how, "baseline") == 0)
        snprintf(buf, len, "nothing beat baseline");
    else if (strcmp(how, "none") == 0)
        snprintf(buf, len, "best failed its recheck");
    else
        snprintf(buf, len, "%s", how);
}

/* One task's row of the summary: what the run state, the beam and the
 * done say of it, and the figures the row quotes. */
struct row {
    struct ao_run_state s;
    struct ao_beam beam;
    struct fail_tally tally;
    int st;                             /* the run state was found (else: none to report) */
    const struct ao_beam_member *best;  /* the beam's first */
    const cJSON *d, *dbest;             /* the done, and its best */
    cJSON *fast;                        /* stopped before its done: the fastest measured */
    const char *stopped, *src;          /* why it ended; the result's source */
    double base, bestns, sp, search, pct0, pct1;
};

static void row_load(struct ao_runstore *rs, const struct run_task *t, struct row *r)
{
    char e2[AO_ERRLEN];
    const cJSON *h0, *d = t->done;
    double sbase, sbest;

    memset(r, 0, sizeof *r);
    r->st = ao_run_state_load(rs, t->run, &r->s, e2, sizeof e2) > 0;
    r->best = ao_beam_load(rs, t->run, &r->beam, e2, sizeof e2) > 0 && r->beam.n > 0 ? &r->beam.m[0] : NULL;
    h0 = cJSON_GetArrayItem(r->s.history, 0);
    r->d = d;
    r->dbest = cJSON_GetObjectItemCaseSensitive(d, "best");
    /* stopped before its done: the fastest kernel measured so far, its
     * iteration closed or not, as the search measured it (the beam's
     * figures can be a comparison's) */
    r->fast = !d && r->st ? fastest_measured(rs, t->run, r->s.iter) : NULL;
    r->stopped = d ? ao_json_str(d, "stopped", NULL) : t->refused ? "refused" : "interrupted";
    r->src = d ? ao_json_str(r->dbest, "source", NULL)
               : r->fast ? ao_json_str(r->fast, "source", NULL) : r->best ? r->best->source : NULL;
    /* the search's own figures; the row quotes the done's */
    sbase = r->s.baseline_ns;
    sbest = r->fast ? ao_json_num(r->fast, "latency_ns", NAN) : r->best ? r->best->latency_ns : NAN;
    r->base = d ? done_num(d, "baseline_latency_ns", sbase) : sbase;
    r->bestns = d ? done_num(d, "best_latency_ns", ao_json_num(r->dbest, "latency_ns", sbest)) : sbest;
    r->sp = d ? ao_json_num(d, "speedup", r->base / r->bestns) : sbase / sbest;
    r->search = d ? done_num(d, "search_speedup", sbase / sbest) : sbase / sbest;
    r->pct0 = d ? done_num(d, "baseline_pct_of_peak", ao_json_num(h0, "pct_of_peak", NAN))
                : ao_json_num(h0, "pct_of_peak", NAN);
    r->pct1 = d ? done_num(d, "pct_of_peak", NAN)
                : r->fast ? ao_json_num(r->fast, "pct_of_peak", NAN) : r->best ? r->best->pct_of_peak : NAN;
}

static void row_release(struct row *r)
{
    cJSON_Delete(r->fast);
    free(r->tally.seen);
    ao_run_state_release(&r->s);
    ao_beam_release(&r->beam);
}

/* done.json: the done message, or what is known of an interrupted run,
 * with the table's counts for every page that quotes them.  NULL: out of
 * memory. */
static cJSON *row_done_json(const struct run_task *t, const struct row *r)
{
    cJSON *dj = r->d ? cJSON_Duplicate(r->d, 1) : cJSON_CreateObject();

    if (dj && !r->d) {
        cJSON_AddStringToObject(dj, "run", t->run);
        cJSON_AddStringToObject(dj, "task", t->task);
        cJSON_AddStringToObject(dj, "stopped", t->refused ? "refused" : "interrupted");
        if (r->st) {
            cJSON_AddNumberToObject(dj, "iter", (double)r->s.iter);
            cJSON_AddNumberToObject(dj, "kernels_evaluated", (double)r->s.kernels);
            cJSON_AddItemToObject(dj, "history", cJSON_Duplicate(r->s.history, 1));
        }
        if (r->fast) {
            /* the search's own figure: measured alone, never compared */
            static const char *const keep[] = {"kernel_id", "iter", "slot", "sha256", "latency_ns",
                                               "spread", "pct_of_peak", "source"};
            cJSON *fb = cJSON_CreateObject();
            for (size_t q = 0; fb && q < sizeof keep / sizeof keep[0]; q++) {
                const cJSON *x = cJSON_GetObjectItemCaseSensitive(r->fast, keep[q]);
                if (x)
                    cJSON_AddItemToObject(fb, keep[q], cJSON_Duplicate(x, 1));
            }
            if (fb)
                cJSON_AddStringToObject(fb, "how", "the fastest kernel measured before the run "
                                        "stopped: the search's own figure, not compared head to head");
            cJSON_AddItemToObject(dj, "best", fb);
        } else if (r->best) {
            cJSON_AddItemToObject(dj, "best", ao_beam_member_json(r->best));
        }
    }
    if (dj && r->st) {
        static const char *const counts[] = {"kernels_failed", "kernels_duplicate", "kernels_distinct",
                                             "kernels_repeated", "slots_empty"};
        const struct fail_tally *y = &r->tally;
        int v[] = {y->failed + y->baseline_failed, y->duplicates, y->distinct, y->repeats, y->empty};
        for (size_t q = 0; q < sizeof counts / sizeof counts[0]; q++) {
            cJSON_DeleteItemFromObjectCaseSensitive(dj, counts[q]);
            cJSON_AddNumberToObject(dj, counts[q], v[q]);
        }
    }
    return dj;
}

/* dir/<task>/: best.<ext>, candidate.<ext> where no gain was found,
 * history.jsonl (which fills the tally), experiences.jsonl, usage.json,
 * done.json.  0, or -1 + err. */
static int row_files(const char *dir, struct ao_runstore *rs, const struct run_task *t, struct row *r,
                     char *err, size_t errlen)
{
    const char *ext = t->ext[0] ? t->ext : ao_target_default()->ext;
    const cJSON *d = r->d;
    char path[900];
    cJSON *j;
    int rc;

    if (ao_name(path, sizeof path, "%s/%s", dir, t->task) < 0 || ao_mkdirs(path, 0700) < 0) /* the owner's */
        return ao_errf(err, errlen, "cannot make '%s'", path);
    if (r->src && /* the result: the done's (the baseline where no gain was found) */
        (ao_name(path, sizeof path, "%s/%s/best.%s", dir, t->task, ext) < 0 ? too_long(err, errlen, dir)
         : ao_write_file(path, r->src, strlen(r->src), err, errlen)) < 0)
        return -1;
    /* no significant gain: best.c is the baseline, and the search's best
     * is kept beside it, for the user to judge */
    if (d && r->best && r->best->source && strcmp(ao_json_str(d, "speedup_method", ""), "no_gain") == 0 &&
        (ao_name(path, sizeof path, "%s/%s/candidate.%s", dir, t->task, ext) < 0 ? too_long(err, errlen, dir)
         : ao_write_file(path, r->best->source, strlen(r->best->source), err, errlen)) < 0)
        return -1;
    if (r->st &&
        (ao_name(path, sizeof path, "%s/%s/history.jsonl", dir, t->task) < 0 ? too_long(err, errlen, dir)
         : write_history(rs, t->run, r->s.iter, r->s.history,
                         ao_json_str(d ? r->dbest : r->fast, "kernel_id", r->best ? r->best->kernel_id : NULL),
                         path, &r->tally, err, errlen)) < 0)
        return -1;
    if (r->st &&
        (ao_name(path, sizeof path, "%s/%s/experiences.jsonl", dir, t->task) < 0 ? too_long(err, errlen, dir)
         : write_experiences(rs, t->run, r->s.iter, path, err, errlen)) < 0)
        return -1;
    j = usage_json(rs, t->run);
    rc = ao_name(path, sizeof path, "%s/%s/usage.json", dir, t->task) < 0 ? too_long(err, errlen, dir)
                                                                          : write_json(path, j, err, errlen);
    cJSON_Delete(j);
    if (rc < 0)
        return -1;
    j = row_done_json(t, r);
    rc = ao_name(path, sizeof path, "%s/%s/done.json", dir, t->task) < 0 ? too_long(err, errlen, dir)
                                                                         : write_json(path, j, err, errlen);
    cJSON_Delete(j);
    return rc;
}

/* Below the table: what a task's candidates came to, in words that say
 * which was which, and why it stopped early. */
static void row_why(struct ao_buf *why, const struct run_task *t, const struct row *r)
{
    const struct fail_tally *y = &r->tally;
    int wrote = y->kernels - y->duplicates - y->exhausted;

    if (r->d && r->best && r->best->source && strcmp(ao_json_str(r->d, "speedup_method", ""), "no_gain") == 0) {
        const char *ext = t->ext[0] ? t->ext : ao_target_default()->ext;
        char iv[80];
        speedup_how(iv, sizeof iv, r->d);
        ao_buf_printf(why, "%s: %s against the baseline head to head: best.%s is the baseline, and the "
                      "search's best is kept as candidate.%s\n", t->task, iv, ext, ext);
    }
    if (y->kernels > 0 && (y->failed > 0 || y->duplicates > 0 || y->exhausted > 0)) {
        ao_buf_printf(why, "%s: of %d candidates, %d went to the model", t->task, y->kernels, wrote);
        if (y->duplicates)
            ao_buf_printf(why, ", %d %s a duplicate of an earlier plan or kernel (not measured again)",
                          y->duplicates, y->duplicates == 1 ? "was" : "were");
        if (y->exhausted)
            ao_buf_printf(why, ", %d found the search exhausted (the builtin model had no knob "
                          "move left to try)", y->exhausted);
        ao_buf_printf(why, "; %d of the %d failed", y->failed, wrote);
        if (y->failed > 0) { /* the commonest reason */
            int top = 0;
            for (int k = 1; k < y->n; k++)
                top = y->count[k] > y->count[top] ? k : top;
            ao_buf_printf(why, "; most often (%d): %.160s", y->count[top], y->text[top]);
        }
        ao_buf_printf(why, "\n");
    }
    if (r->d && strcmp(ao_json_str(r->d, "stopped", ""), "exhausted") == 0) /* why it stopped early */
        ao_buf_printf(why, "%s: stopped after %.0f iteration%s, %.300s\n", t->task,
                      ao_json_num(r->d, "iterations", 0), ao_json_num(r->d, "iterations", 0) == 1 ? "" : "s",
                      ao_json_str(r->d, "reason", "nothing new to try"));
    if (y->repeats > 0 || y->empty > 0) /* the kernels column counts each source once */
        ao_buf_printf(why, "%s: %d distinct kernel%s measured; %d slot%s brought back a kernel measured "
                      "before (the cache answered), %d had none to measure\n", t->task, y->distinct,
                      y->distinct == 1 ? "" : "s", y->repeats, y->repeats == 1 ? "" : "s", y->empty);
}

int report_write(const char *dir, struct ao_runstore *rs, const struct run_task *t, int n,
                 FILE *echo, struct report_outcome *o, char *err, size_t errlen)
{
    char path[900];
    struct ao_buf sum = {0}, why = {0};
    int rc = 0, tried = 0, worked = 0, written = 0, gained = 0, ended = 0, searched = 0;

    ao_buf_printf(&sum, "%-22s %-16s %5s %7s %6s %12s %12s %8s %-41s %17s %8s\n", "task", "stopped", "iters",
                  "kernels", "failed", "baseline_us", "best_us", "speedup", "(95% interval, how)",
                  "pct_of_peak", "search");
    for (int i = 0; i < n; i++) {
        struct row r;
        char iv[80], b[6][24];
        int wrote;

        row_load(rs, &t[i], &r);
        if (rc == 0) /* after a failure, the table still, but no more files */
            rc = row_files(dir, rs, &t[i], &r, err, errlen);
        row_why(&why, &t[i], &r);
        wrote = r.tally.kernels - r.tally.duplicates - r.tally.exhausted;
        tried += wrote > 0;
        worked += wrote > r.tally.failed;
        written += wrote;
        if (r.d) {
            const char *m = ao_json_str(r.d, "speedup_method", "");
            ended++;
            /* a gain is one measured head to head; the search's own
             * figure (a run stopped before its final head-to-head) is
             * none, however large (issue 69) */
            gained += strcmp(m, "head_to_head") == 0 && r.sp > 1;
            searched += strcmp(m, "search") == 0 && r.sp > 1;
        }
        speedup_how(iv, sizeof iv, r.d);
        ao_buf_printf(&sum, "%-22s %-16s %5.0f %7.0f %6d %12s %12s %8s %-41s %8s -> %6s %8s\n", t[i].task,
                      r.stopped ? r.stopped : "?", r.st ? (double)r.s.completed : 0.0, (double)r.tally.distinct,
                      r.tally.failed + r.tally.baseline_failed, num(b[0], r.base / 1e3, 2, ""),
                      num(b[1], r.bestns / 1e3, 2, ""), num(b[2], r.sp, 3, "x"), isfinite(r.sp) ? iv : "-",
                      num(b[3], 100 * r.pct0, 2, "%"), num(b[4], 100 * r.pct1, 2, "%"), num(b[5], r.search, 3, "x"));
        row_release(&r);
    }
    if (why.data) {
        ao_buf_printf(&sum, "\n");
        ao_buf_append(&sum, why.data, why.len);
    }
    ao_buf_printf(&sum, "\nbaseline_us, best_us, speedup and pct_of_peak come from one measurement: the "
                  "final head-to-head of the best against the baseline where there was one; search is "
                  "the search's own figure (each child head to head with its parent, the ratios chained back to the baseline).  speedup is the median of the rounds' paired ratios (each round times both on the same inputs, so the machine's drift cancels), baseline_us the baseline's median there, and best_us baseline_us / speedup.\n");
    ao_buf_release(&why);
    if (o) {
        o->all_failed = tried == n && worked == 0 && n > 0; /* every task wrote kernels, none worked */
        o->none_written = written == 0 && n > 0;
        o->gained = gained;
        o->searched = searched;
        o->ended = ended;
    }
    if (rc == 0) {
        rc = ao_name(path, sizeof path, "%s/summary.txt", dir) < 0
                 ? too_long(err, errlen, dir)
                 : ao_write_file(path, sum.data ? sum.data : "", sum.len, err, errlen);
    }
    if (rc == 0 && echo && sum.data)
        fputs(sum.data, echo);
    ao_buf_release(&sum);
    return rc;
}
