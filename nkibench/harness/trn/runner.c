/* runner.c - the trusted side of a trn kernel's process.  No code of the
 * kernel runs here: its Python ran in the compile sandbox and left one
 * NEFF per shape (kernel-<i>.neff, shapes.txt line i); this runner loads
 * them with the Neuron runtime (libnrt, its documented C API, looked up at
 * run time), owns the device tensors, locks itself down with seccomp once
 * the runtime is up, then serves the profiler's commands (runner_proto.h):
 *
 *   LOAD   every tensor from the region to the device tensors of the NEFF
 *          built for the header's dims (inputs, and outputs as the profiler
 *          poisoned them);
 *   CALL   nrt_execute (synchronous); while the header's `profile` is set,
 *          inside nrt_profile_start/stop, which writes the execution's trace
 *          to ntff/call-<k>.ntff (the directory the driver made for this
 *          runner's uid), k counting the profiled calls from 0: the
 *          profiler reads each one's on-device time with neuron-profile;
 *   FETCH  every tensor back to the region (inputs too: they must come back
 *          unchanged);
 *   NOP, DRAIN  nothing: an execution is over when nrt_execute returns.
 *
 * The region's tensors are the task's, inputs then outputs, named in
 * tensors.txt; a NEFF's tensors are matched to them by name, else by order,
 * and must have their sizes.  nrt.conf names the runtime library and the
 * NeuronCore.  Any runtime error ends the process with AO_RUN_EXIT_DEVICE
 * and the error on stderr.
 *
 * Built and tested here against a stand-in runtime (tests/trn-fake); not
 * yet run on a NeuronCore (docs/TARGETS.md). */
#include <dlfcn.h>
#include <stdio.h>
#include <time.h>

#include "../runner_side.h"

#define MAX_SHAPES 4
#define NAME_MAX_LEN 256

/* The runtime's types and calls as nrt.h and nrt_experimental.h document
 * them (Neuron runtime 2.x): declared here, resolved with dlsym. */
typedef int nrt_status;
typedef struct nrt_model nrt_model;
typedef struct nrt_tensor nrt_tensor;
typedef void nrt_tensor_set;
enum { NRT_TENSOR_PLACEMENT_DEVICE = 0 };
enum { NRT_FRAMEWORK_TYPE_NO_FW = 1 };
enum { NRT_TENSOR_USAGE_INPUT = 0, NRT_TENSOR_USAGE_OUTPUT = 1 };
typedef struct {
    char name[NAME_MAX_LEN];
    int usage;
    size_t size;
    int dtype;
    uint32_t *shape;
    uint32_t ndim;
} nrt_tensor_info;
typedef struct {
    uint64_t tensor_count;
    nrt_tensor_info tensor_array[];
} nrt_tensor_info_array;

static struct {
    nrt_status (*init)(int, const char *, const char *);
    nrt_status (*load)(const void *, size_t, int32_t, int32_t, nrt_model **);
    nrt_status (*tensor_info)(nrt_model *, nrt_tensor_info_array **);
    nrt_status (*allocate_tensor_set)(nrt_tensor_set **);
    nrt_status (*add_tensor)(nrt_tensor_set *, const char *, nrt_tensor *);
    nrt_status (*tensor_allocate)(int, int, size_t, const char *, nrt_tensor **);
    nrt_status (*tensor_write)(nrt_tensor *, const void *, size_t, size_t);
    nrt_status (*tensor_read)(const nrt_tensor *, void *, size_t, size_t);
    nrt_status (*execute)(nrt_model *, const nrt_tensor_set *, nrt_tensor_set *);
    nrt_status (*profile_start)(nrt_model *, const char *);
    nrt_status (*profile_stop)(const char *);
} nrt;

struct shape {
    int dims[AO_RUN_MAX_DIMS], ndims;
    nrt_model *model;
    nrt_tensor *t[AO_RUN_MAX_PTRS]; /* by the region's tensor order */
    size_t size[AO_RUN_MAX_PTRS];
    nrt_tensor_set *in, *out;
};

static void die(const char *what, nrt_status s)
{
    fprintf(stderr, "%s: Neuron runtime status %d\n", what, s);
    fflush(stderr);
    _exit(AO_RUN_EXIT_DEVICE);
}

static void fail(const char *msg)
{
    fprintf(stderr, "%s\n", msg);
    fflush(stderr);
    _exit(AO_RUN_EXIT_DEVICE);
}

static char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    long len;

    if (!f)
        return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (len = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (buf = malloc((size_t)len + 1)) && fread(buf, 1, (size_t)len, f) == (size_t)len) {
        buf[len] = '\0';
        *n = (size_t)len;
    } else {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    return buf;
}

static void *sym(void *lib, const char *name)
{
    void *p = dlsym(lib, name);
    if (!p) {
        fprintf(stderr, "the Neuron runtime has no %s\n", name);
        fflush(stderr);
        _exit(AO_RUN_EXIT_DEVICE);
    }
    return p;
}

/* nrt.conf: "lib PATH" and "core N". */
static void *open_runtime(int *core)
{
    char line[600], lib[520] = "libnrt.so.1";
    FILE *f = fopen("/work/nrt.conf", "r");
    void *h;

    *core = 0;
    while (f && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        if (!strncmp(line, "lib ", 4))
            snprintf(lib, sizeof lib, "%s", line + 4);
        else if (!strncmp(line, "core ", 5))
            *core = atoi(line + 5);
    }
    if (f)
        fclose(f);
    /* the SDK's library, never one the kernel's build could have left in /work */
    if (strchr(lib, '/') && (lib[0] != '/' || !strncmp(lib, "/work/", 6) || strstr(lib, "..")))
        fail("nrt.conf names a runtime library outside the SDK");
    if (!(h = dlopen(lib, RTLD_NOW | RTLD_LOCAL))) {
        fprintf(stderr, "cannot load the Neuron runtime (%s): %s\n", lib, dlerror());
        fflush(stderr);
        _exit(AO_RUN_EXIT_DEVICE);
    }
    *(void **)&nrt.init = sym(h, "nrt_init");
    *(void **)&nrt.load = sym(h, "nrt_load");
    *(void **)&nrt.tensor_info = sym(h, "nrt_get_model_tensor_info");
    *(void **)&nrt.allocate_tensor_set = sym(h, "nrt_allocate_tensor_set");
    *(void **)&nrt.add_tensor = sym(h, "nrt_add_tensor_to_tensor_set");
    *(void **)&nrt.tensor_allocate = sym(h, "nrt_tensor_allocate");
    *(void **)&nrt.tensor_write = sym(h, "nrt_tensor_write");
    *(void **)&nrt.tensor_read = sym(h, "nrt_tensor_read");
    *(void **)&nrt.execute = sym(h, "nrt_execute");
    *(void **)&nrt.profile_start = sym(h, "nrt_profile_start");
    *(void **)&nrt.profile_stop = sym(h, "nrt_profile_stop");
    return h;
}

/* tensors.txt: the task's tensor names, inputs then outputs ("in NAME" or
 * "out NAME" a line), as the region holds them. */
static int read_names(char names[][64], int *is_in, int max)
{
    char line[128], kind[8], name[64];
    FILE *f = fopen("/work/tensors.txt", "r");
    int n = 0;

    while (f && n < max && fgets(line, sizeof line, f))
        if (sscanf(line, "%7s %63s", kind, name) == 2) {
            snprintf(names[n], 64, "%s", name);
            is_in[n++] = !strcmp(kind, "in");
        }
    if (f)
        fclose(f);
    return n;
}

/* Load kernel-<k>.neff and give each of the region's tensors its device
 * tensor: the NEFF's tensor of the same name and direction, else the next
 * one of that direction in the NEFF's order. */
static void load_shape(struct shape *s, int k, int core, char names[][64], const int *is_in,
                       int nptrs)
{
    char path[64], msg[400];
    size_t n = 0;
    char *neff;
    nrt_tensor_info_array *info = NULL;
    int used[64] = {0};
    nrt_status st;

    snprintf(path, sizeof path, "/work/kernel-%d.neff", k);
    if (!(neff = slurp(path, &n)))
        fail("the build left no NEFF for a shape (kernel-<i>.neff)");
    if ((st = nrt.load(neff, n, core, -1, &s->model)) != 0)
        die("loading the NEFF", st);
    free(neff);
    if ((st = nrt.tensor_info(s->model, &info)) != 0 || !info)
        die("reading the NEFF's tensors", st);
    if ((st = nrt.allocate_tensor_set(&s->in)) != 0 || (st = nrt.allocate_tensor_set(&s->out)) != 0)
        die("allocating tensor sets", st);
    for (int i = 0; i < nptrs; i++) {
        int want = is_in[i] ? NRT_TENSOR_USAGE_INPUT : NRT_TENSOR_USAGE_OUTPUT, pick = -1;
        for (uint64_t t = 0; t < info->tensor_count && t < 64 && pick < 0; t++)
            if (!used[t] && info->tensor_array[t].usage == want &&
                !strncmp(info->tensor_array[t].name, names[i], NAME_MAX_LEN))
                pick = (int)t;
        for (uint64_t t = 0; t < info->tensor_count && t < 64 && pick < 0; t++)
            if (!used[t] && info->tensor_array[t].usage == want)
                pick = (int)t;
        if (pick < 0) {
            snprintf(msg, sizeof msg, "the NEFF has no %s tensor for the task's '%s' (it has %llu "
                     "tensors)", is_in[i] ? "input" : "output", names[i],
                     (unsigned long long)info->tensor_count);
            fail(msg);
        }
        used[pick] = 1;
        s->size[i] = info->tensor_array[pick].size;
        if ((st = nrt.tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, core, s->size[i], names[i],
                                      &s->t[i])) != 0)
            die("allocating a device tensor", st);
        if ((st = nrt.add_tensor(is_in[i] ? s->in : s->out, info->tensor_array[pick].name, s->t[i])) != 0)
            die("adding a tensor to a set", st);
    }
    /* the NEFF's other tensors (an output the kernel returns beyond the
     * task's, say) would stay unbound: refuse it */
    for (uint64_t t = 0; t < info->tensor_count && t < 64; t++)
        if (!used[t]) {
            snprintf(msg, sizeof msg, "the NEFF has a tensor the task does not: '%.200s'",
                     info->tensor_array[t].name);
            fail(msg);
        }
}

int main(int argc, char **argv)
{
    uint64_t size, seq = 0;
    int nptrs, code, core, nshapes = 0, profiled = 0;
    char *base = ao_runner_attach(argc, argv, &size, &nptrs, &code);
    char names[AO_RUN_MAX_PTRS][64], line[256];
    int is_in[AO_RUN_MAX_PTRS];
    struct shape shapes[MAX_SHAPES];
    struct shape *cur = NULL;
    FILE *f;
    nrt_status st;

    if (!base)
        return code;
    memset(shapes, 0, sizeof shapes);
    if (read_names(names, is_in, AO_RUN_MAX_PTRS) != nptrs)
        fail("tensors.txt does not name the region's tensors");
    open_runtime(&core);
    if ((st = nrt.init(NRT_FRAMEWORK_TYPE_NO_FW, "", "")) != 0)
        die("starting the Neuron runtime", st);
    /* one NEFF per line of shapes.txt, loaded before the filter */
    if (!(f = fopen("/work/shapes.txt", "r")))
        fail("no shapes.txt");
    while (nshapes < MAX_SHAPES && fgets(line, sizeof line, f)) {
        char *p = line, *end;
        for (int d = 0; d < AO_RUN_MAX_DIMS; d++, p = end) {
            long v = strtol(p, &end, 10);
            if (end == p)
                break;
            shapes[nshapes].dims[d] = (int)v;
            shapes[nshapes].ndims = d + 1;
        }
        load_shape(&shapes[nshapes], nshapes, core, names, is_in, nptrs);
        nshapes++;
    }
    fclose(f);
    if (!nshapes)
        fail("shapes.txt names no shape");
    if ((code = ao_runner_lockdown(base)) != 0)
        return code;
    for (;;) {
        uint64_t off[AO_RUN_MAX_PTRS], bytes[AO_RUN_MAX_PTRS];
        uint32_t cmd;

        seq = ao_runner_next(seq);
        cmd = ao_hdr->cmd;
        if (cmd == AO_RUN_CMD_EXIT)
            return 0;
        if (cmd == AO_RUN_CMD_LOAD || cmd == AO_RUN_CMD_CALL || cmd == AO_RUN_CMD_FETCH) {
            int dims[AO_RUN_MAX_DIMS];
            memcpy(dims, (const void *)ao_hdr->dims, sizeof dims);
            cur = NULL;
            for (int k = 0; k < nshapes && !cur; k++)
                if (!memcmp(shapes[k].dims, dims, sizeof(int) * (size_t)shapes[k].ndims))
                    cur = &shapes[k];
            if (!cur)
                fail("called at a shape no NEFF was built for");
            for (int i = 0; i < nptrs; i++) {
                off[i] = ao_hdr->off[i];
                bytes[i] = ao_hdr->bytes[i];
                if (off[i] < AO_RUN_DATA_OFFSET || off[i] > size || bytes[i] > size - off[i])
                    return 125;
                if (bytes[i] != cur->size[i]) {
                    snprintf(line, sizeof line, "the NEFF's tensor for '%s' holds %zu bytes, the "
                             "task's %llu", names[i], cur->size[i], (unsigned long long)bytes[i]);
                    fail(line);
                }
            }
        }
        if (cmd == AO_RUN_CMD_LOAD) {
            for (int i = 0; i < nptrs; i++)
                if ((st = nrt.tensor_write(cur->t[i], base + off[i], 0, bytes[i])) != 0)
                    die("copying a tensor to the device", st);
        } else if (cmd == AO_RUN_CMD_CALL) {
            struct timespec t0, t1;
            char ntff[64];
            int prof = ao_hdr->profile != 0;
            snprintf(ntff, sizeof ntff, "/work/ntff/call-%d.ntff", profiled);
            if (prof && (st = nrt.profile_start(cur->model, ntff)) != 0)
                die("starting the device profile", st);
            clock_gettime(CLOCK_MONOTONIC, &t0);
            if ((st = nrt.execute(cur->model, cur->in, cur->out)) != 0)
                die("running the kernel", st);
            clock_gettime(CLOCK_MONOTONIC, &t1);
            if (prof) {
                if ((st = nrt.profile_stop(ntff)) != 0)
                    die("saving the device profile", st);
                profiled++;
            }
            ao_hdr->device_ns = (uint64_t)((t1.tv_sec - t0.tv_sec) * 1000000000LL + (t1.tv_nsec - t0.tv_nsec));
        } else if (cmd == AO_RUN_CMD_FETCH) {
            for (int i = 0; i < nptrs; i++)
                if ((st = nrt.tensor_read(cur->t[i], base + off[i], 0, bytes[i])) != 0)
                    die("copying a tensor from the device", st);
        }
        ao_runner_done(seq);
    }
}
