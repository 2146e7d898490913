#!/usr/bin/env bash
# memory-ablation.sh - the self-improvement claim: the same sequence of tasks,
# one after another, with the shared (target-scope) memory on and off; builtin
# model, same seeds, same budget.  One redis serves both arms, so a kernel
# both arms reach is measured once and both see the same latency: what
# differs is only which kernels the planner tries first.
#
#   tests/bench/memory-ablation.sh [OUT-DIR] [SIZE]
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-runs/bench-memory}
size=${2:-tiny}
seq="matmul transpose_matmul lora rmsnorm_matmul matmul_add_rmsnorm add_rmsnorm_matmul bmm"
rm -rf "$out"; mkdir -p "$out"
. tests/bench/redis.sh
private_redis "$out/redis.log"
for arm in on off; do
    mem=(--memory-scope "ablation-$$"); [ $arm = on ] || mem=(--no-memory)
    for t in $seq; do
        bin/accelopt run "$t" --size "$size" --iters 4 --beam 1 --plans 2 --samples 1 --topk 4 \
            --seed 1 "${mem[@]}" --redis "$REDIS_URL" --json --out "$out/$arm/$t" \
            >>"$out/$arm.jsonl" 2>>"$out/$arm.err"
    done
done
/usr/bin/python3 - "$out" $seq <<'PY'
import json, math, sys
out, seq = sys.argv[1], sys.argv[2:]
print("| task | memory | kernels to the best | evaluated | speedup | % of peak |")
print("|---|---|---:|---:|---:|---:|")
tot = {}
for t in seq:
    for arm in ("on", "off"):
        d = json.load(open(f"{out}/{arm}/{t}/{t}/done.json"))
        rows = [json.loads(l) for l in open(f"{out}/{arm}/{t}/{t}/history.jsonl")]
        reach = next(i + 1 for i, r in enumerate(rows) if r.get("sha256") == d["best"]["sha256"])
        s = tot.setdefault(arm, {"reach": 0, "n": 0, "sp": [], "pk": []})
        s["reach"] += reach; s["n"] += d["kernels_evaluated"]; s["sp"].append(d["speedup"]); s["pk"].append(d["pct_of_peak"])
        print(f"| {t} | {arm} | {reach} | {d['kernels_evaluated']} | {d['speedup']:.3f}x | {100*d['pct_of_peak']:.2f}% |")
g = lambda xs: math.exp(sum(math.log(x) for x in xs) / len(xs))
for arm, s in tot.items():
    print(f"| **all** | **{arm}** | **{s['reach']}** | {s['n']} | **{g(s['sp']):.3f}x** | **{100*g(s['pk']):.2f}%** |")
PY
