/* trn.c - the trn target: an NKI kernel (Python, `@nki.jit def kernel(...)`,
 * the neuronxcc.nki namespace of Neuron SDK 2.2x) on one NeuronCore of a
 * Trainium machine (docs/TARGETS.md).
 *
 * The kernel's Python runs only in the compile sandbox: the trusted
 * build.py compiles it with nki.baremetal into one NEFF per shape it will
 * be called at.  The trusted runner (nkibench/harness/trn/runner.c) loads
 * the NEFFs with the Neuron runtime; no code of the kernel runs in its
 * process.  The profiler's policy is the other targets': its inputs, its
 * poison, its secret checks of timed calls, its statistics.  Only the
 * latency differs: each timed execution is profiled on the device, and
 * its on-device total_time (neuron-profile view, summary-json) is the
 * latency, the execution's counters the profile a planner is shown.  The
 * checked executions and the timed ones are the same executions.
 *
 * Tested here up to the device, on a stand-in runtime and profiler
 * (tests/trn-fake); not yet run on a NeuronCore (docs/TARGETS.md). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cJSON.h"
#include "core/log.h"
#include "core/task.h"
#include "core/util.h"
#include "measure/calib.h"
#include "measure/job.h"
#include "measure/sandbox.h"
#include "targets/target.h"
#include "targets/trn_report.h"

#define TRN_FLAGS "--disable-dge --logical-nc-config=1"
#define TRN_CC_FLAGS "--auto-cast=none"
#define DEFAULT_PYTHON "/opt/aws_neuronx_venv_pytorch_2_7/bin/python3"
#define DEFAULT_NEURON_HOME "/opt/aws/neuron"

static const char *const trn_tags[] = {"", "python", "py", "nki", NULL};

/* A path from the environment that reaches a shell command or a sandbox:
 * absolute, of [A-Za-z0-9._/+-] only, no "..". */
static int safe_path(const char *p)
{
    return p && p[0] == '/' && strlen(p) < 400 && !strstr(p, "..") &&
           strspn(p, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._/+-") == strlen(p);
}

static const char *env_path(const char *name, const char *fallback)
{
    const char *v = getenv(name);
    return v && *v ? v : fallback;
}

/* The Neuron SDK's directory (libnrt in lib/, neuron-profile in bin/). */
static const char *neuron_home(void)
{
    return env_path("ACCELOPT_NEURON_HOME", DEFAULT_NEURON_HOME);
}

static void nrt_lib(char *buf, size_t len)
{
    snprintf(buf, len, "%s", env_path("ACCELOPT_NRT_LIB", ""));
    if (!buf[0])
        snprintf(buf, len, "%s/lib/libnrt.so.1", neuron_home());
}

static void profile_tool(char *buf, size_t len)
{
    snprintf(buf, len, "%s", env_path("ACCELOPT_NEURON_PROFILE", ""));
    if (!buf[0])
        snprintf(buf, len, "%s/bin/neuron-profile", neuron_home());
}

/* The Python with the Neuron SDK (neuronx-cc and its neuronxcc.nki). */
static const char *sdk_python(void)
{
    return env_path("ACCELOPT_TRN_PYTHON", DEFAULT_PYTHON);
}

/* The environment's root of that Python (two levels up: <venv>/bin/python3). */
static void python_root(char *buf, size_t len)
{
    char *s;
    snprintf(buf, len, "%s", sdk_python());
    for (int i = 0; i < 2 && (s = strrchr(buf, '/')) && s != buf; i++)
        *s = '\0';
}

/* The NeuronCore this profiler uses (one profiler per core). */
static int trn_core(void)
{
    const char *v = getenv("ACCELOPT_TRN_CORE");
    int c = v ? atoi(v) : 0;
    return c >= 0 && c < 128 ? c : 0;
}

/* trn1 or trn2, from the instance type (EC2 names it in the DMI product
 * name, "trn1.32xlarge"); ACCELOPT_TRN_PLATFORM overrides; trn1 if unknown. */
static const char *platform(void)
{
    static char p[8];
    const char *env = getenv("ACCELOPT_TRN_PLATFORM");
    char e[AO_ERRLEN], *dmi;

    if (env && (!strcmp(env, "trn1") || !strcmp(env, "trn2")))
        return env;
    if (p[0])
        return p;
    snprintf(p, sizeof p, "trn1");
    if ((dmi = ao_read_file_max("/sys/devices/virtual/dmi/id/product_name", 256, NULL, e, sizeof e))) {
        if (!strncmp(dmi, "trn2", 4))
            snprintf(p, sizeof p, "trn2");
        free(dmi);
    }
    return p;
}

/* The TensorE's peak as the profiler computes hfu from it: 128 x 128 PEs,
 * two flops a cycle (trn1 2.8 GHz, trn2 2.4 GHz: docs/TARGETS.md). */
static double pe_peak_flops(void)
{
    return 2.0 * 128 * 128 * (!strcmp(platform(), "trn2") ? 2.4e9 : 2.8e9);
}

/* A NeuronCore's process: the Neuron driver's nodes, and no RLIMIT_AS
 * (the runtime maps device memory). */
static const struct ao_sandbox_device neuron = {"neuron-nodes", "neuron", {NULL}, 0, 1};

/* A NeuronCore's device node (ACCELOPT_TRN_DEVICE names another: the
 * tests' stand-in runtime has none). */
static int device_present(void)
{
    return access(env_path("ACCELOPT_TRN_DEVICE", "/dev/neuron0"), F_OK) == 0;
}

static void trn_convention(const struct ao_task *t, const char *size, const long long *dims,
                           struct ao_buf *b)
{
    ao_buf_printf(b, "import neuronxcc.nki as nki\nimport neuronxcc.nki.language as nl\n"
                  "import neuronxcc.nki.isa as nisa\n\n@nki.jit\ndef kernel(");
    for (int i = 0; i < t->ninputs; i++)
        ao_buf_printf(b, "%s%s", i ? ", " : "", t->t[i].name);
    ao_buf_printf(b, "):  # returns %s\n\nAn NKI kernel (Neuron SDK 2.2x, the neuronxcc.nki "
                  "namespace), called with each input a float32 tensor in HBM of the shape "
                  "below; it allocates its output%s with nl.ndarray(shape, dtype=nl.float32, "
                  "buffer=nl.shared_hbm), stores every element, and returns %s. Shapes are "
                  "Python ints at trace time (x.shape). No float16 or bfloat16 anywhere in the "
                  "source. The latency is the NeuronCore's own time for one execution "
                  "(neuron-profile's total_time), inputs already in HBM.\n",
                  t->noutputs > 1 ? "a tuple of the outputs" : t->t[t->ninputs].name,
                  t->noutputs > 1 ? "s" : "", t->noutputs > 1 ? "them as a tuple" : "it");
    ao_target_tensors_text(t, size, dims, "", b);
    ao_buf_printf(b, "Compiled with: nki.baremetal, NEURON_CC_FLAGS=%s, %s (one NeuronCore, "
                  "%s)\n", TRN_CC_FLAGS, TRN_FLAGS, platform());
}

static int trn_available(char *err, size_t errlen)
{
    char lib[520], prof[520];

    nrt_lib(lib, sizeof lib);
    profile_tool(prof, sizeof prof);
    if (!device_present()) {
        snprintf(err, errlen, "no NeuronCore on this machine (/dev/neuron0 is absent): trn kernels "
                 "can be checked here (--build-only: the SDK's simulator, or accelopt's NKI host "
                 "emulation without the SDK), not measured");
        return -1;
    }
    if (!safe_path(sdk_python()) || access(sdk_python(), X_OK) < 0) {
        snprintf(err, errlen, "the trn target needs the Neuron SDK's Python (neuronx-cc 2.x) at "
                 "%.300s (set ACCELOPT_TRN_PYTHON), and it is not there", sdk_python());
        return -1;
    }
    if (!safe_path(lib) || access(lib, R_OK) < 0 || !safe_path(prof) || access(prof, X_OK) < 0) {
        snprintf(err, errlen, "the trn target needs the Neuron runtime (%.200s) and neuron-profile "
                 "(%.200s) of the aws-neuronx-runtime-lib and aws-neuronx-tools packages (set "
                 "ACCELOPT_NEURON_HOME)", lib, prof);
        return -1;
    }
    return 0;
}

/* The runner, built into a harness directory (or copied from the last one
 * built while that is there), and its hash: a job's runner must be this
 * one, byte for byte, after the kernel's build ran beside it. */
static char runner_path[PATH_MAX], runner_hex[65];

static int build_runner(const char *dir, char *err, size_t errlen)
{
    char src[700], inc[700], to[PATH_MAX], *data;
    size_t n;
    char *cc[] = {(char *)"gcc", (char *)"-O2", (char *)"-std=gnu11", inc, src, (char *)"-o",
                  to, (char *)"-ldl", NULL};

    if (ao_name(to, sizeof to, "%s/runner", dir) < 0)
        return ao_errf(err, errlen, "the harness directory's name is too long");
    if (runner_path[0] && access(runner_path, X_OK) == 0)
        return ao_copy_file(runner_path, to, err, errlen);
    if (ao_name(src, sizeof src, "%s/nkibench/harness/trn/runner.c", ao_home()) < 0 ||
        ao_name(inc, sizeof inc, "-I%s/lib", ao_home()) < 0)
        return ao_errf(err, errlen, "the harness's paths are too long ('%.80s')", ao_home());
    if (ao_target_run_host(cc, err, errlen) < 0 || !(data = ao_read_file(to, &n, err, errlen)))
        return -1;
    ao_sha256_hex(data, n, runner_hex);
    free(data);
    snprintf(runner_path, sizeof runner_path, "%s", to);
    return 0;
}

/* nrt.conf as the runner reads it: the runtime library and the core. */
static void nrt_conf(struct ao_buf *b)
{
    char lib[520];
    nrt_lib(lib, sizeof lib);
    ao_buf_printf(b, "lib %s\ncore %d\n", lib, trn_core());
}

/* The harness: the runner, build.py, and what they read of the task
 * (task.txt: "dims NAME...", then "in|out NAME DIM..." a tensor;
 * tensors.txt: "in|out NAME" in the region's order). */
static int trn_harness(const struct ao_task *t, const char *dir, char *err, size_t errlen)
{
    struct ao_buf task = {0}, names = {0}, conf = {0};
    char path[900], from[700];
    int rc = -1;

    if (build_runner(dir, err, errlen) < 0)
        return -1;
    ao_buf_printf(&task, "dims");
    for (int i = 0; i < t->ndims; i++)
        ao_buf_printf(&task, " %s", t->dims[i]);
    ao_buf_printf(&task, "\n");
    for (int i = 0; i < t->ninputs + t->noutputs; i++) {
        const char *kind = i < t->ninputs ? "in" : "out";
        ao_buf_printf(&task, "%s %s", kind, t->t[i].name);
        for (int d = 0; d < t->t[i].rank; d++)
            ao_buf_printf(&task, " %s", t->dims[t->t[i].dim[d]]);
        ao_buf_printf(&task, "\n");
        ao_buf_printf(&names, "%s %s\n", kind, t->t[i].name);
    }
    nrt_conf(&conf);
    if (ao_path(path, sizeof path, dir, "task.txt", err, errlen) < 0 ||
        ao_write_file(path, task.data, task.len, err, errlen) < 0 ||
        ao_path(path, sizeof path, dir, "tensors.txt", err, errlen) < 0 ||
        ao_write_file(path, names.data, names.len, err, errlen) < 0 ||
        ao_path(path, sizeof path, dir, "nrt.conf", err, errlen) < 0 ||
        ao_write_file(path, conf.data, conf.len, err, errlen) < 0 ||
        ao_path(from, sizeof from, ao_home(), "nkibench/harness/trn/build.py", err, errlen) < 0 ||
        ao_path(path, sizeof path, dir, "build.py", err, errlen) < 0 || ao_copy_file(from, path, err, errlen) < 0)
        goto out;
    {
        /* the host emulation, for a build where the SDK is not: one file
         * Python imports from (the sandbox sees the job directory only) */
        char *zip[] = {(char *)"/usr/bin/python3", (char *)"-m", (char *)"zipfile", (char *)"-c",
                       path, from, NULL};
        if (ao_path(path, sizeof path, dir, "emu.zip", err, errlen) < 0 ||
            ao_path(from, sizeof from, ao_home(), "nkibench/harness/trn/emu/neuronxcc", err, errlen) < 0 ||
            ao_target_run_host(zip, err, errlen) < 0)
            goto out;
    }
    rc = 0;
out:
    ao_buf_release(&task);
    ao_buf_release(&names);
    ao_buf_release(&conf);
    return rc;
}

static const char *const trn_harness_files[] = {"runner", "build.py", "task.txt", "tensors.txt",
                                                 "nrt.conf", "emu.zip", NULL};

/* The SDK's Python when there is one, else the system's (the build then
 * checks the kernel on the host emulation). */
static const char *build_python(void)
{
    return safe_path(sdk_python()) && access(sdk_python(), X_OK) == 0 ? sdk_python() : "/usr/bin/python3";
}

static void trn_build_command(char *cmd, size_t len)
{
    const char *dev = env_path("ACCELOPT_TRN_DEVICE", "/dev/neuron0");
    snprintf(cmd, len, "export NEURON_CC_FLAGS=%s NEURON_RT_NUM_CORES=1 NEURON_RT_VISIBLE_CORES=%d "
             "ACCELOPT_TRN_DEVICE=%s TMPDIR=/work/tmp && mkdir -p tmp && %s build.py", TRN_CC_FLAGS,
             trn_core(), safe_path(dev) ? dev : "/dev/neuron0", build_python());
}

static void trn_build_sandbox(struct ao_sandbox_spec *s)
{
    static char home[520], root[520];
    int n = 0;

    snprintf(home, sizeof home, "%s", neuron_home());
    python_root(root, sizeof root);
    s->device = device_present() ? &neuron : NULL;
    s->max_procs = 256; /* neuronx-cc runs many processes of its own */
    s->file_bytes = 2LL << 30;
    if (safe_path(home))
        s->ro_paths[n++] = home;
    if (safe_path(root))
        s->ro_paths[n++] = root;
    s->ro_paths[n++] = "/etc/alternatives"; /* Debian's BLAS for NumPy is a link through it */
}

/* What the build must leave as it was, and what it must have made. */
static int trn_check_build(const char *dir, char *reason, size_t len)
{
    char path[900], e[AO_ERRLEN], hex[65], *data, *shapes, *built;
    struct ao_buf conf = {0};
    size_t n;
    int nshapes = 0, rc = 1;

    if (ao_name(path, sizeof path, "%s/runner", dir) < 0 || !runner_hex[0] ||
        !(data = ao_read_file_max(path, 64u << 20, &n, e, sizeof e))) {
        snprintf(reason, len, "the trusted runner is gone from the build's directory");
        return 1;
    }
    ao_sha256_hex(data, n, hex);
    free(data);
    if (strcmp(hex, runner_hex) != 0) {
        snprintf(reason, len, "the build changed the trusted runner: a kernel's build writes its "
                 "NEFFs and nothing else");
        return 1;
    }
    nrt_conf(&conf);
    data = ao_name(path, sizeof path, "%s/nrt.conf", dir) < 0 ? NULL : ao_read_file_max(path, 4096, NULL, e, sizeof e);
    if (!data || !conf.data || strcmp(data, conf.data) != 0) {
        snprintf(reason, len, "the build changed the runner's settings (nrt.conf)");
        free(data);
        ao_buf_release(&conf);
        return 1;
    }
    free(data);
    ao_buf_release(&conf);
    if (ao_name(path, sizeof path, "%s/shapes.txt", dir) < 0)
        return ao_errf(reason, len, "the job directory's path is too long");
    if (!(shapes = ao_read_file_max(path, 4096, NULL, e, sizeof e))) {
        snprintf(reason, len, "no shapes.txt: %s", e);
        return -1;
    }
    for (const char *p = shapes; *p; p++)
        nshapes += *p == '\n';
    free(shapes);
    built = ao_name(path, sizeof path, "%s/built.txt", dir) < 0 ? NULL : ao_read_file_max(path, 256, NULL, e, sizeof e);
    /* checked only (no device here): a build-only result; where a device
     * is, the NEFFs are required whatever the build says */
    if (!device_present() && built &&
        (!strncmp(built, "simulated", 9) || !strncmp(built, "emulated", 8))) {
        rc = 0;
        goto out;
    }
    if (!built || strncmp(built, "neff", 4) != 0) {
        snprintf(reason, len, "the build left no NEFFs (built.txt says '%.40s')",
                 built ? built : "nothing");
        goto out;
    }
    for (int i = 0; i < nshapes; i++) {
        struct stat st;
        if (ao_name(path, sizeof path, "%s/kernel-%d.neff", dir, i) < 0 || lstat(path, &st) < 0 ||
            !S_ISREG(st.st_mode) || st.st_size <= 0 || st.st_size > (1LL << 30)) {
            snprintf(reason, len, "the build left no NEFF for shape %d (kernel-%d.neff)", i, i);
            goto out;
        }
    }
    rc = 0;
out:
    free(built);
    return rc;
}

/* The runtime keeps talking to its device after the filter: the GPU
 * runner's list (ioctl, opening the device again, polling, sleeping).
 * Not yet run on a NeuronCore: the runtime may need more (see OPERATING). */
static int trn_runner_filter(void **bpf, size_t *len, char *err, size_t errlen)
{
    return ao_sandbox_gpu_runner_filter(bpf, len, err, errlen);
}

/* The device nodes and the SDK's libraries; a writable ntff/ of the
 * runner's own, made fresh (the kernel's build could have left one). */
static void trn_runner_sandbox(struct ao_sandbox_spec *s)
{
    static char home[520];
    char dir[800];

    snprintf(home, sizeof home, "%s", neuron_home());
    s->device = &neuron;
    s->max_procs = 64;
    s->file_bytes = 1LL << 30; /* the traces */
    s->workdir_ro = 0;         /* for ntff/ (the rest of the directory is not its uid's) */
    s->ro_paths[0] = safe_path(home) ? home : "/etc/alternatives";
    s->ro_paths[1] = "/etc/alternatives";
    if (ao_name(dir, sizeof dir, "%s/ntff", s->workdir) < 0) {
        ao_warn("the job directory's path is too long for the runner's traces (its first profiled call will fail)");
        return;
    }
    ao_rmtree(dir);
    if (mkdir(dir, 0755) < 0 || chmod(dir, 0755) < 0 ||
        (getuid() == 0 && chown(dir, ao_sandbox_uid(s->slot), ao_sandbox_uid(s->slot)) < 0))
        ao_warn("cannot prepare '%s' for the runner's traces: %s (its first profiled call will "
                "fail)", dir, strerror(errno));
}

/* Run neuron-profile view on trace ntff of NEFF neff (both in dir) in a
 * sandbox without the device (the files came from the kernel's build and
 * run: data to it, read by trusted code); its summary-json, or NULL + err. */
static char *view_summary(const char *dir, const char *neff, const char *ntff, char *err, size_t errlen)
{
    static char home[520];
    char tool[520], n_arg[600], s_arg[600], log[900];
    char *argv[] = {tool, (char *)"view", (char *)"-n", n_arg, (char *)"-s", s_arg,
                    (char *)"--output-format", (char *)"summary-json", NULL};
    struct ao_sandbox_spec spec = {0};
    struct ao_sandbox sb;
    int fd, st = 0, to = 0;
    char *out = NULL;

    profile_tool(tool, sizeof tool);
    snprintf(home, sizeof home, "%s", neuron_home());
    snprintf(n_arg, sizeof n_arg, "/work/%s", neff);
    snprintf(s_arg, sizeof s_arg, "/work/%s", ntff);
    if (ao_name(log, sizeof log, "%s.view", dir) < 0)
        return ao_errf(err, errlen, "the job directory's name is too long"), NULL;
    if ((fd = open(log, O_CREAT | O_TRUNC | O_RDWR | O_CLOEXEC, 0600)) < 0) {
        snprintf(err, errlen, "cannot create '%s': %s", log, strerror(errno));
        return NULL;
    }
    spec.workdir = dir;
    spec.workdir_ro = 1;
    spec.argv = argv;
    spec.out_fd = fd;
    spec.cpu_seconds = 120;
    spec.mem_bytes = 8LL << 30;
    spec.file_bytes = 64LL << 20;
    spec.max_procs = 64;
    spec.seccomp = AO_SECCOMP_COMPILE;
    spec.cpu = -1;
    spec.slot = 3;
    spec.ro_paths[0] = home;
    /* a stand-in profiler outside the SDK's directory (tests) is bound too */
    if (strncmp(tool, home, strlen(home)) != 0 && safe_path(tool)) {
        static char tool_dir[520];
        snprintf(tool_dir, sizeof tool_dir, "%s", tool);
        *strrchr(tool_dir, '/') = '\0';
        spec.ro_paths[1] = tool_dir;
    }
    if (ao_sandbox_start(&spec, &sb, err, errlen) < 0 ||
        ao_sandbox_wait(&sb, ao_now_ns() + 180LL * 1000000000LL, &st, &to) < 0) {
        close(fd);
        unlink(log);
        return NULL;
    }
    close(fd);
    out = ao_read_file_max(log, 16u << 20, NULL, err, errlen);
    unlink(log);
    if (out && (to || !WIFEXITED(st) || WEXITSTATUS(st) != 0)) {
        snprintf(err, errlen, "neuron-profile view %s: %.300s", to ? "took over 180 s" : "failed", out);
        free(out);
        return NULL;
    }
    return out;
}

/* Is ntff/<name> the runner's own?  The directory is made for the runner,
 * owned by its uid, before the kernel's build runs beside it in the same
 * job directory; the build, under another uid, can rename it away and put
 * its own there, but cannot make one owned by the runner's uid.  So: a
 * real directory of a runner's uid that no one else may write, holding a
 * regular file of that uid with one link.  (Without root, every sandbox
 * is our own uid and this proves nothing: said in OPERATING.) */
static int runner_made(const char *dir, const char *name, char *err, size_t errlen)
{
    char path[900];
    struct stat d, f;
    uid_t r1 = ao_sandbox_uid(1), r2 = ao_sandbox_uid(2);

    if (getuid() != 0)
        return 0;
    if (ao_path(path, sizeof path, dir, "ntff", err, errlen) < 0)
        return -1;
    if (lstat(path, &d) < 0 || !S_ISDIR(d.st_mode) || (d.st_uid != r1 && d.st_uid != r2) ||
        (d.st_mode & 022)) {
        snprintf(err, errlen, "the device's traces (ntff/) are not the runner's: the kernel's build "
                 "replaced the directory");
        return 1;
    }
    if (ao_name(path, sizeof path, "%s/ntff/%s", dir, name) < 0)
        return ao_errf(err, errlen, "the trace %s's path is too long", name);
    if (lstat(path, &f) < 0) {
        snprintf(err, errlen, "the runner left no trace %s: %s", name, strerror(errno));
        return -1;
    }
    if (!S_ISREG(f.st_mode) || f.st_uid != d.st_uid || f.st_nlink != 1) {
        snprintf(err, errlen, "the device's trace %s is not the runner's", name);
        return 1;
    }
    return 0;
}

/* The device's time of profiled call k (its trace ntff/call-<k>.ntff, of the
 * nominal shape's NEFF), and its profile. */
static int trn_device_time(const char *dir, int call, double *ns, cJSON **profile, char *err,
                           size_t errlen)
{
    char ntff[64], *json;
    struct ao_trn_summary s;
    int rc;

    snprintf(ntff, sizeof ntff, "call-%d.ntff", call);
    if ((rc = runner_made(dir, ntff, err, errlen)) != 0)
        return rc;
    snprintf(ntff, sizeof ntff, "ntff/call-%d.ntff", call);
    if (!(json = view_summary(dir, "kernel-0.neff", ntff, err, errlen)))
        return -1;
    rc = ao_trn_summary_parse(json, pe_peak_flops(), &s, err, errlen);
    free(json);
    if (rc < 0)
        return -1;
    *ns = s.total_time_s * 1e9;
    if (profile) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "source", "neuron-profile view summary-json");
        cJSON_AddNumberToObject(o, "total_time_s", s.total_time_s);
        cJSON_AddStringToObject(o, "percent_fields", s.percent_scale ? "0-100 in the summary, shown as fractions"
                                                                      : "fractions");
        cJSON_AddItemToObject(o, "counters", ao_trn_counters_json(&s));
        *profile = o;
    }
    return 0;
}

/* The documented per-NeuronCore fp32 peaks (docs/TARGETS.md, "Device
 * facts": AccelOpt's trn1 figures, trn2's from its documentation, the
 * vector figure the VectorE's fp32 lanes plus the ScalarE's, one op a
 * cycle). */
static int trn_documented_peaks(struct ao_calib *c)
{
    int two = !strcmp(platform(), "trn2");

    memset(c, 0, sizeof *c);
    c->bw_gbs = two ? 362.5 : 410.0 * 1.073741824; /* trn1: 410 GiB/s */
    c->fma_gflops = two ? 20000 : 23750;
    c->vec_gflops = two ? 256 * 0.96 + 128 * 1.2 : 2 * 128 * 1.12;
    c->bw_spread = c->fma_spread = c->vec_spread = 0;
    snprintf(c->bw_method, sizeof c->bw_method, "documented");
    c->ncurve = 1;
    c->curve_bytes[0] = 1;
    c->curve_gbs[0] = c->bw_gbs;
    snprintf(c->cpu_model, sizeof c->cpu_model, "%s NeuronCore (documented peaks, not measured)",
             platform());
    snprintf(c->cflags, sizeof c->cflags, "%s %s", TRN_CC_FLAGS, TRN_FLAGS);
    snprintf(c->created_at, sizeof c->created_at, "documented"); /* the same id every start */
    return 0;
}

/* "trn1 NeuronCore", or "no NeuronCore" */
static void trn_machine(char *model, size_t mlen, char *flags, size_t flen)
{
    snprintf(model, mlen, device_present() ? "%s NeuronCore" : "no NeuronCore", platform());
    snprintf(flags, flen, "%s %s", TRN_CC_FLAGS, TRN_FLAGS);
}

static void trn_basis(struct ao_buf *b)
{
    char path[700], e[AO_ERRLEN], *ver = NULL;
    char *argv[] = {(char *)build_python(), (char *)"-c",
                    (char *)"import neuronxcc; print(neuronxcc.__version__)", NULL};
    int st = 0;

    ao_buf_printf(b, "flags %s %s platform %s\n", TRN_CC_FLAGS, TRN_FLAGS, platform());
    if (ao_spawn(argv, NULL, &ver, 400, &st, e, sizeof e) == 0 && ver && st == 0)
        ao_buf_printf(b, "neuronx-cc %.*s\n", (int)strcspn(ver, "\n"), ver);
    free(ver);
    /* (a path refused: the runner cannot be built, nothing is kept) */
    if (ao_path(path, sizeof path, ao_home(), "nkibench/harness/trn/runner.c", e, sizeof e) == 0)
        ao_target_basis_file(b, path);
    if (ao_path(path, sizeof path, ao_home(), "nkibench/harness/trn/build.py", e, sizeof e) == 0)
        ao_target_basis_file(b, path);
}

/* The peaks measured on the device: nkibench/harness/trn/peak.py (trusted,
 * run on the host with the SDK's Python) times a copy, a matmul and a
 * vector kernel by their profiles' total_time and prints JSON. */
static int trn_calibrate(const char *path, int bw_mib, struct ao_calib *c, char *err, size_t errlen)
{
    char script[700], mib[32], tool[520], *out = NULL;
    char *argv[] = {(char *)sdk_python(), script, mib, tool, NULL};
    cJSON *j = NULL;
    int st = 0, rc = -1;

    memset(c, 0, sizeof *c);
    if (trn_available(err, errlen) < 0)
        return -1;
    if (ao_path(script, sizeof script, ao_home(), "nkibench/harness/trn/peak.py", err, errlen) < 0)
        return -1;
    snprintf(mib, sizeof mib, "%d", bw_mib < 16 ? 16 : bw_mib);
    profile_tool(tool, sizeof tool);
    if (ao_spawn(argv, NULL, &out, 1 << 20, &st, err, errlen) < 0)
        return -1;
    if (st != 0 || !(j = cJSON_Parse(out)))
        snprintf(err, errlen, "peak.py failed: %.400s", out ? out : "");
    else
        rc = ao_target_peaks(&ao_target_trn, j, "vec_gflops", "vec_spread", "copy", path, c, err,
                             errlen);
    cJSON_Delete(j);
    free(out);
    return rc;
}

const struct ao_target ao_target_trn = {
    .name = "trn",
    .ext = "py",
    .fence_tags = trn_tags,
    .compiler = "neuronx-cc (NKI, neuronxcc.nki of Neuron SDK 2.2x) " TRN_CC_FLAGS " " TRN_FLAGS,
    .summary = "NKI kernels on one NeuronCore of this Trainium machine (Neuron SDK 2.2x)",
    .convention = trn_convention,
    .calibrate = trn_calibrate,
    .machine = trn_machine,
    .kernel_file = "kernel.py",
    /* the task's NKI baseline: make test checks it against reference.c
     * (in double) on the host emulation at three shapes; reference.c itself
     * at the paper's sizes would take minutes a call on the host */
    .reference_file = "baseline.py",
    .builds_per_shape = 1,
    .available = trn_available,
    .harness = trn_harness,
    .harness_files = trn_harness_files,
    .build_command = trn_build_command,
    .build_mem_bytes = 32LL << 30,
    .build_sandbox = trn_build_sandbox,
    .check_build = trn_check_build,
    .runner_filter = trn_runner_filter,
    .runner_sandbox = trn_runner_sandbox,
    .before_call = ao_target_load,
    .after_call = ao_target_fetch,
    .drain = 0,
    .device_time = trn_device_time,
    .documented_peaks = trn_documented_peaks,
    .failure_class = ao_trn_failure_class,
    .basis = trn_basis,
    /* no vendor matmul is timed: the NKI baselines are the reference points */
    .vendor_name = NULL,
    .vendor_sgemm = NULL,
};
