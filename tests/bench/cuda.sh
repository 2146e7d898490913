#!/usr/bin/env bash
# cuda.sh - the cuda target's figures for docs/BENCHMARKS.md, on a GPU:
#   1. the calibrated peaks (accelopt calibrate --target cuda);
#   2. each baseline (matmul, silu, bmm_softmax) at SIZE in RUNS separate
#      profiler runs: the medians, their spread, % of peak;
#   3. where a profile's time goes: compile, references, checks and timing;
#   4. accelopt bench --target cuda --examples: every task's baseline, the
#      hand-written examples, and the cuBLAS point (its JSON in
#      $CUDA_BENCH_JSON, default the output directory's bench.json).
# Usage: tests/bench/cuda.sh [SIZE] [RUNS]    (default: paper 5)
set -u
cd "$(dirname "$0")/../.."
size=${1:-paper}
runs=${2:-5}
if [ ! -e /dev/nvidia0 ]; then
    echo "cuda.sh: no GPU on this machine (/dev/nvidia0 is absent)" >&2
    exit 1
fi
export ACCELOPT_HOME=$PWD
export ACCELOPT_STATE_DIR=${ACCELOPT_STATE_DIR:-$(mktemp -d /tmp/accelopt-cuda-bench-XXXXXX)}
out=$(mktemp -d /tmp/accelopt-cuda-out-XXXXXX)
make -s all || exit 1
# a calibration already in the state directory (ACCELOPT_STATE_DIR given)
# is used as it is: measure it afresh in a new state directory
[ -f "$ACCELOPT_STATE_DIR/calibration-cuda.json" ] || bin/accelopt calibrate --target cuda || exit 1
python3 - "$ACCELOPT_STATE_DIR/calibration-cuda.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
print("\n%s; nvcc %s" % (c["cpu_model"], c["cflags"]))
print("| peak | figure | spread |\n|---|---|---|")
print("| HBM bandwidth (best of copy, read, cudaMemcpy: %s) | %.0f GB/s | %.1f%% |" % (c["bandwidth_method"], c["bandwidth_gbs"], 100 * c["bandwidth_spread"]))
print("| fp32 FMA | %.1f TFLOP/s | %.1f%% |" % (c["vec_gflops"] / 1e3, 100 * c["vec_spread"]))
print("| fp32-accurate matmul (best of SGEMM, TF32/3) | %.1f TFLOP/s | %.1f%% |" % (c["fma_gflops"] / 1e3, 100 * c["fma_spread"]))
PY
for t in matmul silu bmm_softmax; do
    for r in $(seq "$runs"); do
        bin/accelopt profile --alone --target cuda --task "nkibench/$t" --size "$size" \
            "nkibench/$t/baseline.cu" >"$out/$t-$r.json" 2>"$out/$t-$r.err"
    done
done
python3 - "$out" "$runs" <<'PY'
import json, statistics, sys
d, runs = sys.argv[1], int(sys.argv[2])
print("\n| task | medians of %d runs (ms) | spread of the medians | %% of peak | bound | runner's events (ms) |" % runs)
print("|---|---|---|---|---|---|")
rows = []
for t in ["matmul", "silu", "bmm_softmax"]:
    rs = [json.load(open("%s/%s-%d.json" % (d, t, r + 1))) for r in range(runs)]
    bad = [r for r in rs if r["status"] != "ok"]
    if bad:
        print("| %s | %s: %s | | | | |" % (t, bad[0]["status"], bad[0].get("reason", "")[:80]))
        continue
    meds = [r["latency_ns"] / 1e6 for r in rs]
    m = statistics.median(meds)
    ev = [r["timing"].get("runner_reported_median_ns", 0) / 1e6 for r in rs]
    print("| %s | %s | %+.1f%% .. %+.1f%% | %.1f%% | %s | %s |" % (t, " ".join("%.3f" % x for x in meds),
          100 * (min(meds) / m - 1), 100 * (max(meds) / m - 1), 100 * statistics.median(r["pct_of_peak"] for r in rs),
          rs[0]["bound"], " ".join("%.3f" % x for x in ev)))
    rows.append((t, rs))
print("\n| task | wall (s) | compile (s) | inside kernel calls (s) | the rest: references, copies, checks (s) |")
print("|---|---|---|---|---|")
for t, rs in rows:
    tm = lambda k: statistics.median(r["timing"][k] for r in rs) / 1e9
    print("| %s | %.2f | %.2f | %.2f | %.2f |" % (t, statistics.median(r["wall_ns"] for r in rs) / 1e9,
          tm("compile_ns"), tm("kernel_ns"), tm("overhead_ns")))
PY
echo
# all fourteen, the examples, cuBLAS; the JSON for tests/bench/torch-compare.py --ours
bin/accelopt bench --target cuda --size "$size" --examples --json "${CUDA_BENCH_JSON:-$out/bench.json}"
