#!/usr/bin/env bash
# pinning.sh - do two profilers on one machine disturb each other's timing?
# The same kernel (a task's baseline at the cpu size), measured ROUNDS times
# each way: alone on core 0; two at once pinned to cores 0 and 1; two at
# once unpinned.  Prints the median latency of each way and its ratio to
# alone.  No profile cache is shared: every measurement is fresh.
#   tests/bench/pinning.sh [TASK] [ROUNDS]
set -eu
cd "$(dirname "$0")/../.."
TASK=${1:-matmul}
ROUNDS=${2:-5}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
prof() { # prof CPU OUT
    bin/accelopt profile --alone -T "nkibench/$TASK" --size cpu --cpu "$1" "nkibench/$TASK/baseline.c" 2>/dev/null |
        python3 -c "import json,sys; print(json.load(sys.stdin)['latency_ns'])" >>"$2"
}
for _ in $(seq "$ROUNDS"); do
    prof 0 "$T/alone"
    prof 0 "$T/pinned" & prof 1 "$T/pinned"; wait
    prof -1 "$T/unpinned" & prof -1 "$T/unpinned"; wait
done
python3 - "$T" "$TASK" <<'PY'
import statistics, sys
d, task = sys.argv[1], sys.argv[2]
med = {w: statistics.median(float(x) for x in open(f"{d}/{w}")) for w in ("alone", "pinned", "unpinned")}
for w, m in med.items():
    print(f"{task} baseline, {w:9s}: median {m/1e6:9.3f} ms  ({m/med['alone']:.3f}x alone)")
PY
