/* machine.c - the machine the kernels run on, in words for the prompts:
 * the CPU, its vector ISA, its caches (from /sys), and the peaks accelopt
 * calibrate measured on it; or a description the operator wrote */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "agents/machine.h"
#include "core/alloc.h"
#include "core/util.h"
#include "measure/calib.h"
#include "targets/target.h"

#define MACHINE_TEXT_MAX 4096 /* an operator's description, at most */

/* The instruction-set extensions the kernels' compiler enables with
 * -march=native here, from its own predefined macros (`gcc -march=native
 * -dM -E`): what a kernel's intrinsics may use, which /proc/cpuinfo's flags
 * only suggest (issue 55).  The macros are the compiler's names, less the
 * underscores: AVX512DQ, AVX512VBMI, FMA, ...  0 when the compiler told
 * nothing (then /proc/cpuinfo's flags are quoted, said so). */
int ao_machine_isa_from_macros(const char *macros, struct ao_buf *b)
{
    static const char *const families[] = {"__AVX", "__FMA", "__F16C", "__BMI", "__GFNI", "__VAES",
                                           "__VPCLMULQDQ", "__AMX", "__SHA__", "__SSE4_2", "__POPCNT",
                                           "__LZCNT", "__ARM_NEON", "__ARM_FEATURE_SVE"};
    char names[96][48];
    int n = 0;

    for (const char *l = macros ? macros : ""; *l && n < 96; l += strcspn(l, "\n") + (l[strcspn(l, "\n")] != 0)) {
        char name[64];
        size_t len;
        if (strncmp(l, "#define __", 10) != 0 || sscanf(l + 8, "%63s", name) != 1)
            continue;
        for (size_t i = 0; i < sizeof families / sizeof families[0]; i++)
            if (strncmp(name, families[i], strlen(families[i])) == 0) {
                len = strlen(name);
                /* __AVX512DQ__ -> AVX512DQ; __ARM_NEON -> ARM_NEON */
                len -= len > 4 && strcmp(name + len - 2, "__") == 0 ? 2 : 0;
                snprintf(names[n++], sizeof names[0], "%.*s", (int)(len - 2), name + 2);
                break;
            }
    }
    qsort(names, (size_t)n, sizeof names[0], (int (*)(const void *, const void *))strcmp); /* gcc's order is its hash's */
    for (int i = 0; i < n; i++)
        ao_buf_printf(b, "%s%s", i ? ", " : "Instruction sets the kernels' compiler enables here (" AO_CPU_CC
                      " -march=native, from its predefined macros): ", names[i]);
    if (n)
        ao_buf_printf(b, "\n");
    return n;
}

static int isa_from_compiler(struct ao_buf *b)
{
    char *argv[] = {(char *)AO_CPU_CC, (char *)"-march=native", (char *)"-dM", (char *)"-E", (char *)"-x",
                    (char *)"c", (char *)"/dev/null", NULL};
    char e[AO_ERRLEN], *out = NULL;
    int st = 0, n = 0;

    if (ao_spawn(argv, NULL, &out, 1 << 20, &st, e, sizeof e) == 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0)
        n = ao_machine_isa_from_macros(out, b);
    free(out);
    return n;
}

/* The x86 vector extensions a kernel may use, as /proc/cpuinfo names them:
 * where the compiler could not be asked. */
static void isa_line(const char *cpuinfo, struct ao_buf *b)
{
    static const char *const flags[][2] = {
        {"avx512f", "AVX-512F"}, {"avx512bw", "AVX-512BW"}, {"avx512vl", "AVX-512VL"},
        {"avx512_vnni", "AVX-512 VNNI"}, {"avx512_bf16", "AVX-512 BF16"}, {"avx2", "AVX2"},
        {"fma", "FMA"}, {"f16c", "F16C"}, {"asimd", "NEON (ASIMD)"}, {"sve", "SVE"}};
    char *info = cpuinfo ? ao_strdup(cpuinfo) : NULL, *line, *end;
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
                ao_buf_printf(b, "%s%s", n++ ? ", " : "Vector ISA (/proc/cpuinfo's flags; the compiler could not be asked): ", flags[i][1]);
                break;
            }
    }
    if (n)
        ao_buf_printf(b, "\n");
    free(info);
}

static void cache_size(struct ao_buf *b, long kib)
{
    if (kib >= 4096 && kib % 1024 == 0)
        ao_buf_printf(b, "%ld MiB", kib / 1024);
    else
        ao_buf_printf(b, "%ld KiB", kib);
}

/* Where /sys has no cache directory (some virtual machines): the caches as
 * CPUID describes them to the core that asks (leaf 4 on Intel, 0x8000001D
 * on AMD: type, level, ways, partitions, line size and sets per level).
 * The hypervisor may filter CPUID, but it is what the guest's compiler and
 * libraries see too.  0 when it told nothing. */
static int cache_line_cpuid(struct ao_buf *b)
{
#if defined(__x86_64__) || defined(__i386__)
    unsigned a, bx, c, d, leaf, line = 64;
    char vendor[13] = "";
    int n = 0;

    if (!__get_cpuid(0, &a, &bx, &c, &d))
        return 0;
    memcpy(vendor, &bx, 4), memcpy(vendor + 4, &d, 4), memcpy(vendor + 8, &c, 4);
    if (strcmp(vendor, "GenuineIntel") == 0 && a >= 4) {
        leaf = 4;
    } else if (strcmp(vendor, "AuthenticAMD") == 0 && __get_cpuid(0x80000000, &a, &bx, &c, &d) &&
               a >= 0x8000001d && __get_cpuid(0x80000001, &a, &bx, &c, &d) && (c & (1u << 22))) {
        leaf = 0x8000001d; /* with the topology extensions */
    } else {
        return 0;
    }
    for (unsigned i = 0; i < 8; i++) {
        unsigned type, level, ways, parts, sets, sharing;
        __cpuid_count(leaf, i, a, bx, c, d);
        if (!(type = a & 0x1f))
            break;
        if (type == 2)
            continue; /* instructions */
        level = (a >> 5) & 7;
        sharing = ((a >> 14) & 0xfff) + 1;
        line = (bx & 0xfff) + 1;
        parts = ((bx >> 12) & 0x3ff) + 1;
        ways = ((bx >> 22) & 0x3ff) + 1;
        sets = c + 1;
        ao_buf_printf(b, "%sL%u%s ", n++ ? ", " : "Caches (CPUID, as core 0 reports them: /sys has none here): ",
                      level, type == 1 ? "d" : "");
        cache_size(b, (long)((unsigned long long)ways * parts * line * sets / 1024));
        ao_buf_printf(b, " (%u-way", ways);
        if (sharing > 1)
            ao_buf_printf(b, ", shared by up to %u logical CPUs", sharing);
        ao_buf_printf(b, ")");
    }
    if (n)
        ao_buf_printf(b, "; a %u-byte line\n", line);
    return n;
#else
    (void)b;
    return 0;
#endif
}

/* "L1d 48 KiB, L1i 32 KiB, L2 1280 KiB, L3 48 MiB (shared by 2 CPUs)",
 * from the cache directory of cpu0 under sys (/sys/devices/system/cpu/cpu0),
 * else from CPUID; where neither says, nothing (never a guess). */
void ao_machine_caches(const char *sys, struct ao_buf *b)
{
    int n = 0;

    for (int i = 0; i < 8; i++) {
        char path[600], e[AO_ERRLEN], *level, *type, *size, *shared = NULL;
        int cpus = 0;
        if (ao_name(path, sizeof path, "%s/cache/index%d/level", sys, i) < 0 ||
            !(level = ao_read_file(path, NULL, e, sizeof e)))
            break;
        type = ao_name(path, sizeof path, "%s/cache/index%d/type", sys, i) < 0 ? NULL
                                                                               : ao_read_file(path, NULL, e, sizeof e);
        size = ao_name(path, sizeof path, "%s/cache/index%d/size", sys, i) < 0 ? NULL
                                                                               : ao_read_file(path, NULL, e, sizeof e);
        if (ao_name(path, sizeof path, "%s/cache/index%d/shared_cpu_list", sys, i) == 0 &&
            (shared = ao_read_file(path, NULL, e, sizeof e))) { /* "0-1,4": count the CPUs */
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
            ao_buf_printf(b, "%sL%ld%s ", n++ ? ", " : "Caches (as core 0 sees them, from /sys): ",
                          strtol(level, NULL, 10), strncmp(type, "Data", 4) == 0 ? "d" : "");
            cache_size(b, strtol(size, NULL, 10));
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
    else
        cache_line_cpuid(b);
}

/* A /proc/cpuinfo field of the first CPU ("cpu family"), or NULL: its
 * value, copied into buf. */
static const char *cpuinfo_field(const char *info, const char *name, char *buf, size_t len)
{
    size_t n = strlen(name);

    for (const char *l = info; *l; l += strcspn(l, "\n") + (l[strcspn(l, "\n")] != '\0')) {
        size_t line = strcspn(l, "\n"), key = strcspn(l, ":");
        if (key >= line || strncmp(l, name, n) != 0 || strspn(l + n, " \t") != key - n)
            continue; /* not this line's field ("model" is not "model name") */
        l += key + 1 + strspn(l + key + 1, " \t");
        snprintf(buf, len, "%.*s", (int)strcspn(l, "\n"), l);
        return buf;
    }
    return NULL;
}

/* The microarchitecture from the x86 family and model, with what its FMA
 * units do, as AMD and Intel document them; NULL where the table has no
 * entry (said as unknown). */
static const char *uarch(const char *vendor, long fam, long model)
{
    if (strcmp(vendor, "AuthenticAMD") == 0) {
        if (fam == 0x17)
            return model < 0x30 ? "Zen or Zen+: two 128-bit FMA pipes (a 256-bit FMA takes both)"
                                : "Zen 2: two 256-bit FMA pipes, no AVX-512";
        if (fam == 0x19)
            return (model >= 0x10 && model <= 0x1f) || (model >= 0x60 && model <= 0x7f) ||
                           (model >= 0xa0 && model <= 0xaf)
                       ? "Zen 4: two 256-bit FMA pipes; a 512-bit FMA issues as two halves, "
                         "so AVX-512 reaches the same FMA rate as AVX2 with half the instructions"
                       : "Zen 3: two 256-bit FMA pipes, no AVX-512";
        if (fam == 0x1a)
            return "Zen 5: two FMA pipes, 512 bits wide on server and desktop parts (256 on "
                   "mobile ones)";
        return NULL;
    }
    if (strcmp(vendor, "GenuineIntel") == 0 && fam == 6) {
        switch (model) {
        case 0x55: return "Skylake-SP or Cascade Lake: two 512-bit FMA units on most Gold and Platinum "
                          "parts, one on others";
        case 0x6a: case 0x6c: return "Ice Lake-SP: two 512-bit FMA units on Gold and Platinum parts";
        case 0x8f: return "Sapphire Rapids: two 512-bit FMA units";
        case 0xcf: return "Emerald Rapids: two 512-bit FMA units";
        case 0xad: case 0xae: return "Granite Rapids: two 512-bit FMA units";
        case 0x97: case 0x9a: case 0xb7: case 0xba: case 0xbf:
            return "Alder Lake or Raptor Lake: two 256-bit FMA units, no AVX-512";
        }
    }
    return NULL;
}

void ao_machine_core(const char *cpuinfo, const char *siblings, const char *shmem_thp, struct ao_buf *b)
{
    char vendor[64] = "", fam[32], model[32], mhz[32], tlb[64];
    const char *u = NULL;

    if (cpuinfo && cpuinfo_field(cpuinfo, "vendor_id", vendor, sizeof vendor) &&
        cpuinfo_field(cpuinfo, "cpu family", fam, sizeof fam) && cpuinfo_field(cpuinfo, "model", model, sizeof model)) {
        long f = strtol(fam, NULL, 10), m = strtol(model, NULL, 10);
        u = uarch(vendor, f, m);
        ao_buf_printf(b, "Core: %s family %ld model %ld (0x%lx, 0x%lx): %s\n", vendor, f, m, f, m,
                      u ? u : "a microarchitecture accelopt's table does not know (the ISA line "
                              "above says what it can do)");
        if (cpuinfo_field(cpuinfo, "cpu MHz", mhz, sizeof mhz))
            ao_buf_printf(b, "Clock: %.0f MHz as /proc/cpuinfo reported it when this was written "
                          "(under load, and in a virtual machine, the real clock may differ)\n",
                          strtod(mhz, NULL));
        if (cpuinfo_field(cpuinfo, "TLB size", tlb, sizeof tlb))
            ao_buf_printf(b, "TLB: %s (as /proc/cpuinfo reports it; the other levels are not "
                          "reported)\n", tlb);
        else
            ao_buf_printf(b, "TLB: sizes not reported on this machine\n");
    }
    if (siblings) {
        int more = strpbrk(siblings, ",-") != NULL;
        ao_buf_printf(b, "SMT: %s\n", more ? "core 0 has another logical CPU; a kernel may share its core "
                                              "with whatever runs on its sibling"
                                            : "no sibling logical CPU on core 0 (none visible here)");
    }
    /* how the profiler hands tensors to a kernel (lib/measure/job.c) */
    ao_buf_printf(b, "Memory as the kernel sees it: the tensors live in one shared memory region of "
                  "4 KiB pages");
    if (shmem_thp && strchr(shmem_thp, '['))
        ao_buf_printf(b, " (transparent huge pages for shared memory: %.*s)", (int)strcspn(strchr(shmem_thp, '[') + 1, "]"),
                      strchr(shmem_thp, '[') + 1);
    ao_buf_printf(b, "; each tensor starts on a 64-byte boundary, at one of 128 cache-line offsets "
                  "that change between calls (never page-aligned on purpose); the outputs are the "
                  "same memory every call (no page faults while timed), filled with NaN by the "
                  "profiler before each call; the inputs are written just before each call from "
                  "the kernel's core, so those that fit in its caches start there (the problem says "
                  "how large they are); other processes may run on the other cores while a kernel "
                  "is timed\n");
    ao_buf_printf(b, "The roofline's t_memory_ns counts each input read once and each output "
                  "written once; a store to a line not in cache may first read it "
                  "(read-for-ownership), which it does not count\n");
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
    /* on one core: what clock that FMA rate means for each FMA width, so
     * a model can hold it against the clock and the core it is told of */
    if (strcmp(tg->name, "cpu") == 0)
        ao_buf_printf(b, "The FMA peak implies %.0f MHz at 64 fp32 flops a cycle (two 512-bit FMA "
                      "units) or %.0f MHz at 32 (two 256-bit units)\n", c.fma_gflops * 1e3 / 64,
                      c.fma_gflops * 1e3 / 32);
    /* how sure: peaks are maxima, and a busy machine only lowers them */
    if (!c.stable)
        ao_buf_printf(b, "(each peak the best of %d measurement%s taken while the machine was busy: "
                      "the true peaks may be higher, and a kernel may come closer to them than the "
                      "%% of peak says)\n", c.measurements, c.measurements == 1 ? "" : "s");
    else if (c.measurements > 1)
        ao_buf_printf(b, "(each peak the best of %d measurements here)\n", c.measurements);
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
        char model[160], flags[160], e[AO_ERRLEN], *info, *sib, *thp;
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
        info = ao_read_file("/proc/cpuinfo", NULL, e, sizeof e);
        sib = ao_read_file("/sys/devices/system/cpu/cpu0/topology/thread_siblings_list", NULL, e, sizeof e);
        thp = ao_read_file("/sys/kernel/mm/transparent_hugepage/shmem_enabled", NULL, e, sizeof e);
        if (!isa_from_compiler(&b))
            isa_line(info, &b);
        ao_machine_caches("/sys/devices/system/cpu/cpu0", &b);
        ao_machine_core(info, sib, thp, &b);
        free(info);
        free(sib);
        free(thp);
    }
    calib_lines(&b, tg);
    return b.data ? b.data : ao_strdup("");
}
