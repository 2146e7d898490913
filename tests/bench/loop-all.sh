#!/usr/bin/env bash
# loop-all.sh - the T=8 benchmark of docs/BENCHMARKS.md: `accelopt run` with
# the builtin model over all fourteen NKIBench tasks at the cpu size (or the
# --size among the extra options), then % of peak per task before and after
# and the geometric means.
#
#   tests/bench/loop-all.sh [OUT-DIR] [extra accelopt run options]
#   tests/bench/loop-all.sh runs/cuda-all --target cuda --size paper   # on a GPU
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${1:-runs/bench-loop-all}
shift || true
tasks=$(ls nkibench | while read -r t; do [ -f "nkibench/$t/task.json" ] && echo "$t"; done)
size="--size cpu"
case " $* " in *" --size "*) size= ;; esac
start=$(date +%s)
# shellcheck disable=SC2086
bin/accelopt run $tasks $size --iters 8 --beam 1 --plans 2 --samples 1 --topk 4 --seed 1 \
    --out "$out" "$@" >/dev/null || echo "accelopt run exited $? (an interrupted run leaves partial results)"
echo "wall: $(( $(date +%s) - start )) s on $(nproc) cores"
/usr/bin/python3 - "$out" $tasks <<'PY'
import json, math, sys
out, tasks = sys.argv[1], sys.argv[2:]
# speedup: the search's (the best kernel's latency against the baseline's,
# each measured once); reported: the run's own figure, the final
# head-to-head of the two in one sitting (or 1 where the baseline stayed best)
print("| task | iterations | kernels | baseline µs | best µs | speedup | reported (how) | % of peak before | after |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
sp, before, after = [], [], []
for t in tasks:
    d = json.load(open(f"{out}/{t}/done.json"))   # an interrupted run's too
    h = d.get("history") or []
    if not h or "best_ns" not in h[0]:
        print(f"| {t} | not started | | | | | | | |")
        continue
    base, best = h[0]["best_ns"], d["best"]["latency_ns"]
    b0, b1 = h[0].get("pct_of_peak", float("nan")), d["best"].get("pct_of_peak", float("nan"))
    sp.append(base / best); before.append(b0); after.append(b1)
    print(f"| {t} | {len(h) - 1} | {sum(x.get('kernels', 0) for x in h)} | {base/1e3:.1f} | "
          f"{best/1e3:.1f} | {base/best:.3f}x | {d.get('speedup', float('nan')):.3f}x "
          f"({d.get('speedup_method', '?')}) | {100*b0:.2f}% | {100*b1:.2f}% |")
g = lambda xs: math.exp(sum(math.log(x) for x in xs) / len(xs))
rep = [json.load(open(f"{out}/{t}/done.json")).get("speedup", float("nan")) for t in tasks]
rep = [x for x in rep if x == x and x > 0]
print(f"| **geometric mean** ({len(sp)} tasks) | | | | | **{g(sp):.3f}x** | **{g(rep):.3f}x** | **{100*g(before):.2f}%** | **{100*g(after):.2f}%** |")
print(f"kernels evaluated: {sum(json.load(open(f'{out}/{t}/done.json')).get('kernels_evaluated', 0) for t in tasks)}")
# what the profiler did, from its log: each kernel's profile (a child's is
# its head-to-head with its parent, issue 66), a child measured again
# beside its parent (phase compare, before issue 66), the final
# head-to-heads, and the answers the cache gave (0.00 s)
import os, re
log = f"{out}/logs/profiler.log"
if os.path.exists(log):
    ids = re.findall(r"accelopt-profiler: (kernel:\S+): \S+ \(([0-9.]+) s\)", open(log).read())
    cmp_ = sum(1 for i, _ in ids if ":cmp:" in i)
    fin = sum(1 for i, _ in ids if i.endswith(":final"))
    hit = sum(1 for i, s in ids if float(s) == 0 and ":cmp:" not in i and not i.endswith(":final"))
    print(f"profiles: {len(ids) - cmp_ - fin - hit} kernels measured ({sum(1 for i, _ in ids if ':0:' in i)} baselines), "
          f"{cmp_} measured again beside their parents, {fin} final head-to-heads, {hit} from the cache")
PY
