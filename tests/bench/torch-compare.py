#!/usr/bin/env python3
"""torch-compare.py - what a user would run instead: the fourteen NKIBench
tasks in PyTorch fp32 (TF32 off), eager and torch.compile, on this machine's
GPU, timed as the profiler times a kernel (the L2 flushed before each call,
CUDA events around it, median of 10 after warm-up), as % of the peaks in the
cuda calibration, beside accelopt's own figures when given.

Usage (on a GPU machine with torch, e.g. the device's own python3):
    tests/bench/torch-compare.py [--size paper] [--calibration FILE]
                                 [--ours bench.json]... [--tasks a,b] [--no-compile]

--ours takes `accelopt bench --target cuda --json FILE` (or a run's table as
the same JSON); the geometric means are over the tasks every column has.
Run on an H200 (issue 26, docs/BENCHMARKS.md).
"""
import argparse
import json
import math
import os
import statistics
import sys

HOME = os.environ.get("ACCELOPT_HOME", os.path.join(os.path.dirname(__file__), "..", ".."))


def task_json(name):
    with open(os.path.join(HOME, "nkibench", name, "task.json")) as f:
        return json.load(f)


def work(t, dims):
    """The task's own FLOP and byte counts at these sizes."""
    env = dict(dims)
    return tuple(float(eval(t["work"][k], {"__builtins__": {}}, env))
                 for k in ("mm_flops", "vec_flops", "bytes"))


def t_min_ns(t, dims, cal):
    mm, vec, byts = work(t, dims)
    return max(byts / cal["bandwidth_gbs"], mm / cal["fma_gflops"], vec / cal["vec_gflops"])


def build(torch, name, dims):
    """Inputs drawn as the task's distributions would be, and its math."""
    F = torch.nn.functional
    t = task_json(name)
    g = torch.Generator(device="cuda").manual_seed(1)
    ins = []
    for x in t["inputs"]:
        shape = [dims[d] for d in x["shape"]]
        v = torch.randn(shape, device="cuda", generator=g)
        if x["name"] == "v" and name == "adamw":
            v = v.abs()  # a second moment is never negative
        ins.append(v)
    d = dims

    def rms(y, eps):
        return torch.rsqrt(y.pow(2).mean(-1, keepdim=True) + eps)

    def mamba(delta, u, a, b, c):
        C, M = delta.shape
        h = torch.zeros(C, a.shape[1], device="cuda")
        out = torch.empty(C, M, device="cuda")
        for m in range(M):  # the scan is sequential in m
            dt = delta[:, m, None]
            h = torch.exp(dt * a) * h + dt * b[None, :, m] * u[:, m, None]
            out[:, m] = (c[None, :, m] * h).sum(-1)
        return out

    def gqa(q, k, v):
        rep = d["H"] // d["KH"]
        q = q.transpose(1, 2)
        k = k.transpose(1, 2).repeat_interleave(rep, dim=1)
        v = v.transpose(1, 2).repeat_interleave(rep, dim=1)
        return F.scaled_dot_product_attention(q, k, v)

    math_of = {
        "adamw": lambda th, gr, m, v: (th - 1e-5 * th) - 0.01 * (0.9 * m + 0.1 * gr) /
        (torch.sqrt(1000.0 * (0.999 * v + 0.001 * gr * gr)) + 1e-8),
        "add_rmsnorm_matmul": lambda x, w, z, gm: ((x + z) * rms(x + z, 1e-5) * gm) @ w,
        "bmm": lambda l, r: torch.bmm(l, r),
        "bmm_softmax": lambda l, r: torch.softmax(torch.bmm(l, r), dim=-1),
        "gqa_full": gqa,
        "lora": lambda x, w, a, b: x @ w + (x @ a) @ b,
        "mamba": mamba,
        "matmul": lambda l, r: l @ r,
        "matmul_add_rmsnorm": lambda x, w, z, gm: (lambda y: y * gm * rms(y, 1e-5))(x @ w + z),
        "rmsnorm_matmul": lambda x, w: (x * rms(x, 0.0)) @ w,
        "rope_single_freq_apply": lambda x, c, s: torch.cat(
            (x[:d["H"]] * c - x[d["H"]:] * s, x[:d["H"]] * s + x[d["H"]:] * c)),
        "silu": lambda x: F.silu(x),
        "swiglu": lambda x, wu, wg, wd: (F.silu(x @ wg) * (x @ wu)) @ wd,
        "transpose_matmul": lambda l, r: l.t() @ r,
    }
    return t, ins, math_of[name]


def time_ns(torch, fn, ins, flush, calls=10, warm=3):
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    lat = []
    for i in range(warm + calls):
        flush.zero_()  # the L2 flushed, as the profiler does
        e0.record()
        fn(*ins)
        e1.record()
        torch.cuda.synchronize()
        if i >= warm:
            lat.append(e0.elapsed_time(e1) * 1e6)
    return statistics.median(lat)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size", default="paper")
    ap.add_argument("--calibration",
                    default=os.path.join(os.environ.get("ACCELOPT_STATE_DIR", os.path.expanduser(
                        "~/.local/state/accelopt")), "calibration-cuda.json"))
    ap.add_argument("--ours", action="append", default=[],
                    help="accelopt bench --target cuda --json FILE (again for each part of a table)")
    ap.add_argument("--tasks")
    ap.add_argument("--no-compile", action="store_true")
    a = ap.parse_args()
    import torch  # only here: the rest of the tests never need it

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    with open(a.calibration) as f:
        cal = json.load(f)
    ours = {}
    for path in a.ours:
        with open(path) as f:
            for r in json.load(f).get("results", []):
                if r.get("status") == "ok":
                    ours[r["task"]] = r.get("pct_of_peak")
    names = a.tasks.split(",") if a.tasks else sorted(
        n for n in os.listdir(os.path.join(HOME, "nkibench")) if n != "harness")
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    flush = torch.empty(2 * l2 // 4, device="cuda")
    print("%s, torch %s, fp32 (TF32 off), size %s, L2 flushed, median of 10" %
          (torch.cuda.get_device_name(0), torch.__version__, a.size))
    print("| task | eager ms | eager % of peak | compile ms | compile % of peak | accelopt % of peak |")
    print("|---|---|---|---|---|---|")
    cols = {"eager": {}, "compile": {}, "ours": {}}
    for n in names:
        t = task_json(n)
        dims = t["sizes"][a.size]
        t, ins, fn = build(torch, n, dims)
        tmin = t_min_ns(t, dims, cal)
        with torch.no_grad():
            e = time_ns(torch, fn, ins, flush)
            c = float("nan")
            if not a.no_compile and n != "mamba":  # a 7168-step Python loop does not compile usefully
                c = time_ns(torch, torch.compile(fn), ins, flush)
        cols["eager"][n] = tmin / e
        if c == c:
            cols["compile"][n] = tmin / c
        if ours.get(n):
            cols["ours"][n] = ours[n]
        print("| %s | %.3f | %.1f%% | %s | %s | %s |" % (
            n, e / 1e6, 100 * tmin / e, "%.3f" % (c / 1e6) if c == c else "-",
            "%.1f%%" % (100 * tmin / c) if c == c else "-",
            "%.1f%%" % (100 * ours[n]) if ours.get(n) else "-"))
    # over the tasks every column has, so the columns compare
    common = set.intersection(*[set(v) for v in cols.values() if v] or [set()])
    for k, v in cols.items():
        if v and common:
            print("geomean %s: %.1f%% over the %d tasks every column has" % (
                k, 100 * math.exp(sum(math.log(v[n]) for n in common) / len(common)), len(common)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
