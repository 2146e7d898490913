#!/bin/bash
# profile-ab.sh - one task's baseline profiled by another commit's build and
# by this tree's, alternating, N times each, one shared calibration; each
# copy of the source differs by a comment, so nothing is cached.  Prints
# per profile: build, median ms, min ms, timed calls, spread, wall s.
# Usage: tests/bench/profile-ab.sh COMMIT TASK [N] [SIZE]
set -u
here=$(cd "$(dirname "$0")/../.." && pwd)
commit=$1 task=$2 n=${3:-5} size=${4:-cpu}
old=$(mktemp -d)
git -C "$here" worktree add -q "$old/tree" "$commit" && make -s -C "$old/tree" >/dev/null || exit 1
st=$(mktemp -d)
(cd "$here" && ACCELOPT_STATE_DIR=$st bin/accelopt calibrate --bw-mib 256 >/dev/null 2>&1)
for i in $(seq "$n"); do
  for d in "$old/tree" "$here"; do
    name=$([ "$d" = "$here" ] && echo this || echo "$commit")
    f=$st/kernel-$i.c
    { cat "$here/nkibench/$task/baseline.c"; echo "/* copy $i */"; } >"$f"
    (cd "$d" && ACCELOPT_STATE_DIR=$st ACCELOPT_HOME=$d bin/accelopt profile --alone --task "nkibench/$task" \
        --size "$size" --json "$f") | /usr/bin/python3 -c "
import json, sys
d = json.load(sys.stdin)
print('$name', round(d['latency_ns'] / 1e6, 2), round(d['latency_min_ns'] / 1e6, 2), d['repeats'],
      round(d['spread'], 3), round(d['wall_ns'] / 1e9, 2))"
  done
done
git -C "$here" worktree remove --force "$old/tree"
rm -rf "$old" "$st"
