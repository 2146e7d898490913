#!/usr/bin/env bash
# under-load.sh - small kernels measured while the machine is busy (a
# compiler on the other core): how many honest baselines come out
# `rejected` as faster than the roofline allows, with the profiler of REV
# (default: before issue 15's wake-up fix) and of HEAD, alternating.
# Per profiler: N `accelopt profile` runs of TASK's tiny baseline.
# usage: tests/bench/under-load.sh [REV=780898c] [N=30] [TASK=rope_single_freq_apply]
set -eu
cd "$(dirname "$0")/../.."
rev=${1:-780898c}
n=${2:-30}
task=${3:-rope_single_freq_apply}
T=$(mktemp -d /tmp/accelopt-load-XXXXXX)
trap 'kill $load 2>/dev/null; git worktree remove --force "$T/old" >/dev/null 2>&1; rm -rf "$T"' EXIT
export ACCELOPT_LOG=error
git worktree add -q --detach "$T/old" "$rev"
make -s -C "$T/old" -j2 bin/accelopt >/dev/null
make -s bin/accelopt >/dev/null
[ -f "${ACCELOPT_STATE_DIR:-$HOME/.local/state/accelopt}/calibration-cpu.json" ] ||
    bin/accelopt calibrate >/dev/null
# the load: clang building the tree again and again, in its own directory
( while :; do rm -rf "$T/load"; make -s CC=clang BUILD="$T/load" BINDIR="$T/load/bin" all >/dev/null 2>&1; done ) &
load=$!
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores; load: a clang build"
echo "task: $task tiny baseline, $n profiles each; before: $rev, after: $(git rev-parse --short HEAD)"
for i in $(seq "$n"); do
    for who in before after; do
        if [ $who = before ]; then home=$T/old; else home=$PWD; fi
        ACCELOPT_HOME=$home "$home/bin/accelopt" profile --alone --task "$task" --size tiny \
            "$home/nkibench/$task/baseline.c" >>"$T/$who.jsonl" 2>/dev/null || true
    done
done
echo
echo "| profiler | ok | rejected | other | median latency (ok) | median wake-up | median wake-up uncertainty |"
echo "|---|---|---|---|---|---|---|"
for who in before after; do
    python3 - "$T/$who.jsonl" "$who" <<'PY'
import json, statistics, sys
rs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
ok = [r for r in rs if r["status"] == "ok"]
rej = sum(r["status"] == "rejected" for r in rs)
med = lambda xs: statistics.median(xs) if xs else float("nan")
wake = med([r["timing"]["wake_ns"] for r in rs if "wake_ns" in r.get("timing", {})])
unc = [r["timing"]["wake_uncertainty_ns"] for r in rs if "wake_uncertainty_ns" in r.get("timing", {})]
print("| %s | %d | %d | %d | %.1f us | %.1f us | %s |" % (
    sys.argv[2], len(ok), rej, len(rs) - len(ok) - rej, med([r["latency_ns"] for r in ok]) / 1e3,
    wake / 1e3, "%.1f us" % (med(unc) / 1e3) if unc else "-"))
PY
done
