/* test_calib.c - a calibration's machine probe: taken, stored, read back,
 * optional in an older file and refused when broken (calib.h, probe.h) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "check.h"
#include "core/util.h"
#include "measure/calib.h"
#include "measure/probe.h"

static void write_text(const char *path, const char *s)
{
    FILE *f = fopen(path, "w");
    if (f) {
        fputs(s, f);
        fclose(f);
    }
}

/* Peaks are maxima (issue 53): each measurement is kept with the best
 * stored before it, a higher one replaces a stored peak, a lower one
 * leaves it, and how sure the result is travels with it. */
static void keep_best(const char *path)
{
    struct ao_calib a, b, back;
    char err[256] = "";

    memset(&a, 0, sizeof a);
    snprintf(a.cpu_model, sizeof a.cpu_model, "Test CPU");
    snprintf(a.cflags, sizeof a.cflags, "-O3");
    snprintf(a.created_at, sizeof a.created_at, "2026-11-28T00:00:00Z");
    snprintf(a.bw_method, sizeof a.bw_method, "copy");
    a.bw_gbs = 20, a.fma_gflops = 100, a.vec_gflops = 90, a.bw_spread = 0.3;
    a.ncurve = 2, a.curve_bytes[0] = 32768, a.curve_gbs[0] = 80, a.curve_bytes[1] = 1 << 20,
    a.curve_gbs[1] = 40;
    a.probe_mean_ns = 2000, a.probe_spread = 0.2;
    a.measurements = 1, a.stable = 0; /* a busy machine's */
    unlink(path);
    CHECK(ao_calib_keep_best(path, "Test CPU", "-O3", &a) == 0 && a.measurements == 1,
          "nothing stored: the measurement alone");
    CHECK(ao_calib_store(path, "cpu", &a, err, sizeof err) == 0, "stored, busy as it was (%s)", err);
    CHECK(ao_calib_load(path, "Test CPU", "-O3", &back, err, sizeof err) == 0 && back.stable == 0 &&
              back.measurements == 1,
          "read back as one measurement, not stable (%s)", err);

    /* a later one: higher bandwidth and FMA, lower elementwise and cache */
    b = a;
    b.bw_gbs = 25, b.bw_spread = 0.02, b.fma_gflops = 120, b.vec_gflops = 60, b.curve_gbs[0] = 70;
    snprintf(b.bw_method, sizeof b.bw_method, "read");
    b.probe_mean_ns = 3000, b.stable = 1, b.measurements = 1;
    CHECK(ao_calib_keep_best(path, "Test CPU", "-O3", &b) == 1, "the stored one is kept into it");
    CHECK(b.bw_gbs == 25 && !strcmp(b.bw_method, "read") && b.fma_gflops == 120,
          "a higher measurement replaces a stored peak");
    CHECK(b.vec_gflops == 90 && b.curve_gbs[0] == 80 && b.curve_gbs[1] == 40,
          "a lower one leaves it (elementwise %.0f, in cache %.0f)", b.vec_gflops, b.curve_gbs[0]);
    CHECK(b.probe_mean_ns == 2000, "the quieter probe is kept");
    CHECK(b.measurements == 2 && b.stable == 1, "two measurements, one of them stable");

    /* a stored bandwidth above this measurement's curve raises the curve:
     * the largest working set is never slower than memory, nor a smaller
     * one than a larger (tests/cli/30-baselines.sh holds stored files to it) */
    CHECK(ao_calib_store(path, "cpu", &b, err, sizeof err) == 0, "stored (%s)", err);
    a.bw_gbs = 10, a.measurements = 1;
    a.curve_bytes[0] = 65536, a.curve_gbs[0] = 30, a.curve_bytes[1] = 4 << 20, a.curve_gbs[1] = 12;
    CHECK(ao_calib_keep_best(path, "Test CPU", "-O3", &a) == 1 && a.bw_gbs == 25 &&
              a.curve_gbs[1] == 25 && a.curve_gbs[0] == 30,
          "the curve kept falling and above the bandwidth: %.0f, %.0f over %.0f GB/s",
          a.curve_gbs[0], a.curve_gbs[1], a.bw_gbs);

    /* another machine's calibration is not kept into this one */
    b.measurements = 1;
    CHECK(ao_calib_keep_best(path, "Other CPU", "-O3", &b) == 0 && b.measurements == 1,
          "another CPU model's peaks are not this machine's");
}

/* The calibration is treated like the signing key (issue 56): a link
 * planted at its temporary name is not followed, a file another user could
 * write (or owns) is not read, a peak of 1e999 is no peak, and without HOME
 * the state directory is no place another user could prepare. */
static void untrusted(const char *dir, const char *path, const struct ao_calib *c)
{
    char victim[400], tmp[400], err[512] = "", *v = NULL, *text;
    struct ao_calib back;
    const char *env[3] = {"ACCELOPT_STATE_DIR", "XDG_STATE_HOME", "HOME"};
    char *saved[3];

    snprintf(victim, sizeof victim, "%s/victim", dir);
    write_text(victim, "root's own file\n");
    chmod(victim, 0600);
    snprintf(tmp, sizeof tmp, "%s.tmp%ld", path, (long)getpid());
    unlink(tmp);
    CHECK(symlink(victim, tmp) == 0, "a link planted at the calibration's temporary name");
    CHECK(ao_calib_store(path, "cpu", c, err, sizeof err) == 0 && (v = ao_read_file(victim, NULL, err, sizeof err)) &&
              strcmp(v, "root's own file\n") == 0 && ao_calib_load(path, "Test CPU", "-O3", &back, err, sizeof err) == 0,
          "saving goes around it: the link's target is untouched, the calibration written (%s)", err);
    free(v);
    unlink(victim);
    chmod(path, 0666);
    CHECK(ao_calib_load(path, "Test CPU", "-O3", &back, err, sizeof err) == -2 && strstr(err, "not safe"),
          "a calibration others can write is not read (%s)", err);
    chmod(path, 0600);
    if (geteuid() == 0 && chown(path, 65534, 65534) == 0) {
        CHECK(ao_calib_load(path, "Test CPU", "-O3", &back, err, sizeof err) == -2 && strstr(err, "not safe"),
              "nor one another user owns (%s)", err);
        (void)!chown(path, 0, 0);
    }
    text = ao_read_file(path, NULL, err, sizeof err);
    if (text && strstr(text, "\"fma_gflops\":")) {
        char *at = strstr(text, "\"fma_gflops\":") + 13, *end = at + strcspn(at, ",\n");
        char *bad = malloc(strlen(text) + 16);
        if (bad) {
            sprintf(bad, "%.*s1e999%s", (int)(at - text), text, end);
            write_text(path, bad);
            CHECK(ao_calib_load(path, "Test CPU", "-O3", &back, err, sizeof err) == -1,
                  "a peak written as 1e999 (infinity) is refused");
            free(bad);
        }
    }
    free(text);
    for (int i = 0; i < 3; i++) {
        saved[i] = getenv(env[i]) ? strdup(getenv(env[i])) : NULL;
        unsetenv(env[i]);
    }
    CHECK(strncmp(ao_state_dir(), "/tmp", 4) != 0, "without HOME the state directory is not under /tmp (%s)",
          ao_state_dir());
    for (int i = 0; i < 3; i++) {
        if (saved[i])
            setenv(env[i], saved[i], 1);
        free(saved[i]);
    }
}

int main(void)
{
    char dir[] = "/tmp/test-calib-XXXXXX", path[300], err[512], *text;
    struct ao_calib c, back;
    struct ao_probe pr;
    cJSON *j;

    if (!mkdtemp(dir))
        return 1;
    snprintf(path, sizeof path, "%s/calibration-cpu.json", dir);

    CHECK(ao_probe_run(&pr) == 0 && pr.median_ns > 0 && pr.mean_ns > 0 && pr.spread >= 0,
          "the probe times its rounds (median %.0f ns, mean %.0f ns, spread %.2f)", pr.median_ns, pr.mean_ns,
          pr.spread);

    memset(&c, 0, sizeof c);
    snprintf(c.cpu_model, sizeof c.cpu_model, "Test CPU");
    snprintf(c.cflags, sizeof c.cflags, "-O3");
    snprintf(c.created_at, sizeof c.created_at, "2026-11-27T00:00:00Z");
    snprintf(c.bw_method, sizeof c.bw_method, "copy");
    c.bw_gbs = 20, c.fma_gflops = 100, c.vec_gflops = 90;
    c.ncurve = 1, c.curve_bytes[0] = 1, c.curve_gbs[0] = 20;
    ao_calib_probe(&c);
    CHECK(c.probe_mean_ns > 0, "a calibration takes the probe (%.0f ns)", c.probe_mean_ns);
    c.probe_mean_ns = 1e9; /* a noisy try: the next, quieter one replaces it */
    ao_calib_probe(&c);
    CHECK(c.probe_mean_ns < 1e9, "...keeping the quietest of its tries");
    c.probe_mean_ns = 1; /* a quieter one than any real: kept */
    ao_calib_probe(&c);
    CHECK(c.probe_mean_ns == 1, "...and not a louder one");
    c.probe_mean_ns = 123456, c.probe_spread = 0.25;
    CHECK(ao_calib_store(path, "cpu", &c, err, sizeof err) == 0 &&
              ao_calib_load(path, "Test CPU", "-O3", &back, err, sizeof err) == 0 &&
              back.probe_mean_ns == 123456 && back.probe_spread == 0.25,
          "stored and read back with the probe (%s)", err);

    /* an older calibration has no probe: read, with none */
    text = ao_read_file(path, NULL, err, sizeof err);
    j = text ? cJSON_Parse(text) : NULL;
    free(text);
    cJSON_DeleteItemFromObject(j, "probe_mean_ns");
    cJSON_DeleteItemFromObject(j, "probe_spread");
    text = cJSON_Print(j);
    write_text(path, text);
    free(text);
    CHECK(ao_calib_load(path, "Test CPU", "-O3", &back, err, sizeof err) == 0 && back.probe_mean_ns == 0,
          "an older calibration without the probe is read, with none (results then say no slowdown)");

    /* a broken one is refused, not read as a quiet machine */
    cJSON_AddNumberToObject(j, "probe_mean_ns", -5);
    cJSON_AddNumberToObject(j, "probe_spread", 0.1);
    text = cJSON_Print(j);
    write_text(path, text);
    free(text);
    CHECK(ao_calib_load(path, "Test CPU", "-O3", &back, err, sizeof err) == -1 && strstr(err, "bad value"),
          "a negative probe time is refused (%s)", err);
    cJSON_ReplaceItemInObject(j, "probe_mean_ns", cJSON_CreateNumber(1000));
    cJSON_DeleteItemFromObject(j, "probe_spread");
    text = cJSON_Print(j);
    write_text(path, text);
    free(text);
    CHECK(ao_calib_load(path, "Test CPU", "-O3", &back, err, sizeof err) == -1,
          "a probe time without its spread is refused");
    cJSON_Delete(j);
    untrusted(dir, path, &c);
    keep_best(path);
    unlink(path);
    rmdir(dir);
    return CHECK_DONE();
}
