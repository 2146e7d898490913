#!/usr/bin/env bash
# overhead.sh - orchestration overhead per evaluated kernel: everything but
# model calls, compiling and running kernels.  The same run (same seed) goes
# twice against one redis: the first measures every kernel, the second finds
# every kernel in the profile cache, and the builtin model answers in
# microseconds, so what the second run spends is the orchestration: Kafka
# hops, Redis, JSON, the selector's bookkeeping, process scheduling.
# The second run is traced (ACCELOPT_TRACE: a line per message handled by
# any stage): each topic's hop (from its producer to the start of its
# handling: the broker and the queue) and each stage's handling, as median,
# p99 and max; each stage's handling split into its CPU, its Redis round
# trips and the rest; and the longest gaps in which no stage handled anything.
#
#   tests/bench/overhead.sh [OUT-DIR] [extra accelopt run options, e.g. -X KEY=VALUE]
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-runs/bench-overhead}
shift || true
rm -rf "$out"; mkdir -p "$out"
. tests/bench/redis.sh
private_redis "$out/redis.log"
args=(matmul silu --size tiny --iters 4 --beam 2 --plans 4 --samples 2 --topk 4 --seed 7
      --redis "$REDIS_URL" --json "$@")
# each run its own memory (a scope of its own, empty at its start): the
# second then sees what the first saw, and replays it from the cache
bin/accelopt run "${args[@]}" --memory-scope overhead-measured-$$ --out "$out/measured" \
    >"$out/measured.jsonl" 2>"$out/measured.err"
start=$(date +%s%N)
ACCELOPT_TRACE=$out/trace.jsonl bin/accelopt run "${args[@]}" --memory-scope overhead-cached-$$ \
    --out "$out/cached" >"$out/cached.jsonl" 2>"$out/cached.err"
end=$(date +%s%N)
/usr/bin/python3 - "$out" "$start" "$end" <<'PY'
import json, statistics, sys
out, t0, t1 = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
per, kernels, cached, total, dups = [], 0, 0, 0, 0
tr = [json.loads(l) for l in open(f"{out}/trace.jsonl")]
tr = [t for t in tr if t["stage"] != "run"]
# what the one profiler spent measuring (compiling and running a kernel the
# first run had not reached, or a task's final head-to-head, never from the
# cache): profiling, not orchestration, whichever task's iteration it held up
measured_ids = set()
for line in open(f"{out}/cached.jsonl"):
    task = json.loads(line)["task"]
    for l in open(f"{out}/cached/{task}/history.jsonl"):
        r = json.loads(l)
        if r["iter"] > 0 and r.get("cached") is False and r.get("kernel_id"):
            measured_ids.add(r["kernel_id"])
busy = sorted((t["start_us"], t["end_us"]) for t in tr if t["topic"].startswith("accelopt.kernels.")
              and (t["id"] in measured_ids or t["id"].endswith(":final")))
def measuring(a, b):
    return sum(max(0, min(b, e) - max(a, s)) for s, e in busy) / 1e3
for line in open(f"{out}/cached.jsonl"):
    d = json.loads(line)
    kernels += d["kernels_evaluated"]
    rows = [json.loads(l) for l in open(f"{out}/cached/{d['task']}/history.jsonl")]
    for h in d["history"][1:]:
        # the iteration closed in the selector's handling of its last result
        tag = f"-{d['task']}:{h['iter']}:"
        closed = max(t["end_us"] for t in tr if t["topic"] == "accelopt.results" and tag in t["id"])
        ms = 1e3 * h["seconds"]
        per.append((ms - measuring(closed - ms * 1e3, closed)) / h["kernels"])
    for r in rows:
        total += 1
        cached += bool(r.get("cached"))
        dups += r.get("status") == "duplicate"
print(f"kernels: {kernels} ({cached} of {total} answered from the profile cache, {dups} duplicates "
      f"never profiled, {total - cached - dups} compiled and run)")
print(f"per kernel, median over {len(per)} iterations ((iteration time - the profiler's measuring in it) / its kernels): "
      f"{statistics.median(per):.2f} ms (min {min(per):.2f}, max {max(per):.2f})")
print(f"whole second run, start-up and shut-down included: {(t1 - t0) / 1e6 / kernels:.1f} ms per kernel "
      f"({(t1 - t0) / 1e9:.1f} s)")
def q(xs, f):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(f * len(xs)))]
print("the traced messages (ms): hop = its producer to the start of its handling; handling = in the stage")
print(f"{'topic':28} {'n':>5} {'hop med':>8} {'p99':>7} {'max':>7}   {'handling med':>12} {'p99':>7} {'max':>7}")
for topic in sorted({t["topic"] for t in tr}):
    ts = [t for t in tr if t["topic"] == topic]
    hop = [t["start_us"] / 1e3 - t["created_ms"] for t in ts if t["created_ms"] > 0]
    work = [(t["end_us"] - t["start_us"]) / 1e3 for t in ts]
    print(f"{topic:28} {len(ts):5d} {q(hop, .5):8.1f} {q(hop, .99):7.1f} {max(hop):7.1f}   "
          f"{q(work, .5):12.1f} {q(work, .99):7.1f} {max(work):7.1f}")
# where a stage's handling goes (median per message): its own CPU, its Redis
# round trips, and the rest (waiting for a core, the broker's acks)
if all("cpu_us" in t for t in tr):
    print(f"{'stage, topic':40} {'handling':>8} {'cpu':>6} {'redis':>6} {'trips':>5}  (ms, median a message)")
    for key in sorted({(t["stage"], t["topic"]) for t in tr}):
        ts = [t for t in tr if (t["stage"], t["topic"]) == key]
        print(f"{key[0] + ' ' + key[1]:40} {q([(t['end_us'] - t['start_us']) / 1e3 for t in ts], .5):8.2f} "
              f"{q([t['cpu_us'] / 1e3 for t in ts], .5):6.2f} {q([t['redis_us'] / 1e3 for t in ts], .5):6.2f} "
              f"{q([t['redis_trips'] for t in ts], .5):5d}")
# the longest stretches, after the first message and before the last, in
# which no stage was handling a message (all waiting on a hop or a poll)
ev = sorted((t["start_us"], t["end_us"]) for t in tr)
gaps, reach = [], ev[0][1]
for a, b in ev[1:]:
    if a > reach:
        gaps.append((a - reach) / 1e3)
    reach = max(reach, b)
gaps.sort(reverse=True)
print(f"idle gaps between handled messages: {len(gaps)}, median {q(gaps, .5):.1f} ms, p99 {q(gaps, .99):.1f}, "
      f"max {gaps[0]:.1f}; the five longest: " + ", ".join(f"{g:.1f}" for g in gaps[:5]))
PY
