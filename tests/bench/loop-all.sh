#!/usr/bin/env bash
# loop-all.sh - the T=8 benchmark of docs/BENCHMARKS.md: `accelopt run` with
# the builtin model over all fourteen NKIBench tasks at the cpu size, then
# % of peak per task before and after and the geometric means.
#
#   tests/bench/loop-all.sh [OUT-DIR] [extra accelopt run options]
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-runs/bench-loop-all}
shift || true
tasks=$(ls nkibench | while read -r t; do [ -f "nkibench/$t/task.json" ] && echo "$t"; done)
start=$(date +%s)
bin/accelopt run $tasks --size cpu --iters 8 --beam 1 --plans 2 --samples 1 --topk 4 --seed 1 \
    --out "$out" "$@" >/dev/null
echo "wall: $(( $(date +%s) - start )) s on $(nproc) cores"
/usr/bin/python3 - "$out" $tasks <<'PY'
import json, math, sys
out, tasks = sys.argv[1], sys.argv[2:]
print("| task | kernels | baseline µs | best µs | speedup | % of peak before | after |")
print("|---|---:|---:|---:|---:|---:|---:|")
sp, before, after = [], [], []
for t in tasks:
    d = json.load(open(f"{out}/{t}/done.json"))
    h0 = d["history"][0]
    b0, b1 = h0.get("pct_of_peak", float("nan")), d.get("pct_of_peak", float("nan"))
    sp.append(d["speedup"]); before.append(b0); after.append(b1)
    print(f"| {t} | {d['kernels_evaluated']} | {d['baseline_latency_ns']/1e3:.1f} | "
          f"{d['best']['latency_ns']/1e3:.1f} | {d['speedup']:.3f}x | {100*b0:.2f}% | {100*b1:.2f}% |")
g = lambda xs: math.exp(sum(math.log(x) for x in xs) / len(xs))
print(f"| **geometric mean** | | | | **{g(sp):.3f}x** | **{100*g(before):.2f}%** | **{100*g(after):.2f}%** |")
PY
