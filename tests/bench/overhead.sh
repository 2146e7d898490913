#!/usr/bin/env bash
# overhead.sh - orchestration overhead per evaluated kernel: everything but
# model calls, compiling and running kernels.  The same run (same seed) goes
# twice against one redis: the first measures every kernel, the second finds
# every kernel in the profile cache, and the builtin model answers in
# microseconds, so what the second run spends is the orchestration: Kafka
# hops, Redis, JSON, the selector's bookkeeping, process scheduling.
#
#   tests/bench/overhead.sh [OUT-DIR]
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-runs/bench-overhead}
rm -rf "$out"; mkdir -p "$out"
. tests/bench/redis.sh
private_redis "$out/redis.log"
args=(matmul silu --size tiny --iters 4 --beam 2 --plans 4 --samples 2 --topk 4 --seed 7
      --redis "$REDIS_URL" --json)
bin/accelopt run "${args[@]}" --out "$out/measured" >"$out/measured.jsonl" 2>"$out/measured.err"
start=$(date +%s%N)
bin/accelopt run "${args[@]}" --out "$out/cached" >"$out/cached.jsonl" 2>"$out/cached.err"
end=$(date +%s%N)
/usr/bin/python3 - "$out" "$start" "$end" <<'PY'
import json, statistics, sys
out, t0, t1 = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
per, kernels, cached, total = [], 0, 0, 0
for line in open(f"{out}/cached.jsonl"):
    d = json.loads(line)
    kernels += d["kernels_evaluated"]
    rows = [json.loads(l) for l in open(f"{out}/cached/{d['task']}/history.jsonl")]
    for h in d["history"][1:]:
        # a kernel the first run did not reach is compiled and run here: its
        # profiling time (wall_ns) is not orchestration
        prof = sum(r.get("wall_ns", 0) for r in rows if r["iter"] == h["iter"] and not r.get("cached"))
        per.append((1e3 * h["seconds"] - prof / 1e6) / h["kernels"])
    for r in rows:
        total += 1
        cached += bool(r.get("cached"))
print(f"kernels: {kernels} ({cached} of {total} answered from the profile cache)")
print(f"per kernel, median over {len(per)} iterations ((iteration time - profiling of uncached kernels) / its kernels): "
      f"{statistics.median(per):.2f} ms (min {min(per):.2f}, max {max(per):.2f})")
print(f"whole second run, start-up and shut-down included: {(t1 - t0) / 1e6 / kernels:.1f} ms per kernel "
      f"({(t1 - t0) / 1e9:.1f} s)")
PY
