#!/usr/bin/env bash
# after-done.sh N [LOAD] - work after `done` (issue 46, part 2): N profiles
# each of the two kernels that raise `done` themselves and then copy the
# last 37% of their outputs (1-2 us at matmul tiny), with LOAD busy loops
# beside them (0: none); how each ended.  The returning one must always be
# rejected (the runner's own check); the one that takes over the runner's
# loop is caught by the outputs sampled at its `done`, and passes only if
# it finishes its copy within the profiler's reaction.
set -eu
cd "$(dirname "$0")/../.."
n=${1:-20}
load=${2:-0}
T=$(mktemp -d /tmp/accelopt-afterdone-XXXXXX)
pids=
trap 'kill $pids 2>/dev/null; rm -rf "$T"' EXIT
for _ in $(seq "$load"); do
    sh -c 'while :; do :; done' &
    pids="$pids $!"
done
sleep 1
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores, $load busy loops, load $(cut -d' ' -f1 /proc/loadavg); commit $(git rev-parse --short HEAD)"
echo
echo "| kernel | profiles | rejected | incorrect | ok | other |"
echo "|---|---|---|---|---|---|"
for k in done_then_last_rows takeover_done_early; do
    : >"$T/$k"
    for _ in $(seq "$n"); do
        timeout 120 bin/accelopt profile --alone --task nkibench/matmul --size tiny --timeout 3 \
            "tests/kernels/$k.c" 2>/dev/null | python3 -c "import json,sys; print(json.loads(sys.stdin.readline())['status'])" >>"$T/$k" || echo none >>"$T/$k"
    done
    c() { grep -cx "$1" "$T/$k" || true; }
    echo "| $k | $n | $(c rejected) | $(c incorrect) | $(c ok) | $(grep -cvxE 'rejected|incorrect|ok' "$T/$k" || true) |"
done
