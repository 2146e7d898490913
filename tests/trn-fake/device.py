#!/usr/bin/python3
"""The stand-in runtime's "device" (see README.md): device.py NEFF EMU_ZIP.
Loads the NEFF's kernel on the host emulation, then for each request on
stdin (every input's bytes, in the NEFF's order) writes every output's
bytes to stdout.

libnrt forks it at nrt_load, before the runner locks itself down, so it
locks itself down before any of the kernel's code runs (issue 46): what it
needs is imported first, then a seccomp filter (libseccomp, on every
thread) leaves it its pipes, memory and nothing else. A kernel that starts
a thread, opens a file or writes a trace is killed there, and the call
fails as a device error."""
import ctypes
import json
import os
import sys

os.environ["OPENBLAS_NUM_THREADS"] = "1"  # no pool of threads made later
sys.path.insert(0, sys.argv[2])
import numpy as np  # noqa: E402
import math  # noqa: E402,F401 - what kernels import, imported before the lockdown
import neuronxcc.nki  # noqa: E402,F401
import neuronxcc.nki.isa  # noqa: E402,F401
import neuronxcc.nki.language  # noqa: E402,F401
import neuronxcc.nki.typing  # noqa: E402,F401

ALLOWED = ("read", "write", "readv", "writev", "exit", "exit_group", "brk", "mmap", "munmap",
           "mremap", "madvise", "mbind", "get_mempolicy", "set_mempolicy", "futex", "rt_sigreturn",
           "rt_sigprocmask", "sigaltstack", "sched_getaffinity", "getrandom",
           "getpid", "gettid", "clock_gettime", "gettimeofday", "sched_yield", "restart_syscall",
           # questions about files, which change nothing (a kernel may ask; it cannot open)
           "access", "faccessat", "faccessat2", "stat", "lstat", "fstat", "newfstatat", "statx", "getcwd")


def lock_down():
    """Kill the process on any system call but ALLOWED, on every thread."""
    lib = ctypes.CDLL("libseccomp.so.2", use_errno=True)
    lib.seccomp_init.restype = ctypes.c_void_p
    lib.seccomp_init.argtypes = [ctypes.c_uint32]
    lib.seccomp_rule_add.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int, ctypes.c_uint]
    lib.seccomp_attr_set.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_uint32]
    lib.seccomp_load.argtypes = [ctypes.c_void_p]
    lib.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
    kill_process, allow, tsync = 0x80000000, 0x7FFF0000, 4  # SCMP_ACT_*, SCMP_FLTATR_CTL_TSYNC
    ctx = lib.seccomp_init(kill_process)
    if not ctx or lib.seccomp_attr_set(ctx, tsync, 1) < 0:
        sys.exit("device: no seccomp")
    for name in ALLOWED:
        nr = lib.seccomp_syscall_resolve_name(name.encode())
        if nr >= 0 and lib.seccomp_rule_add(ctx, allow, nr, 0) < 0:
            sys.exit("device: cannot allow %s" % name)
    if lib.seccomp_load(ctx) < 0:
        sys.exit("device: the filter did not load")


neff = json.load(open(sys.argv[1]))
code = compile(neff["source"], "kernel.py", "exec")
inp, out = sys.stdin.buffer, sys.stdout.buffer
sizes = [4 * int(np.prod(t["shape"])) for t in neff["inputs"]]
lock_down()
mod = {"__name__": "kernel"}
exec(code, mod)  # noqa: S102 - the "device" runs it, locked down
kernel = mod.get("kernel") or mod.get("optimized_kernel")
while True:
    args = []
    for t, n in zip(neff["inputs"], sizes):
        b = inp.read(n)
        if len(b) < n:
            sys.exit(0)
        args.append(np.frombuffer(b, dtype=np.float32).reshape(t["shape"]).copy())
    res = kernel(*args)
    res = list(res) if isinstance(res, (tuple, list)) else [res]
    for r in res:
        out.write(np.ascontiguousarray(r, dtype=np.float32).tobytes())
    out.flush()
