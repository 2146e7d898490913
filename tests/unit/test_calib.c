/* test_calib.c - a calibration's machine probe: taken, stored, read back,
 * optional in an older file and refused when broken (calib.h, probe.h) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
    unlink(path);
    rmdir(dir);
    return CHECK_DONE();
}
