#!/usr/bin/env python3
"""run.py rules|written|peak: the NKI host emulation's own checks, one line each.
rules/: kernels that break one documented rule each; the emulation must
raise the error named on their `# expect:` line (`wrong`: it must run and
compute something else, as a kernel reading memory it never wrote does).
written/: kernels in the style of the NKI documentation, not of our
baselines; each must run and match NumPy.  peak: the calibration's kernels."""
import glob
import importlib.util
import os
import sys

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "..", "nkibench", "harness", "trn", "emu"))
from neuronxcc.nki._core import NKIError  # noqa: E402


def load(path):
    spec = importlib.util.spec_from_file_location(os.path.basename(path)[:-3], path)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


def rules():
    for path in sorted(glob.glob(os.path.join(here, "rules", "*.py"))):
        name = os.path.basename(path)
        expect = [l.split(":", 1)[1].strip() for l in open(path) if l.startswith("# expect:")][0]
        x = np.random.default_rng(3).standard_normal((1024, 1024), dtype=np.float32)
        try:
            out = load(path).kernel(x)
        except NKIError as e:
            good = e.code == expect
            print("%s %s: raised %s" % ("ok" if good else "bad", name, str(e)[:160]))
            continue
        if expect == "wrong":
            good = out is not None and not np.allclose(out, x[:out.shape[0], :out.shape[1]])
            print("%s %s: ran, %s" % ("ok" if good else "bad", name,
                                     "NaN in its output" if np.isnan(out).any() else "no NaN"))
        else:
            print("bad %s: ran; expected %s" % (name, expect))


def written():
    for path in sorted(glob.glob(os.path.join(here, "written", "*.py"))):
        name = os.path.basename(path)
        try:
            got, ref = load(path).run(np.random.default_rng(5))
        except Exception as e:  # noqa: BLE001
            print("bad %s: %s: %s" % (name, type(e).__name__, str(e)[:200]))
            continue
        ref = np.asarray(ref, np.float64)
        rel = np.linalg.norm(np.asarray(got, np.float64) - ref) / np.linalg.norm(ref)
        print("%s %s: rel. L2 %.3g" % ("ok" if rel < 1e-5 else "bad", name, rel))


def peak():
    """the calibration's kernels (nkibench/harness/trn/peak.py) compute what
    their work counts say"""
    pk = load(os.path.join(here, "..", "..", "nkibench", "harness", "trn", "peak.py"))
    rng = np.random.default_rng(7)
    x = rng.standard_normal((128, 4096), dtype=np.float32)
    a = rng.standard_normal((128, 128), dtype=np.float32)
    b = rng.standard_normal((128, 512), dtype=np.float32)
    v = rng.standard_normal((128, pk.VEC_FREE), dtype=np.float32)
    for name, got, ref in (("copy", pk.copy_kernel(x), x),
                           ("matmul", pk.matmul_kernel(a, b), pk.MM_ROUNDS * (a.T.astype(np.float64) @ b)),
                           ("vector", pk.vector_kernel(v), v + pk.VEC_ROUNDS)):
        rel = np.linalg.norm(got - ref) / np.linalg.norm(ref)
        print("%s peak.py %s kernel: rel. L2 %.3g" % ("ok" if rel < 1e-5 else "bad", name, rel))


{"rules": rules, "written": written, "peak": peak}[sys.argv[1]]()
