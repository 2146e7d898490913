/* test_machine.c - the core as the prompts tell it (ao_machine_core, issue
 * 47): the microarchitecture from the x86 family and model with what its
 * FMA units do, an unknown one said as unknown, the clock, the TLB, SMT and
 * how the tensors reach a kernel */
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agents/machine.h"
#include "check.h"
#include "core/util.h"
#include "measure/calib.h"
#include "targets/target.h"

static char *core(const char *info, const char *sib, const char *thp)
{
    struct ao_buf b = {0};
    ao_machine_core(info, sib, thp, &b);
    return b.data ? b.data : strdup("");
}

/* The prompts quote the stored peaks with how sure they are (issue 53):
 * the best of several measurements on a busy machine is said to be so,
 * never "not calibrated" beside figures. */
static void calibration_lines(void)
{
    char dir[] = "/tmp/test-machine-XXXXXX", path[600], model[128], flags[128], err[256] = "";
    struct ao_calib c;
    char *text;

    if (!mkdtemp(dir))
        return;
    setenv("ACCELOPT_STATE_DIR", dir, 1);
    memset(&c, 0, sizeof c);
    ao_target_cpu.machine(model, sizeof model, flags, sizeof flags);
    snprintf(c.cpu_model, sizeof c.cpu_model, "%s", model);
    snprintf(c.cflags, sizeof c.cflags, "%s", flags);
    snprintf(c.created_at, sizeof c.created_at, "2026-11-28T00:00:00Z");
    snprintf(c.bw_method, sizeof c.bw_method, "read");
    c.bw_gbs = 12.5, c.fma_gflops = 100, c.vec_gflops = 90;
    c.ncurve = 1, c.curve_bytes[0] = 32768, c.curve_gbs[0] = 80;
    c.measurements = 3, c.stable = 0;
    ao_calib_default_path("cpu", path, sizeof path);
    CHECK(ao_calib_store(path, "cpu", &c, err, sizeof err) == 0, "a busy machine's peaks stored (%s)", err);
    text = ao_machine_text("cpu", NULL, err, sizeof err);
    CHECK(text && strstr(text, "memory bandwidth 12.5 GB/s") &&
              strstr(text, "best of 3 measurements taken while the machine was busy") &&
              !strstr(text, "not calibrated"),
          "the prompt quotes the peaks and says they may be low, never 'not calibrated'");
    CHECK(text && strstr(text, "implies 1562 MHz at 64 fp32 flops a cycle") &&
              strstr(text, "or 3125 MHz at 32"),
          "and the clock the FMA peak implies at each FMA width");
    free(text);
    c.stable = 1;
    CHECK(ao_calib_store(path, "cpu", &c, err, sizeof err) == 0, "stored again, one of them stable");
    text = ao_machine_text("cpu", NULL, err, sizeof err);
    CHECK(text && strstr(text, "(each peak the best of 3 measurements here)") && !strstr(text, "busy"),
          "a stable one: the best of 3, nothing said of a busy machine");
    free(text);
    unlink(path);
    rmdir(dir);
}

/* The caches (issue 55): from /sys where it has them, said so; from CPUID
 * where it has none (some virtual machines), said so, with the same levels
 * as /sys gives on a machine that has both; a made-up sysfs is read as it
 * says. */
static void caches(void)
{
    char dir[] = "/tmp/test-caches-XXXXXX", path[700];
    struct ao_buf sys = {0}, cpuid = {0}, fake = {0};
    static const char *const files[][2] = {{"level", "1\n"}, {"type", "Data\n"}, {"size", "48K\n"},
                                           {"shared_cpu_list", "0,96\n"}};

    ao_machine_caches("/sys/devices/system/cpu/cpu0", &sys);
    ao_machine_caches("/nonexistent", &cpuid);
#if defined(__x86_64__)
    CHECK(cpuid.data && strstr(cpuid.data, "Caches (CPUID") && strstr(cpuid.data, "L1d ") &&
              strstr(cpuid.data, "-way") && strstr(cpuid.data, "-byte line\n"),
          "no cache directory: the caches from CPUID, said so, with their ways and line");
    if (sys.data && cpuid.data) { /* both: the same L1d and L2 sizes */
        const char *x = strstr(sys.data, "L1d "), *y = strstr(cpuid.data, "L1d ");
        size_t nx = x ? strcspn(x, ",(;") : 0, ny = y ? strcspn(y, ",(;") : 0;
        while (nx && x[nx - 1] == ' ')
            nx--;
        while (ny && y[ny - 1] == ' ')
            ny--;
        CHECK(x && y && nx == ny && nx > 5 && strncmp(x, y, nx) == 0, "CPUID's L1d is the one /sys gives (%.*s; %.*s)",
              (int)nx, x ? x : "", (int)ny, y ? y : "");
    }
#endif
    CHECK(!sys.data || strstr(sys.data, "Caches (as core 0 sees them, from /sys): "), "/sys's caches say where they came from");
    if (mkdtemp(dir)) {
        snprintf(path, sizeof path, "%s/cache", dir);
        mkdir(path, 0700);
        snprintf(path, sizeof path, "%s/cache/index0", dir);
        mkdir(path, 0700);
        for (int i = 0; i < 4; i++) {
            char err[128];
            snprintf(path, sizeof path, "%s/cache/index0/%s", dir, files[i][0]);
            ao_write_file(path, files[i][1], strlen(files[i][1]), err, sizeof err);
        }
        ao_machine_caches(dir, &fake);
        CHECK(fake.data && strstr(fake.data, "L1d 48 KiB (shared by 2 CPUs); a 64-byte line"),
              "a cache directory is read as it says (%s)", fake.data ? fake.data : "nothing");
        for (int i = 0; i < 4; i++) {
            snprintf(path, sizeof path, "%s/cache/index0/%s", dir, files[i][0]);
            unlink(path);
        }
        snprintf(path, sizeof path, "%s/cache/index0", dir);
        rmdir(path);
        snprintf(path, sizeof path, "%s/cache", dir);
        rmdir(path);
        rmdir(dir);
    }
    ao_buf_release(&sys);
    ao_buf_release(&cpuid);
    ao_buf_release(&fake);
}

/* The ISA line is the compiler's own view of -march=native (issue 55):
 * every extension macro, by its name, sorted; nothing else. */
static void isa(void)
{
    struct ao_buf b = {0}, none = {0};
    int n = ao_machine_isa_from_macros("#define __SSE2__ 1\n#define __AVX512VBMI__ 1\n#define __x86_64 1\n"
                                       "#define __AVX512DQ__ 1\n#define __FMA__ 1\n#define __AVX2__ 1\n"
                                       "#define __GFNI__ 1\n#define __AVX512F__ 1\n", &b);

    CHECK(n == 6 && b.data && strstr(b.data, "-march=native, from its predefined macros): AVX2, AVX512DQ, "
                                             "AVX512F, AVX512VBMI, FMA, GFNI\n"),
          "the compiler's extensions, sorted, without the underscores (%s)", b.data ? b.data : "none");
    CHECK(ao_machine_isa_from_macros("#define __x86_64 1\n", &none) == 0 && !none.data, "none: no line");
    ao_buf_release(&b);
}

int main(void)
{
    char *zen4 = core("processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel\t\t: 17\n"
                      "model name\t: AMD EPYC 9654 96-Core Processor\ncpu MHz\t\t: 3700.000\n"
                      "TLB size\t: 3584 4K pages\n\nprocessor\t: 1\nvendor_id\t: AuthenticAMD\n",
                      "0,96\n", "always within_size advise [never] deny force\n");
    char *zen3 = core("vendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel\t\t: 1\ncpu MHz\t\t: 2445.412\n",
                      "0\n", NULL);
    char *spr = core("vendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 143\n", "0-1\n", NULL);
    char *odd = core("vendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 1\n", NULL, NULL);
    char *none = core(NULL, NULL, NULL);

    CHECK(strstr(zen4, "family 25 model 17 (0x19, 0x11): Zen 4:") && strstr(zen4, "512-bit FMA issues as two halves"),
          "Zen 4 from family 0x19 model 0x11, with how it runs AVX-512");
    CHECK(strstr(zen4, "Clock: 3700 MHz") && strstr(zen4, "TLB: 3584 4K pages"), "the clock and the TLB");
    CHECK(strstr(zen4, "SMT: core 0 has another logical CPU") && strstr(zen3, "SMT: no sibling"),
          "SMT from the sibling list: a sibling, and none");
    CHECK(strstr(zen4, "huge pages for shared memory: never") && strstr(zen4, "64-byte boundary") &&
              strstr(zen4, "read-for-ownership"),
          "how the tensors reach a kernel, and what the roofline counts");
    CHECK(strstr(zen3, "Zen 3: two 256-bit FMA pipes, no AVX-512") && strstr(zen3, "TLB: sizes not reported"),
          "Zen 3; a TLB /proc/cpuinfo does not report is said so");
    CHECK(strstr(spr, "Sapphire Rapids: two 512-bit FMA units"), "Sapphire Rapids from family 6 model 0x8f");
    CHECK(strstr(odd, "does not know") && !strstr(odd, "Zen") && !strstr(odd, "Clock:"),
          "a model the table lacks is said unknown, and no clock is made up");
    CHECK(!strstr(none, "Core:") && strstr(none, "Memory as the kernel sees it"),
          "no /proc/cpuinfo: no core line, the memory facts still");
    free(zen4);
    free(zen3);
    free(spr);
    free(odd);
    free(none);
    calibration_lines();
    caches();
    isa();
    return CHECK_DONE();
}
