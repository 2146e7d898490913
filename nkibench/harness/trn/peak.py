#!/usr/bin/env python3
"""peak.py MIB NEURON_PROFILE - the trn target's peaks, measured on this
machine's NeuronCore (`accelopt calibrate --target trn`): trusted code, run
on the host with the Neuron SDK's Python (neuronxcc.nki, SDK 2.2x).

Three NKI kernels, each compiled and run with nki.baremetal, its trace kept
and read with `neuron-profile view --output-format summary-json` for the
device's own total_time (as every trn measurement is), five times each:
- a copy of MIB MiB from HBM to HBM through SBUF: bytes moved / time;
- fp32 matmuls on the TensorE with their operands resident in SBUF,
  accumulating in PSUM: 2 * 128 * 128 * 512 flops each / time;
- a chain of adds on a resident tile on the VectorE: elements / time.
Prints {"bw_gbs", "bw_spread", "mm_gflops", "mm_spread", "vec_gflops",
"vec_spread"}: the best of the five, the spread (max - min) / median.

Written against the documented interfaces; not yet run on a Trainium host
(docs/OPERATING.md, "A trn host")."""
import glob
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl

FLAGS = "--disable-dge --logical-nc-config=1"
REPEATS = 5
MM_ROUNDS = 256   # matmuls per run
VEC_ROUNDS = 256  # vector instructions per run
VEC_FREE = 2048


@nki.jit
def copy_kernel(x):
    out = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.shared_hbm)
    P, F = x.shape
    for i in nl.affine_range(F // 2048):
        t = nl.load(x[0:P, i * 2048:(i + 1) * 2048])
        nl.store(out[0:P, i * 2048:(i + 1) * 2048], value=t)
    return out


@nki.jit
def matmul_kernel(lhsT, rhs):
    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    a = nl.load(lhsT)
    b = nl.load(rhs)
    acc = nl.zeros((128, 512), dtype=nl.float32, buffer=nl.psum)
    for _ in nl.affine_range(MM_ROUNDS):
        acc += nisa.nc_matmul(a, b)
    nl.store(out, value=nl.copy(acc))
    return out


@nki.jit
def vector_kernel(x):
    out = nl.ndarray((128, VEC_FREE), dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.load(x)
    for _ in nl.static_range(VEC_ROUNDS):
        t = nl.add(t, 1.0)
    nl.store(out, value=t)
    return out


def device_seconds(kernel, args, tool):
    """One run's on-device total_time, in seconds."""
    with tempfile.TemporaryDirectory(prefix="accelopt-trn-peak-") as d:
        here = os.getcwd()
        os.chdir(d)
        try:
            # the SDK's known issue: with a trace, the NEFF must be named file.neff
            nki.baremetal(kernel, save_neff_name="file.neff", save_trace_name="profile.ntff",
                          additional_compile_opt=FLAGS)(*args)
            traces = sorted(glob.glob("*.ntff"), key=os.path.getmtime)
            if not traces:
                sys.exit("peak.py: the run left no trace")
            out = subprocess.run([tool, "view", "-n", "file.neff", "-s", traces[-1],
                                  "--output-format", "summary-json"],
                                 capture_output=True, text=True, check=True).stdout
        finally:
            os.chdir(here)
    summary = json.loads(out)
    if "total_time" not in summary:
        summary = next(iter(summary.values()))
        if isinstance(summary, list):
            summary = summary[0]
    return float(summary["total_time"])


def best(kernel, args, work, tool):
    rates = sorted(work / device_seconds(kernel, args, tool) for _ in range(REPEATS))
    return rates[-1], (rates[-1] - rates[0]) / rates[len(rates) // 2]


def main():
    mib, tool = int(sys.argv[1]), sys.argv[2]
    free = max(2048, mib * 1024 * 1024 // 4 // 128 // 2048 * 2048)
    x = np.random.default_rng(1).standard_normal((128, free), dtype=np.float32)
    bw, bw_spread = best(copy_kernel, [x], 2.0 * x.nbytes, tool)
    a = np.random.default_rng(2).standard_normal((128, 128), dtype=np.float32)
    b = np.random.default_rng(3).standard_normal((128, 512), dtype=np.float32)
    mm, mm_spread = best(matmul_kernel, [a, b], 2.0 * 128 * 128 * 512 * MM_ROUNDS, tool)
    v = np.random.default_rng(4).standard_normal((128, VEC_FREE), dtype=np.float32)
    vec, vec_spread = best(vector_kernel, [v], 128.0 * VEC_FREE * VEC_ROUNDS, tool)
    print(json.dumps({"bw_gbs": bw / 1e9, "bw_spread": bw_spread, "mm_gflops": mm / 1e9,
                      "mm_spread": mm_spread, "vec_gflops": vec / 1e9, "vec_spread": vec_spread}))


if __name__ == "__main__":
    main()
