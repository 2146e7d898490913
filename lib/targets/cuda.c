/* cuda.c - the cuda target: a .cu file whose one external function,
 * extern "C" void kernel(...), launches its work on the default stream over
 * device pointers (docs/TARGETS.md).  nvcc builds it in the compile
 * sandbox; the trusted runner (nkibench/harness/cuda/runner.cu) owns the
 * device buffers, copies the profiler's tensors in and out around each call
 * (untimed), flushes the L2 before it, and ends every call with a
 * device-wide synchronize.  The profiler's clock times the call; the
 * runner's CUDA events are reported beside it.
 *
 * Built and checked without a GPU; its profiles, calibration and
 * test-cuda ran on an H200 (issue 26, docs/BENCHMARKS.md). */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cJSON.h"
#include "core/task.h"
#include "core/util.h"
#include "wire/names.h"
#include "measure/calib.h"
#include "measure/elfcheck.h"
#include "measure/job.h"
#include "measure/sandbox.h"
#include "measure/vendor.h"
#include "targets/cuda_metrics.h"
#include "targets/target.h"

#define CUDA_HOME "/usr/local/cuda"
#define CUDA_FLAGS "-O3 -std=c++17"

/* The toolkit's own directory: ACCELOPT_CUDA_HOME (absolute), else
 * /usr/local/cuda.  That is often a link, on some machines through
 * /etc/alternatives, which the build sandbox does not have (the H200 of
 * issue 26): nvcc is called by the path the link resolves to (only
 * characters a shell takes as they are: it reaches the build's command),
 * and that directory is bound into the build sandbox where it is not
 * under /usr. */
static const char *cuda_home(void)
{
    static char real[PATH_MAX];
    const char *home = getenv("ACCELOPT_CUDA_HOME");

    if (!home || home[0] != '/')
        home = CUDA_HOME;
    /* never the root itself: it would be bound over the sandbox's */
    if (!real[0] && (!realpath(home, real) || real[0] != '/' || strlen(real) < 2 ||
                     strspn(real, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                  "0123456789/._+-") != strlen(real) ||
                     strlen(real) > 200))
        snprintf(real, sizeof real, "%s", CUDA_HOME);
    return real;
}

static const char *nvcc_path(void)
{
    static char path[PATH_MAX + 16];

    if (!path[0] && ao_name(path, sizeof path, "%s/bin/nvcc", cuda_home()) < 0)
        path[0] = '\0'; /* refused, not cut: no nvcc there */
    return path;
}

static const char *const cuda_tags[] = {"", "cuda", "cu", "cpp", "c++", "cc", NULL};

/* The GPU's architecture: ACCELOPT_CUDA_ARCH (sm_NN[a]), else what
 * nvidia-smi says of GPU 0 (compute capability 9.0 is sm_90a, so kernels
 * may use wgmma and TMA), else sm_90a (the H100 this target is built for). */
static const char *cuda_arch(void)
{
    static char arch[32];
    const char *env = getenv("ACCELOPT_CUDA_ARCH");
    char *out = NULL, e[AO_ERRLEN];
    char *argv[] = {(char *)"nvidia-smi", (char *)"--query-gpu=compute_cap",
                    (char *)"--format=csv,noheader", (char *)"--id=0", NULL};
    int st = 0, major, minor;

    if (arch[0])
        return arch;
    /* it reaches the build's shell command: sm_ and [a-z0-9_] only */
    if (env && strncmp(env, "sm_", 3) == 0 && strlen(env) > 3 && strlen(env) < 16 &&
        strspn(env, "abcdefghijklmnopqrstuvwxyz0123456789_") == strlen(env)) {
        snprintf(arch, sizeof arch, "%s", env);
        return arch;
    }
    snprintf(arch, sizeof arch, "sm_90a");
    if (access("/dev/nvidiactl", F_OK) == 0 &&
        ao_spawn(argv, NULL, &out, 200, &st, e, sizeof e) == 0 && st == 0 && out &&
        sscanf(out, "%d.%d", &major, &minor) == 2 && major > 0 && major < 100 && minor >= 0 &&
        minor < 10)
        snprintf(arch, sizeof arch, "sm_%d%d%s", major, minor, major >= 9 ? "a" : "");
    free(out);
    return arch;
}

/* The code generation flag: machine code for the GPU's architecture
 * only (-arch=sm_90a would also embed PTX for compute_90, compiling the
 * device code twice: a fifth of nvcc's time, for code never run here). */
static const char *cuda_gencode(void)
{
    static char flag[96];
    const char *arch = cuda_arch();

    if (!flag[0])
        snprintf(flag, sizeof flag, "-gencode=arch=compute_%s,code=%s", arch + 3, arch);
    return flag;
}

static void cuda_convention(const struct ao_task *t, const char *size, const long long *dims,
                            struct ao_buf *b)
{
    ao_buf_printf(b, "extern \"C\" %s;\n\nA host function: every pointer is a device pointer. "
                  "Launch your kernels on the default stream (no streams, graphs or threads); "
                  "the call is timed to a device-wide synchronize, with the L2 cache flushed "
                  "before it.\n", t->signature);
    ao_target_tensors_text(t, size, dims, " (TF32 or half precision alone will not meet it)", b);
    ao_buf_printf(b, "Compiled with: %s %s\n", ao_target_cuda.compiler, cuda_gencode());
}

static int cuda_available(char *err, size_t errlen)
{
    if (access(nvcc_path(), X_OK) < 0) {
        snprintf(err, errlen, "the cuda target needs nvcc at %s, and it is not there (the "
                 "toolkit is looked for at ACCELOPT_CUDA_HOME, else " CUDA_HOME ")", nvcc_path());
        return -1;
    }
    if (access("/dev/nvidiactl", F_OK) < 0 || access("/dev/nvidia0", F_OK) < 0) {
        snprintf(err, errlen, "no NVIDIA GPU on this machine (/dev/nvidia0 and /dev/nvidiactl "
                 "are absent): cuda kernels can be built and checked here (--build-only), "
                 "not run");
        return -1;
    }
    return 0;
}

/* nvcc with the target's flags and the GPU's architecture, then args. */
static int nvcc_host(char *const *args, char *err, size_t errlen)
{
    char arch[96], flags[] = CUDA_FLAGS, *argv[32];
    int n = 0;

    snprintf(arch, sizeof arch, "%s", cuda_gencode());
    argv[n++] = (char *)nvcc_path();
    for (char *f = strtok(flags, " "); f && n < 8; f = strtok(NULL, " "))
        argv[n++] = f;
    argv[n++] = arch;
    for (int i = 0; args[i] && n < 31; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    return ao_target_run_host(argv, err, errlen);
}

static void cuda_basis(struct ao_buf *b);

/* The toolkit's CUPTI library, for the runner's device clock (harness/
 * cuda/device_clock.cuh opens it at run time), or "" where the toolkit has
 * none: the runner then times calls with CUDA events alone.  The places
 * toolkits put it, in the toolkit's own directory. */
static const char *cuda_cupti_lib(void)
{
    static const char *const where[] = {"lib64", "lib", "extras/CUPTI/lib64",
                                        "targets/x86_64-linux/lib", NULL};
    static char lib[PATH_MAX];
    static int looked;
    char f[PATH_MAX + 64], real[PATH_MAX];

    for (int i = 0; !looked && where[i]; i++) {
        /* it reaches a macro of the runner's source: plain characters only */
        if (ao_name(f, sizeof f, "%s/%s/libcupti.so", cuda_home(), where[i]) == 0 && access(f, R_OK) == 0 &&
            realpath(f, real) && strlen(real) < 300 &&
            strspn(real, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._+-") ==
                strlen(real)) {
            snprintf(lib, sizeof lib, "%s", real);
            break;
        }
    }
    looked = 1;
    return lib;
}

/* runner.o is the same for every task: nvcc takes seconds over it, so it
 * is built once per machine and kept (ao_target_kept_object) under the hash
 * of all it depends on: nvcc and its version, the flags, the architecture,
 * the runner's sources. */
static int cuda_runner_object(const char *obj, char *err, size_t errlen)
{
    struct ao_buf b = {0};
    char inc[700], src[700], cupti[400], cupti_inc[PATH_MAX + 32];
    char *runner[] = {inc, (char *)"-c", src, (char *)"-o", (char *)obj, NULL, NULL, NULL};
    int rc, n = 5;

    if (ao_name(inc, sizeof inc, "-I%s/lib", ao_home()) < 0 ||
        ao_name(src, sizeof src, "%s/nkibench/harness/cuda/runner.cu", ao_home()) < 0 ||
        (cuda_cupti_lib()[0] && (ao_name(cupti, sizeof cupti, "-DAO_CUPTI_LIB=\"%s\"", cuda_cupti_lib()) < 0 ||
                                 ao_name(cupti_inc, sizeof cupti_inc, "-I%s/extras/CUPTI/include", cuda_home()) < 0)))
        return ao_errf(err, errlen, "the runner's paths are too long ('%.80s', '%.80s')", ao_home(), cuda_home());
    cuda_basis(&b);
    ao_target_basis_runner_side(&b);
    if (cuda_cupti_lib()[0]) {
        runner[n++] = cupti;
        runner[n++] = cupti_inc;
        ao_buf_printf(&b, "cupti %s\n", cuda_cupti_lib());
    }
    rc = ao_target_kept_object("cuda-runner", &b, nvcc_host, runner, obj, err, errlen);
    ao_buf_release(&b);
    return rc;
}

/* runner.o and stub.o for a task: trusted code, compiled on the host */
static int cuda_harness(const struct ao_task *t, const char *dir, char *err, size_t errlen)
{
    char obj[800], stub[800], stubo[800];
    /* the stub is host code only: the host compiler builds it in a tenth
     * of nvcc's time (nvcc -I for cuda_runtime.h is not needed: it calls
     * only kernel()) */
    char *stubc[] = {(char *)"g++", (char *)"-O2", (char *)"-x", (char *)"c++", (char *)"-c", stub,
                     (char *)"-o", stubo, NULL};

    if (ao_target_write_stub(t, dir, "extern \"C\" ", "stub.cu", err, errlen) < 0)
        return -1;
    if (ao_name(stub, sizeof stub, "%s/stub.cu", dir) < 0 || ao_name(obj, sizeof obj, "%s/runner.o", dir) < 0 ||
        ao_name(stubo, sizeof stubo, "%s/stub.o", dir) < 0)
        return ao_errf(err, errlen, "the job directory's path is too long");
    return cuda_runner_object(obj, err, errlen) < 0 || ao_target_run_host(stubc, err, errlen) < 0 ? -1 : 0;
}

static const char *const cuda_harness_files[] = {"proto.h", "runner.o", "stub.o", NULL};

/* Compile the kernel (its dependencies listed in kernel.d, for the include
 * rule), then link it with the runner and the stub, the CUDA runtime
 * static, the stack never executable.  nvcc's temporary files stay in the
 * job directory. */
static void cuda_build_command(char *cmd, size_t len)
{
    const char *gen = cuda_gencode();
    snprintf(cmd, len,
             "export TMPDIR=/work/tmp && mkdir -p tmp && "
             "%s " CUDA_FLAGS " %s -include proto.h -MD -MF kernel.d -c kernel.cu -o kernel.o"
             " && %s %s -Xlinker -z,noexecstack kernel.o runner.o stub.o -o runner",
             nvcc_path(), gen, nvcc_path(), gen);
}

/* What the kernel's object may use: nvcc's own registration and launch
 * calls, the runtime's memory, launch and attribute calls, the C++ runtime
 * nvcc's host code needs, and the math library.  No streams, events,
 * graphs, threads, device resets or limits, no other library. */
static const char *const cuda_undefined[] = {
    "__cudaRegisterFatBinary", "__cudaRegisterFatBinaryEnd", "__cudaUnregisterFatBinary",
    "__cudaRegisterFunction", "__cudaRegisterVar", "__cudaRegisterManagedVar",
    "__cudaRegisterLinkedBinary", "__cudaInitModule", "__cudaPushCallConfiguration",
    "__cudaPopCallConfiguration", "__cudaLaunchKernel", "__cudaLaunchKernel_ptsz",
    "__cudaGetKernel", "cudaLaunchKernel", "cudaLaunchCooperativeKernel",
    "cudaMalloc", "cudaFree", "cudaMemset", "cudaMemsetAsync", "cudaMemcpy",
    "cudaMemcpyAsync", "cudaMemcpyToSymbol", "cudaMemcpyFromSymbol", "cudaGetSymbolAddress",
    "cudaGetLastError", "cudaPeekAtLastError", "cudaGetErrorString", "cudaGetErrorName",
    "cudaDeviceSynchronize", "cudaGetDevice", "cudaDeviceGetAttribute",
    "cudaGetDeviceProperties", "cudaGetDeviceProperties_v2", "cudaFuncSetAttribute",
    "cudaFuncGetAttributes", "cudaFuncSetCacheConfig",
    "cudaOccupancyMaxActiveBlocksPerMultiprocessor",
    "cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags",
    "cudaOccupancyMaxPotentialBlockSize", "cudaOccupancyAvailableDynamicSMemPerBlock",
    "_Unwind_Resume", "__gxx_personality_v0", "__cxa_guard_acquire", "__cxa_guard_release",
    "__cxa_guard_abort", "__cxa_atexit", "atexit", "__dso_handle", "__stack_chk_fail",
    "memcpy", "memset", "memmove", "abort", "malloc", "calloc", "free",
    /* the math library (host code) */
    "sqrt", "exp", "log", "pow", "tanh", "fabs", "floor", "ceil", "fmax", "fmin", "erf",
    "expf", "logf", "powf", "sqrtf", "tanhf", "fabsf", "floorf", "ceilf", "fmaxf", "fminf",
    "erff", "sin", "cos", "sinf", "cosf", "exp2", "exp2f", "log2", "log2f",
    "fmod", "fmodf", "lround", "lroundf", "llround", "llroundf", "round", "roundf", "trunc",
    "truncf", "rint", "rintf", "lrint", "lrintf", "exp10", "exp10f", "log10", "log10f", "log1p",
    "log1pf", "expm1", "expm1f", "atan", "atanf", "atan2", "atan2f", "tan", "tanf", "cbrt",
    "cbrtf", "hypot", "hypotf", "fma", "fmaf", "ldexp", "ldexpf", "frexp", "frexpf",
    "__assert_fail", /* a host-side assert: it aborts, which the runner reports as a crash */
    NULL};

/* Resolve "." and ".." in an absolute path, lexically. */
static void normalize(const char *in, char *out, size_t len)
{
    char tmp[1024], *seg[128];
    int n = 0;
    size_t o = 0;

    snprintf(tmp, sizeof tmp, "%s", in);
    for (char *s = strtok(tmp, "/"); s && n < 128; s = strtok(NULL, "/")) {
        if (!strcmp(s, "."))
            continue;
        if (!strcmp(s, "..")) {
            if (n > 0)
                n--;
            continue;
        }
        seg[n++] = s;
    }
    out[0] = '\0';
    for (int i = 0; i < n && o < len; i++) {
        int w = snprintf(out + o, len - o, "/%s", seg[i]);
        if (w < 0)
            break;
        o += (size_t)w;
    }
    if (!n && len > 1)
        snprintf(out, len, "/");
}

/* Inside the toolkit's own directory (where that is not under /usr). */
static int under_toolkit(const char *norm)
{
    size_t n = strlen(cuda_home());
    return n > 1 && strncmp(norm, cuda_home(), n) == 0 && norm[n] == '/';
}

/* Every file the kernel includes is a system or toolkit header (under
 * /usr or the toolkit's directory), or the kernel and its prototype
 * themselves. */
static int deps_check(const char *dir, char *reason, size_t len)
{
    char path[800], e[AO_ERRLEN], *text, *p;

    if (ao_name(path, sizeof path, "%s/kernel.d", dir) < 0)
        return ao_errf(reason, len, "the job directory's path is too long");
    if (!(text = ao_read_file_max(path, 4u << 20, NULL, e, sizeof e))) {
        snprintf(reason, len, "nvcc wrote no dependency list: %s", e);
        return -1;
    }
    p = strchr(text, ':');
    for (p = p ? p + 1 : text; *p;) {
        char dep[1024], norm[1024];
        size_t n;
        while (*p == ' ' || *p == '\t' || *p == '\n' || (*p == '\\' && p[1] == '\n'))
            p += *p == '\\' ? 2 : 1;
        n = strcspn(p, " \t\n");
        if (!n)
            break;
        if (n >= sizeof dep || memchr(p, '\\', n)) {
            snprintf(reason, len, "includes a file whose name cannot be checked");
            free(text);
            return 1;
        }
        memcpy(dep, p, n);
        dep[n] = '\0';
        p += n;
        if (!strcmp(dep, "kernel.cu") || !strcmp(dep, "proto.h") || !strcmp(dep, "./proto.h") ||
            !strcmp(dep, "/work/kernel.cu") || !strcmp(dep, "/work/proto.h"))
            continue;
        normalize(dep, norm, sizeof norm);
        if (dep[0] != '/' || (strncmp(norm, "/usr/", 5) != 0 && !under_toolkit(norm))) {
            snprintf(reason, len, "includes '%.200s': kernels may include system and CUDA "
                     "toolkit headers only", dep);
            free(text);
            return 1;
        }
    }
    free(text);
    return 0;
}

static int cuda_check_build(const char *dir, char *reason, size_t len)
{
    static const char *const weak[] = {"DW.ref.__gxx_personality_v0", NULL};
    struct ao_elf_rules r = {"kernel", weak, cuda_undefined, NULL, "_ZL24__sti____cudaRegisterAllv", 1};
    char path[800];
    int e;

    if ((e = deps_check(dir, reason, len)) != 0)
        return 1;
    if (ao_name(path, sizeof path, "%s/kernel.o", dir) < 0)
        return ao_errf(reason, len, "the job directory's path is too long"), 1;
    e = ao_elf_check_rules(path, &r, reason, len);
    return e != 0 ? 1 : 0;
}

/* The directory the CUDA runtime must search for the driver's library
 * (libcuda.so.1), or NULL where the loader finds it by itself.  GPU
 * machines that mount the driver from the host (/usr/local/nvidia/lib64)
 * often name it in LD_LIBRARY_PATH alone, which the sandbox does not pass
 * on: without it the runtime reports no driver. */
static const char *cuda_driver_dir(void)
{
    static const char *const system[] = {"/usr/lib/x86_64-linux-gnu", "/usr/lib64",
                                         "/lib/x86_64-linux-gnu", "/usr/lib", NULL};
    static char dir[512];
    static int done;
    char lp[2048], f[600], *save = NULL;
    const char *env = getenv("LD_LIBRARY_PATH");

    if (done)
        return dir[0] ? dir : NULL;
    done = 1;
    for (int i = 0; system[i]; i++) {
        if (ao_name(f, sizeof f, "%s/libcuda.so.1", system[i]) == 0 && access(f, R_OK) == 0)
            return NULL;
    }
    snprintf(lp, sizeof lp, "%s:/usr/local/nvidia/lib64", env ? env : "");
    for (char *d = strtok_r(lp, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
        /* an absolute path under /usr, nothing that walks up: the sandbox
         * sees /usr as the host has it */
        if (strncmp(d, "/usr/", 5) != 0 || strstr(d, "..") || strlen(d) >= sizeof dir)
            continue;
        if (ao_name(f, sizeof f, "%s/libcuda.so.1", d) == 0 && access(f, R_OK) == 0) {
            snprintf(dir, sizeof dir, "%s", d);
            return dir;
        }
    }
    return NULL;
}

/* The toolkit where it is not under /usr, and the links of
 * /etc/alternatives (where a system's cc, c++ or the toolkit itself may
 * point through). */
static void cuda_build_sandbox(struct ao_sandbox_spec *s)
{
    int n = 0;

    if (strncmp(cuda_home(), "/usr/", 5) != 0)
        s->ro_paths[n++] = cuda_home();
    s->ro_paths[n] = "/etc/alternatives";
}

/* A GPU's process: the driver's nodes, a /proc of its own (the runtime
 * reads it), and no RLIMIT_AS (the driver reserves address space the size
 * of the GPU's memory): docs/TARGETS.md, "Device facts". */
static const struct ao_sandbox_device gpu = {
    "gpu-nodes", "nvidia", {"nvidiactl", "nvidia-uvm", "nvidia-uvm-tools", "nvidia-modeset", NULL}, 1, 1};

static void cuda_runner_sandbox(struct ao_sandbox_spec *s)
{
    s->device = &gpu;
    s->max_procs = 64; /* the CUDA runtime starts threads of its own */
    s->lib_path = cuda_driver_dir();
}

/* "NVIDIA H100 80GB HBM3, driver 580.159.04", or "no GPU" */
static void cuda_machine(char *model, size_t mlen, char *flags, size_t flen)
{
    char *out = NULL, e[AO_ERRLEN];
    char *argv[] = {(char *)"nvidia-smi", (char *)"--query-gpu=name,driver_version",
                    (char *)"--format=csv,noheader", (char *)"--id=0", NULL};
    int st = 0;

    snprintf(model, mlen, "no GPU");
    if (access("/dev/nvidiactl", F_OK) == 0 &&
        ao_spawn(argv, NULL, &out, 400, &st, e, sizeof e) == 0 && st == 0 && out) {
        char *comma = strchr(out, ',');
        out[strcspn(out, "\n")] = '\0';
        if (comma) {
            *comma = '\0';
            snprintf(model, mlen, "%s, driver %s", out, comma + 1 + strspn(comma + 1, " "));
        }
    }
    free(out);
    snprintf(flags, flen, "%s %s", CUDA_FLAGS, cuda_gencode());
}

static void cuda_basis(struct ao_buf *b)
{
    static const char *const sources[] = {"runner.cu", "device_clock.cuh", "hw_counters.cuh", NULL};
    char path[700];

    ao_buf_printf(b, "flags %s %s %s\n", nvcc_path(), CUDA_FLAGS, cuda_gencode());
    ao_target_basis_version(b, nvcc_path(), 1);
    for (int i = 0; sources[i]; i++) /* (a path refused: the runner cannot be built, nothing kept) */
        if (ao_name(path, sizeof path, "%s/nkibench/harness/cuda/%s", ao_home(), sources[i]) == 0)
            ao_target_basis_file(b, path);
}

/* Build nkibench/harness/cuda/<name>.cu (trusted, with cuBLAS) on the host,
 * run it with up to three arguments, and parse the JSON object it prints.
 * NULL + err (what it printed, if it failed). */
static cJSON *run_tool(const char *name, const char *a1, const char *a2, const char *a3,
                       char *err, size_t errlen)
{
    char dir[] = "/tmp/accelopt-cuda-XXXXXX", src[700], exe[700], rpath[PATH_MAX + 16], *out = NULL;
    char *build[] = {src, (char *)"-o", exe, (char *)"-lcublas", (char *)"-Xlinker", rpath, NULL};
    char *run[] = {exe, (char *)a1, (char *)a2, (char *)a3, NULL};
    cJSON *j = NULL;
    int st = 0;

    if (cuda_available(err, errlen) < 0)
        return NULL;
    if (!mkdtemp(dir)) {
        snprintf(err, errlen, "cannot create a temporary directory: %s", strerror(errno));
        return NULL;
    }
    if (ao_name(src, sizeof src, "%s/nkibench/harness/cuda/%s.cu", ao_home(), name) < 0 ||
        ao_name(exe, sizeof exe, "%s/%s", dir, name) < 0 ||
        ao_name(rpath, sizeof rpath, "-rpath=%s/lib64", cuda_home()) < 0)
        ao_errf(err, errlen, "the tool's paths are too long ('%.80s', '%.80s')", ao_home(), cuda_home());
    else if (nvcc_host(build, err, errlen) == 0 && ao_spawn(run, NULL, &out, 4096, &st, err, errlen) == 0 &&
        (st != 0 || !(j = cJSON_Parse(out))))
        snprintf(err, errlen, "%s failed: %.300s", name, out ? out : "");
    free(out);
    unlink(exe);
    rmdir(dir);
    return j;
}

/* The peaks (harness/cuda/peak.cu, trusted, run on the host): the best
 * HBM bandwidth of a copy kernel, a read kernel and cudaMemcpy; the fp32
 * FMA rate; and the best fp32-accurate matmul rate, which is the higher of
 * cuBLAS SGEMM and a third of cuBLAS's TF32 tensor-op rate (what a
 * split-precision 3xTF32 kernel could reach at best). */
static int cuda_calibrate(const char *path, int bw_mib, struct ao_calib *c, char *err,
                          size_t errlen)
{
    char mib[32];
    cJSON *j;
    int rc;

    memset(c, 0, sizeof *c);
    snprintf(mib, sizeof mib, "%d", bw_mib < 1024 ? 1024 : bw_mib); /* far past the L2 */
    if (!(j = run_tool("peak", mib, NULL, NULL, err, errlen)))
        return -1;
    /* the L2 is flushed before every timed call: HBM's bandwidth at every size */
    rc = ao_target_peaks(&ao_target_cuda, j, "fma_gflops", "fma_spread", "?", path, c, err, errlen);
    cJSON_Delete(j);
    return rc;
}

/* cuBLAS SGEMM at (M, K, N): nkibench/harness/cuda/sgemm.cu, built and run
 * on the host, prints its figures as JSON. */
static int cuda_vendor_sgemm(int M, int K, int N, int cpu, const char *variant,
                             struct ao_vendor_result *r, char *err, size_t errlen)
{
    char m[16], k[16], n[16];
    cJSON *j;
    const cJSON *v;
    int rc = -1;

    (void)cpu;
    (void)variant;
    memset(r, 0, sizeof *r);
    snprintf(m, sizeof m, "%d", M);
    snprintf(k, sizeof k, "%d", K);
    snprintf(n, sizeof n, "%d", N);
    if (!(j = run_tool("sgemm", m, k, n, err, errlen)))
        return -1;
#define GET(key) (cJSON_IsNumber(v = cJSON_GetObjectItemCaseSensitive(j, key)) ? v->valuedouble : NAN)
    snprintf(r->core, sizeof r->core, "cublas");
    r->M = M, r->K = K, r->N = N;
    r->repeats = (int)GET("repeats");
    r->median_ns = GET("median_ns");
    r->min_ns = GET("min_ns");
    r->spread = GET("spread");
    r->gflops = GET("gflops");
    r->max_rel_err = GET("max_rel_err");
#undef GET
    if (!(r->median_ns > 0) || !(r->max_rel_err < 1e-4))
        snprintf(err, errlen, "cuBLAS sgemm gave no time or a wrong product (max rel. error %g)",
                 r->max_rel_err);
    else
        rc = 0;
    cJSON_Delete(j);
    return rc;
}

const struct ao_target ao_target_cuda = {
    .name = "cuda",
    .ext = "cu",
    .fence_tags = cuda_tags,
    .compiler = "nvcc " CUDA_FLAGS,
    .summary = "CUDA kernels on this machine's NVIDIA GPU (nvcc of ACCELOPT_CUDA_HOME, else " CUDA_HOME ")",
    .convention = cuda_convention,
    .calibrate = cuda_calibrate,
    .machine = cuda_machine,
    .kernel_file = "kernel.cu",
    .reference_file = "reference.cu",
    .available = cuda_available,
    .harness = cuda_harness,
    .harness_files = cuda_harness_files,
    .build_command = cuda_build_command,
    .build_mem_bytes = 16LL << 30,
    .build_sandbox = cuda_build_sandbox,
    .check_build = cuda_check_build,
    .runner_filter = ao_sandbox_gpu_runner_filter,
    .runner_sandbox = cuda_runner_sandbox,
    .before_call = ao_target_load, /* the tensors reach the GPU, and come back, untimed */
    .after_call = ao_target_fetch,
    .drain = 1,
    .poisons_on_device = 1, /* bmm's outputs are 1 GB a call at paper */
    .runner_clock = 1,      /* events around the call's work behind a gate (device_clock.cuh) */
    .device_metrics = ao_cuda_metrics,
    .basis = cuda_basis,
    .vendor_name = "cublas sgemm",
    .vendor_sgemm = cuda_vendor_sgemm,
};
