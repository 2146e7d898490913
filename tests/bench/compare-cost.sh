#!/usr/bin/env bash
# compare-cost.sh [TASK...] - what deciding on comparisons costs and buys
# (issue 47): per task, the same run (builtin model at tiny, T=3, B=2,
# N=4, K=1, one seed) with comparisons (the default) and with
# --no-compare, one after the other on one machine.  Per run: its wall
# time, the kernels it measured, the comparisons it made (and how many
# were decided, how many ties), the lessons it sent, the search's own
# figure and the final head-to-head's.
set -euo pipefail
cd "$(dirname "$0")/../.."
tasks=${*:-matmul silu rmsnorm_matmul}
T=$(mktemp -d /tmp/accelopt-cmpcost-XXXXXX)
trap 'rm -rf "$T"' EXIT
[ -f "${ACCELOPT_STATE_DIR:-$HOME/.local/state/accelopt}/calibration-cpu.json" ] || bin/accelopt calibrate >/dev/null
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg); commit $(git rev-parse --short HEAD)"
echo
echo "| task | decisions | wall s | kernels | profiler s on kernels | comparisons (decided, ties) | profiler s on comparisons | lessons | search | head-to-head |"
echo "|---|---|---:|---:|---:|---|---:|---:|---:|---:|"
for t in $tasks; do
    for arm in compare single; do
        opt=()
        [ $arm = single ] && opt=(--no-compare)
        s=$(date +%s.%N)
        bin/accelopt run "$t" --iters 3 --beam 2 --plans 4 --samples 1 --topk 4 --seed 1 --memory-scope run \
            "${opt[@]}" --log info --json --out "$T/$t-$arm" >"$T/$t-$arm.json" 2>/dev/null || true
        e=$(date +%s.%N)
        python3 - "$T/$t-$arm.json" "$t" "$arm" "$(echo "$e - $s" | bc)" "$T/$t-$arm/logs/profiler.log" <<'PY'
import json, re, sys
d = json.loads(open(sys.argv[1]).readline())
h = d["history"][1:]
n = lambda k: sum(x.get(k, 0) for x in h)
# the profiler's own seconds per kernel message (its log), by kind
secs = {"kernel": 0.0, "cmp": 0.0}
for m in re.finditer(r"kernel:\S+?:(\d+|final):(cmp:)?\S*: \S+.*\(([0-9.]+) s\)$", open(sys.argv[5]).read(), re.M):
    if m.group(1) != "final":
        secs["cmp" if m.group(2) else "kernel"] += float(m.group(3))
print("| %s | %s | %.0f | %d | %.1f | %s | %s | %d | %.3fx | %.3fx |" % (
    sys.argv[2], "head to head" if sys.argv[3] == "compare" else "single measurements", float(sys.argv[4]),
    d["kernels_evaluated"], secs["kernel"],
    "%d (%d, %d)" % (n("compared"), n("faster") + n("slower"), n("ties")) if sys.argv[3] == "compare" else "-",
    "%.1f" % secs["cmp"] if sys.argv[3] == "compare" else "-", n("pairs"), d["search_speedup"], d["speedup"]))
PY
    done
done
