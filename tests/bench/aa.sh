#!/usr/bin/env bash
# aa.sh - A/A: the head-to-head of a kernel against itself (issue 25,
# docs/BENCHMARKS.md).  The baseline, with a comment added so it is a
# distinct source, goes head to head with the baseline REPEATS times in
# separate profiler processes, per task and size; reported: each speedup
# with its stated 95% interval, and whether 1.00 lies inside it.  Then the
# same kernel measured alone in REPEATS separate processes: the run-to-run
# spread of a latency that the search's figures carry (the 5% floor of
# lib/state/select.h).
# usage: tests/bench/aa.sh [REPEATS=5] [TASK:SIZE...]
set -eu
cd "$(dirname "$0")/../.."
repeats=${1:-5}
shift || true
specs=${*:-matmul:tiny silu:tiny silu:cpu matmul:cpu}
T=$(mktemp -d /tmp/accelopt-aa-XXXXXX)
trap 'rm -rf "$T"' EXIT
export ACCELOPT_LOG=warn
[ -f "${ACCELOPT_STATE_DIR:-$HOME/.local/state/accelopt}/calibration-cpu.json" ] ||
    bin/accelopt calibrate >/dev/null
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores; commit $(git rev-parse --short HEAD)"
echo
echo "| task | size | A/A speedups (95% interval) | 1.00 inside | rounds | head-to-head wall | alone: latency min–max over $repeats processes |"
echo "|---|---|---|---|---|---|---|"
for spec in $specs; do
    task=${spec%%:*}
    size=${spec#*:}
    for i in $(seq "$repeats"); do
        python3 - "$task" "$size" "$i" h2h >"$T/h2h-$i.jsonl" <<'PY'
import json, sys
task, size, i, mode = sys.argv[1:]
src = open("nkibench/%s/baseline.c" % task).read()
m = dict(type="kernel", v=1, id="aa-%s" % i, run="aa", task=task, target="cpu", iter=1, size=size,
         source=src + "\n/* A/A copy %s */\n" % i)
m["baseline_source"] = src
print(json.dumps(m))
m.pop("baseline_source")
m["id"] = "alone-%s" % i
m["source"] = src + "\n/* alone %s */\n" % i
print(json.dumps(m))
PY
        bin/accelopt-profiler <"$T/h2h-$i.jsonl" >>"$T/out.jsonl"
    done
    python3 - "$T/out.jsonl" "$task" "$size" <<'PY'
import json, sys
rs = [json.loads(l) for l in open(sys.argv[1])]
h = [r for r in rs if r["kernel_id"].startswith("aa-")]
a = [r for r in rs if r["kernel_id"].startswith("alone-")]
assert all(r["status"] == "ok" for r in rs), [(r["kernel_id"], r["status"], r.get("reason")) for r in rs]
hh = [r["head_to_head"] for r in h]
inside = sum(x["speedup_low"] <= 1 <= x["speedup_high"] for x in hh)
text = ", ".join("%.3f (%.3f–%.3f)" % (x["speedup"], x["speedup_low"], x["speedup_high"]) for x in hh)
lat = [r["latency_ns"] for r in a]
fmt = lambda ns: "%.1f µs" % (ns / 1e3) if ns < 1e6 else "%.2f ms" % (ns / 1e6)
import statistics
wall = statistics.median(r["wall_ns"] for r in h)
print("| %s | %s | %s | %d of %d | %d | %.1f s | %s–%s (±%.1f%%) |" % (sys.argv[2], sys.argv[3], text, inside, len(hh),
      hh[0]["rounds"], wall / 1e9, fmt(min(lat)), fmt(max(lat)), 50 * (max(lat) - min(lat)) / min(lat)))
PY
    rm -f "$T/out.jsonl"
done
