#!/usr/bin/env bash
# profiler.sh - the profiler's own numbers (docs/BENCHMARKS.md):
#  1. repeatability: one honest kernel measured in 5 separate profiler runs,
#     per size class; the spread of the 5 medians
#  2. overhead: a stream of distinct tiny kernels through one accelopt-profiler;
#     what the profiler spends beyond compiling (sandbox set-up included) and
#     the kernel's own calls, as a share of each profile's wall time
# usage: tests/bench/profiler.sh [RUNS=5] [STREAM=12]
set -eu
cd "$(dirname "$0")/../.."
runs=${1:-5}
stream=${2:-12}
T=$(mktemp -d /tmp/accelopt-bench-XXXXXX)
trap 'rm -rf "$T"' EXIT
export ACCELOPT_HOME=$PWD ACCELOPT_LOG=warn
[ -f "${ACCELOPT_STATE_DIR:-$HOME/.local/state/accelopt}/calibration-cpu.json" ] || bin/accelopt calibrate >/dev/null

echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores, $(uname -r)"
echo
echo "## repeatability: $runs separate 'accelopt profile' runs of the same kernel"
for spec in matmul:tiny matmul:cpu silu:tiny silu:cpu rmsnorm_matmul:tiny rmsnorm_matmul:cpu; do
    task=${spec%%:*}
    size=${spec#*:}
    for i in $(seq "$runs"); do
        bin/accelopt profile --alone --task "nkibench/$task" --size "$size" "nkibench/$task/baseline.c"
    done >"$T/rep-$task-$size.jsonl"
    python3 - "$T/rep-$task-$size.jsonl" "$task" "$size" <<'PY'
import json, statistics, sys
rs = [json.loads(l) for l in open(sys.argv[1])]
assert all(r["status"] == "ok" for r in rs), [r.get("reason") for r in rs]
med = [r["latency_ns"] for r in rs]
mid = statistics.median(med)
dev = max(abs(m / mid - 1) for m in med)
print("%-15s %-5s medians (ms): %s  -> max deviation from their median %.2f%%  (within-run IQR/median %s)"
      % (sys.argv[2], sys.argv[3], " ".join("%.4f" % (m / 1e6) for m in med), 100 * dev,
         " ".join("%.1f%%" % (100 * r["spread"]) for r in rs)))
PY
done

echo
echo "## overhead: $stream distinct tiny kernels through one accelopt-profiler"
python3 - "$stream" >"$T/stream.jsonl" <<'PY'
import hashlib, json, re, sys
n = int(sys.argv[1])
out = []
for task in ("matmul", "silu", "rmsnorm_matmul"):
    src = open("nkibench/%s/baseline.c" % task).read()
    knobs = re.findall(r"^#define (\w+) (\S+)\s*/\* knob: ([^*(]*)", src, re.M)
    for name, cur, vals in knobs:
        for v in vals.split():
            if v != cur:
                s = re.sub(r"^#define %s \S+" % name, "#define %s %s" % (name, v), src, flags=re.M)
                out.append((task, s))
for i, (task, s) in enumerate(out[:n]):
    print(json.dumps({"type": "kernel", "v": 1, "id": "bench:%d" % i, "run": "bench", "task": task,
                      "target": "cpu", "iter": 1, "size": "tiny", "source": s,
                      "sha256": hashlib.sha256(s.encode()).hexdigest()}))
PY
for warm in 0.1 0; do
echo
echo "### --warmup $warm"
bin/accelopt-profiler --warmup "$warm" <"$T/stream.jsonl" >"$T/stream-out.jsonl"
python3 - "$T/stream-out.jsonl" <<'PY'
import json, statistics, sys
rs = [json.loads(l) for l in open(sys.argv[1])]
bad = [r for r in rs if r["status"] != "ok"]
assert not bad, [(r["kernel_id"], r.get("reason")) for r in bad]
rows = []
for r in rs:
    t = r["timing"]
    rows.append((r["task"], r["wall_ns"] / 1e6, t["compile_ns"] / 1e6, t["kernel_ns"] / 1e6,
                 t["overhead_ns"] / 1e6, t["overhead_ns"] / r["wall_ns"]))
print("%-15s %9s %9s %9s %9s %8s" % ("task", "wall ms", "compile", "kernel", "overhead", "share"))
for row in rows:
    print("%-15s %9.1f %9.1f %9.1f %9.2f %7.1f%%" % (row[:5] + (100 * row[5],)))
warm = [x[5] for x in rows[1:]]
firsts = {}
for x in rows:
    firsts.setdefault(x[0], x)
cold = [x for x in rows if firsts[x[0]] is x]
steady = [x[5] for x in rows if firsts[x[0]] is not x]
print("first profile of each task (builds the harness and the references): overhead %s"
      % ", ".join("%.0f ms" % x[4] for x in cold))
print("steady state: median overhead share %.1f%% (min %.1f%%, max %.1f%%) over %d profiles"
      % (100 * statistics.median(steady), 100 * min(steady), 100 * max(steady), len(steady)))
PY
done
