#!/usr/bin/env bash
# integrity-cost.sh - what issue 14's measurement changes cost (docs/BENCHMARKS.md):
# the runner stopped outside calls (SIGSTOP/SIGCONT around each timed call)
# and fresh inputs drawn for every timed call, against the profiler of
# REV (default: the commit before them), alternating the two in one run.
# Per config, one accelopt-profiler process each profiles the same baseline
# KERNELS times (distinct tokens, so nothing is cached: a comment alone is
# the same kernel since issue 25); reported: the
# median latency and the median overhead (wall - compile - kernel calls).
# usage: tests/bench/integrity-cost.sh [REV=8c5a1b8] [KERNELS=5]
set -eu
cd "$(dirname "$0")/../.."
rev=${1:-8c5a1b8}
kernels=${2:-5}
T=$(mktemp -d /tmp/accelopt-icost-XXXXXX)
trap 'git worktree remove --force "$T/old" >/dev/null 2>&1; rm -rf "$T"' EXIT
export ACCELOPT_LOG=warn
git worktree add -q --detach "$T/old" "$rev"
make -s -C "$T/old" -j2 bin/accelopt-profiler >/dev/null
[ -f "${ACCELOPT_STATE_DIR:-$HOME/.local/state/accelopt}/calibration-cpu.json" ] ||
    bin/accelopt calibrate >/dev/null
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores"
echo "before: $rev, after: $(git rev-parse --short HEAD)"
echo
echo "| task | size | profiler | median latency | median overhead | overhead share of wall |"
echo "|---|---|---|---|---|---|"
for spec in matmul:tiny silu:tiny silu:cpu; do
    task=${spec%%:*}
    size=${spec#*:}
    python3 - "$task" "$size" "$kernels" >"$T/in.jsonl" <<'PY'
import json, sys
task, size, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
src = open("nkibench/%s/baseline.c" % task).read()
for i in range(n):
    print(json.dumps(dict(type="kernel", v=1, id="k%d" % i, run="bench", task=task, target="cpu",
                          iter=1, size=size, source=src + "static const int bench_copy_%d = %d;\n" % (i, i))))
PY
    for who in before after; do
        if [ $who = before ]; then home=$T/old; else home=$PWD; fi
        ACCELOPT_HOME=$home "$home/bin/accelopt-profiler" <"$T/in.jsonl" >"$T/out-$who.jsonl"
        python3 - "$T/out-$who.jsonl" "$task" "$size" "$who" <<'PY'
import json, statistics, sys
rs = [json.loads(l) for l in open(sys.argv[1])]
assert all(r["status"] == "ok" for r in rs), [r.get("reason") for r in rs]
lat = statistics.median(r["latency_ns"] for r in rs)
ov = statistics.median(r["timing"]["overhead_ns"] for r in rs)
share = statistics.median(r["timing"]["overhead_ns"] / r["wall_ns"] for r in rs)
fmt = lambda ns: "%.1f µs" % (ns / 1e3) if ns < 1e6 else "%.2f ms" % (ns / 1e6)
print("| %s | %s | %s | %s | %s | %.0f%% |" % (sys.argv[2], sys.argv[3], sys.argv[4], fmt(lat), fmt(ov), 100 * share))
PY
    done
done
