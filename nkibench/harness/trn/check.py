#!/usr/bin/env python3
"""check.py TASK_DIR KERNEL.py REFERENCE.so DIM... [stress] [--seeds N]

Runs an NKI kernel on accelopt's host emulation (emu/, NumPy: semantics,
not speed; not AWS's simulator) against the task's trusted reference.c,
built as a shared library, on inputs drawn as task.json says (`stress`:
each input's stress distribution).  Prints one line per output and input
set; exits 0 if every output is within the task's relative-L2 tolerance
and the inputs come back unchanged, 1 if not, 2 on a kernel that fails
(the error's class and message on stderr, as the compiler words it).

The kernel is called as the trn target calls it: kernel(*inputs), each a
float32 array of its task.json shape in task.json's order, and returns its
output (a tuple if the task has several)."""
import ctypes
import importlib.util
import json
import os
import sys
import traceback

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "emu"))
from neuronxcc.nki._core import NKIError  # noqa: E402


def draw(rng, d, shape):
    kind = d.get("kind", "normal")
    if kind == "uniform":
        return rng.uniform(d.get("low", 0), d.get("high", 1), shape).astype(np.float32)
    v = rng.normal(d.get("mean", 0), d.get("std", 1), shape).astype(np.float32)
    return np.abs(v) if kind == "abs_normal" else v


def main(argv):
    seeds = 2
    if "--seeds" in argv:
        i = argv.index("--seeds")
        seeds = int(argv[i + 1])
        del argv[i:i + 2]
    tdir, kfile, ref_so = argv[1:4]
    rest = argv[4:]
    stress = bool(rest) and rest[-1] == "stress"
    if stress:
        rest = rest[:-1]
    t = json.load(open(os.path.join(tdir, "task.json")))
    if len(rest) != len(t["dims"]):
        sys.exit("check.py: %s takes %d dims (%s)" % (t["name"], len(t["dims"]), " ".join(t["dims"])))
    dims = dict(zip(t["dims"], (int(x) for x in rest)))
    shape = lambda x: tuple(dims[d] for d in x["shape"])  # noqa: E731
    ref = ctypes.CDLL(os.path.abspath(ref_so))
    fp = ctypes.POINTER(ctypes.c_float)
    spec = importlib.util.spec_from_file_location("kernel_under_test", kfile)
    try:
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        kernel = getattr(mod, "kernel", None) or getattr(mod, "optimized_kernel", None)
        if kernel is None:
            raise NKIError("no_kernel", "No kernel function found (define `kernel`)")
    except Exception as e:  # noqa: BLE001 - any failure is the kernel's
        print("error: %s" % e, file=sys.stderr)
        return 2
    bad = 0
    for seed in range(seeds):
        rng = np.random.default_rng(17 + seed)
        ins = [draw(rng, x.get("stress", x.get("dist", {})) if stress else x.get("dist", {}), shape(x))
               for x in t["inputs"]]
        keep = [a.copy() for a in ins]
        refs = [np.full(shape(x), np.nan, np.float32) for x in t["outputs"]]
        ref.kernel(*[a.ctypes.data_as(fp) for a in ins + refs], *[ctypes.c_int(v) for v in dims.values()])
        try:
            out = kernel(*ins)
        except Exception as e:  # noqa: BLE001
            print("error: %s" % e, file=sys.stderr)
            traceback.print_exc(limit=-3, file=sys.stderr)
            return 2
        outs = list(out) if isinstance(out, (tuple, list)) else [out]
        if len(outs) != len(refs):
            print("seed %d: %d outputs, the task has %d" % (seed, len(outs), len(refs)))
            return 1
        for x, o, r in zip(t["outputs"], outs, refs):
            o = np.asarray(o)
            if o.shape != r.shape:
                print("seed %d: %s has shape %s, the task's is %s" % (seed, x["name"], o.shape, r.shape))
                bad = 1
                continue
            d = o.astype(np.float64) - r
            n = np.sqrt((r.astype(np.float64) ** 2).sum())
            rel = np.sqrt((d * d).sum()) / (n if n > 0 else 1)
            rel = rel if np.isfinite(rel) else float("inf")
            ok = rel <= t["tolerance"]
            bad |= not ok
            print("seed %d: %s rel. L2 %.3g%s" % (seed, x["name"], rel, "" if ok else " > %g" % t["tolerance"]))
        for x, a, k in zip(t["inputs"], ins, keep):
            if not np.array_equal(a, k, equal_nan=True):
                print("seed %d: input %s was changed" % (seed, x["name"]))
                bad = 1
    return bad


if __name__ == "__main__":
    sys.exit(main(sys.argv))
