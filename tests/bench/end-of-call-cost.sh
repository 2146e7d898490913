#!/usr/bin/env bash
# end-of-call-cost.sh COMMIT N [TASK:SIZE...] - what ending every cpu call
# with a DRAIN, the runner's sequence checks and the outputs' sample at
# `done` (issue 46, part 2) cost: each task's baseline profiled by COMMIT's
# build and by this tree's, alternating, N times each, one calibration;
# every copy differs by a comment.  Per build and task: the medians over
# the N profiles of the latency, the wake-up estimate taken off each call,
# and the profile's wall time.
set -eu
here=$(cd "$(dirname "$0")/../.." && pwd)
commit=$1 n=$2
shift 2
specs=${*:-silu:tiny matmul:tiny adamw:tiny}
T=$(mktemp -d /tmp/accelopt-eoc-XXXXXX)
trap 'git -C "$here" worktree remove --force "$T/tree" 2>/dev/null; rm -rf "$T"' EXIT
git -C "$here" worktree add -q "$T/tree" "$commit" && make -s -C "$T/tree" >/dev/null
st=$T/state
mkdir -p "$st"
(cd "$here" && ACCELOPT_STATE_DIR=$st bin/accelopt calibrate --bw-mib 256 >/dev/null 2>&1)
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg); $commit against $(git -C "$here" rev-parse --short HEAD)"
echo
echo "| task | size | build | profiles | latency us (median of medians) | wake-up us | wall s |"
echo "|---|---|---|---|---|---|---|"
for spec in $specs; do
    task=${spec%%:*} size=${spec#*:}
    : >"$T/old.txt"
    : >"$T/new.txt"
    for i in $(seq "$n"); do
        for d in "$T/tree" "$here"; do
            out=$([ "$d" = "$here" ] && echo new || echo old)
            f=$T/kernel-$i.c
            { cat "$here/nkibench/$task/baseline.c"; echo "/* copy $i */"; } >"$f"
            (cd "$d" && ACCELOPT_STATE_DIR=$st ACCELOPT_HOME=$d bin/accelopt profile --alone --task "nkibench/$task" \
                --size "$size" --json "$f") | python3 -c "
import json, sys
d = json.load(sys.stdin)
print(d['latency_ns'], d['timing']['wake_ns'], d['wall_ns'])" >>"$T/$out.txt"
        done
    done
    for b in old new; do
        python3 - "$T/$b.txt" "$task" "$size" "$([ $b = old ] && echo "$commit" || echo this)" <<'PY'
import statistics as s, sys
rows = [list(map(float, l.split())) for l in open(sys.argv[1]) if l.strip()]
med = lambda k: s.median(r[k] for r in rows)
print("| %s | %s | %s | %d | %.2f | %.2f | %.2f |" % (sys.argv[2], sys.argv[3], sys.argv[4], len(rows),
      med(0) / 1e3, med(1) / 1e3, med(2) / 1e9))
PY
    done
done
