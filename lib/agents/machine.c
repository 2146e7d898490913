/* machine.c - the machine the kernels run on, in words for the prompts:
 * the CPU, its vector ISA, its caches (from /sys), and the peaks accelopt
 * calibrate measured on it; or a description the operator wrote */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agents/machine.h"
#include "core/util.h"
#include "measure/calib.h"
#include "targets/target.h"

#define MACHINE_TEXT_MAX 4096 /* an operator's description, at most */

/* The x86 vector extensions a kernel may use, as /proc/cpuinfo names them. */
static void isa_line(struct ao_buf *b)
{
    static const char *const flags[][2] = {
        {"avx512f", "AVX-512F"}, {"avx512bw", "AVX-512BW"}, {"avx512vl", "AVX-512VL"},
        {"avx512_vnni", "AVX-512 VNNI"}, {"avx512_bf16", "AVX-512 BF16"}, {"avx2", "AVX2"},
        {"fma", "FMA"}, {"f16c", "F16C"}, {"asimd", "NEON (ASIMD)"}, {"sve", "SVE"}};
    char e[AO_ERRLEN], *info = ao_read_file("/proc/cpuinfo", NULL, e, sizeof e), *line, *end;
    int n = 0;

    if (!info)
        return;
    /* the first "flags" (x86) or "Features" (arm) line */
    if (!(line = strstr(info, "\nflags")) && !(line = strstr(info, "\nFeatures"))) {
        free(info);
        return;
    }
    if ((end = strchr(line + 1, '\n')))
        *end = '\0';
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++) {
        char word[40];
        snprintf(word, sizeof word, " %s", flags[i][0]);
        for (char *p = line; (p = strstr(p, word)); p += strlen(word))
            if (p[strlen(word)] == ' ' || p[strlen(word)] == '\0') {
                ao_buf_printf(b, "%s%s", n++ ? ", " : "Vector ISA: ", flags[i][1]);
                break;
            }
    }
    if (n)
        ao_buf_printf(b, "\n");
    free(info);
}

/* "L1d 48 KiB, L1i 32 KiB, L2 1280 KiB, L3 48 MiB (shared by 2 CPUs)" */
static void cache_line(struct ao_buf *b)
{
    int n = 0;

    for (int i = 0; i < 8; i++) {
        char path[120], e[AO_ERRLEN], *level, *type, *size, *shared;
        int cpus = 0;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/level", i);
        if (!(level = ao_read_file(path, NULL, e, sizeof e)))
            break;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/type", i);
        type = ao_read_file(path, NULL, e, sizeof e);
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
        size = ao_read_file(path, NULL, e, sizeof e);
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/shared_cpu_list", i);
        if ((shared = ao_read_file(path, NULL, e, sizeof e))) { /* "0-1,4": count the CPUs */
            for (char *p = shared, *q; *p;) {
                long lo = strtol(p, &q, 10), hi = lo;
                if (q == p)
                    break;
                if (*q == '-')
                    hi = strtol(q + 1, &q, 10);
                cpus += (int)(hi - lo + 1);
                p = *q == ',' ? q + 1 : q;
                if (*p == '\n')
                    break;
            }
        }
        if (type && size && strncmp(type, "Instruction", 11) != 0) {
            long kib = strtol(size, NULL, 10);
            ao_buf_printf(b, "%sL%ld%s ", n++ ? ", " : "Caches (as core 0 sees them): ", strtol(level, NULL, 10),
                          strncmp(type, "Data", 4) == 0 ? "d" : "");
            if (kib >= 4096 && kib % 1024 == 0)
                ao_buf_printf(b, "%ld MiB", kib / 1024);
            else
                ao_buf_printf(b, "%ld KiB", kib);
            if (cpus > 1)
                ao_buf_printf(b, " (shared by %d CPUs)", cpus);
        }
        free(level);
        free(type);
        free(size);
        free(shared);
    }
    if (n)
        ao_buf_printf(b, "; a 64-byte line\n");
}

/* The peaks accelopt calibrate measured for the target on this machine. */
static void calib_lines(struct ao_buf *b, const struct ao_target *tg)
{
    char path[600], model[160], flags[160], e[AO_ERRLEN];
    struct ao_calib c;

    tg->machine(model, sizeof model, flags, sizeof flags);
    ao_calib_default_path(tg->name, path, sizeof path);
    if (ao_calib_load(path, model, flags, &c, e, sizeof e) != 0) {
        ao_buf_printf(b, "(not calibrated on this machine yet: no measured peaks)\n");
        return;
    }
    ao_buf_printf(b, "Measured here (accelopt calibrate, %s): memory bandwidth %.1f GB/s (%s)", c.created_at,
                  c.bw_gbs, c.bw_method);
    for (int i = 0; i < c.ncurve; i++) {
        double kib = c.curve_bytes[i] / 1024;
        if (kib >= 1024)
            ao_buf_printf(b, "%s%.0f GB/s for %.0f MiB", i ? ", " : "; working sets in cache: ", c.curve_gbs[i], kib / 1024);
        else
            ao_buf_printf(b, "%s%.0f GB/s for %.0f KiB", i ? ", " : "; working sets in cache: ", c.curve_gbs[i], kib);
    }
    ao_buf_printf(b, "; fp32 FMA peak %.1f GFLOP/s; elementwise peak %.1f GFLOP/s\n", c.fma_gflops, c.vec_gflops);
}

char *ao_machine_text(const char *target, const char *path, char *err, size_t errlen)
{
    const struct ao_target *tg = ao_target_get(target, err, errlen);
    struct ao_buf b = {0};

    if (path) /* the operator's words: where the kernels run is not here */
        return ao_read_file_max(path, MACHINE_TEXT_MAX, NULL, err, errlen);
    if (!tg)
        return NULL;
    if (strcmp(tg->name, "cpu") == 0) {
        char model[160], flags[160];
        long cpus = 0;
        tg->machine(model, sizeof model, flags, sizeof flags);
        for (int i = 0; i < 4096; i++) {
            char p[80];
            snprintf(p, sizeof p, "/sys/devices/system/cpu/cpu%d", i);
            if (access(p, F_OK) != 0)
                break;
            cpus++;
        }
        ao_buf_printf(&b, "CPU: %s, %ld logical CPUs (the kernel runs single-threaded on one)\n", model, cpus);
        isa_line(&b);
        cache_line(&b);
    }
    calib_lines(&b, tg);
    if (!b.data)
        return ao_errf(err, errlen, "out of memory"), NULL;
    return b.data;
}
