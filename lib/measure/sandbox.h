/* sandbox.h - a fresh, contained process tree for untrusted work */
#ifndef AO_SANDBOX_H
#define AO_SANDBOX_H

#include <stddef.h>
#include <sys/types.h>

enum ao_seccomp_policy {
    AO_SECCOMP_NONE,    /* the program installs its own (the kernel runner) */
    AO_SECCOMP_COMPILE  /* compilers: no sockets, ptrace, mount, namespaces... */
};

/* A device a sandboxed process may use, as its target describes it: its
 * nodes bound in, and what its runtime needs of the process.  lib/measure
 * knows no device by name: a new one is a new row in its target's driver. */
struct ao_sandbox_device {
    const char *layer;        /* named in the sandbox's layers: "gpu-nodes" */
    const char *numbered;     /* /dev/<numbered>N, N from 0 to 63, that exist: "nvidia" */
    const char *fixed[6];     /* and these /dev nodes that exist; NULL ends */
    int own_proc;             /* a /proc of its own PID namespace (CUDA will not start without) */
    int no_as_limit;          /* no RLIMIT_AS (its runtime maps device memory): the cgroup alone
                                 limits its memory */
};

struct ao_sandbox_spec {
    const char *workdir;      /* host directory mounted at /work: read-write, or */
    int workdir_ro;           /* read-only (a kernel's runner: nothing there is its to change) */
    char *const *argv;        /* program and arguments, paths as seen inside */
    const int *keep_fds;      /* fds passed on, renumbered 3, 4, ... */
    int nkeep;
    int out_fd;               /* stdout and stderr of the program (or -1) */
    long cpu_seconds;         /* RLIMIT_CPU */
    long long mem_bytes;      /* RLIMIT_AS and the cgroup memory limit */
    long long file_bytes;     /* RLIMIT_FSIZE */
    int max_procs;            /* cgroup pids.max (and RLIMIT_NPROC) */
    enum ao_seccomp_policy seccomp;
    int cpu;                  /* pin to this CPU, or -1 */
    int hold;                 /* set up everything, but exec only at ao_sandbox_release */
    int slot;                 /* cgroup slot 0..3: sandboxes of one slot never overlap */
    /* the device the process is given (a target's own, docs/TARGETS.md),
     * or NULL for none */
    const struct ao_sandbox_device *device;
    /* host directories outside /usr that it needs (the Neuron SDK's, a
     * Python environment), bound read-only at the same paths (not under
     * /work, which is the work directory there); NULL ends */
    const char *ro_paths[4];
    /* LD_LIBRARY_PATH inside (a directory it can see), or NULL: where a
     * GPU's driver library is found on the host by the library path alone */
    const char *lib_path;
};

struct ao_sandbox {
    pid_t pid;                /* the first process (PID 1 of its namespace) */
    char cg_mem[256], cg_pids[256]; /* cgroup directories, "" if none */
    long oom_kills; /* cgroup v2: memory.events' oom_kill at the start */
    char layers[512];         /* comma-separated layers that are active */
    int has_pidns;
    int sync_fd, err_fd;      /* held: the release pipe and the exec report */
    /* reaped, and nothing of it can be left: its PID namespace went with
     * its first process, or its cgroups were found empty (what it shared
     * may then be given to another, region.c) */
    int gone;
    /* the child named the setup step that failed (its error pipe): an
     * answer, where a sandbox that ended without one was killed from
     * outside (ao_sandbox_start tries those once more) */
    int setup_failed;
};

/* The uid (and gid) a sandbox of this process runs as in a cgroup slot:
 * one of ACCELOPT_SANDBOX_UIDS ("FIRST-LAST"; default 1500000000 and the
 * 2^24 after it) by the process id and the slot, so that two profilers,
 * and two test runs, never share one and cannot see or signal each other's
 * kernels.  No real user may own a uid in the range. */
unsigned ao_sandbox_uid(int slot);
/* Is ACCELOPT_SANDBOX_UIDS usable?  0, or -1 + err. */
int ao_sandbox_check_uids(char *err, size_t errlen);

/* Start spec.argv in a new sandbox.  0 with sb filled, or -1 + err. */
int ao_sandbox_start(const struct ao_sandbox_spec *spec, struct ao_sandbox *sb,
                     char *err, size_t errlen);

/* Let a held sandbox exec its program (e.g. once the program has been
 * built into its work directory).  0, or -1 + err (then kill and wait). */
int ao_sandbox_release(struct ao_sandbox *sb, char *err, size_t errlen);

/* Wait for it to end, killing the whole tree at deadline_ns (ao_now_ns
 * clock; 0 for none).  Returns 0 with *status as from waitpid and
 * *timed_out set, or -1.  Always leaves nothing running and cleans up. */
int ao_sandbox_wait(struct ao_sandbox *sb, long long deadline_ns, int *status, int *timed_out);

/* Kill everything in it now (then call ao_sandbox_wait). */
void ao_sandbox_kill(struct ao_sandbox *sb);

/* Remove this process's cgroups; call at exit, with no sandbox running.
 * (Sandboxes of one process run one at a time: they share its cgroups.) */
void ao_sandbox_cleanup(void);

/* Nonzero if the cgroup saw the memory limit hit. */
int ao_sandbox_oom(const struct ao_sandbox *sb);

/* The seccomp filter for the kernel runner, as a BPF program (struct
 * sock_filter array) in a malloc'd buffer; 0 or -1 + err. */
int ao_sandbox_runner_filter(void **bpf, size_t *len, char *err, size_t errlen);

/* The same for a GPU's runner: also the calls the GPU driver makes. */
int ao_sandbox_gpu_runner_filter(void **bpf, size_t *len, char *err, size_t errlen);

/* The name of a syscall number on this architecture, or NULL. */
const char *ao_syscall_name(int nr);

#endif
