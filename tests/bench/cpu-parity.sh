#!/bin/bash
# cpu-parity.sh - the cpu target at another commit (default c7d6a56, before
# the measurement moved behind the target seam) and here: every baseline at
# size cpu, one bench each, alternating, two rounds, one shared calibration.
# Writes /tmp/parity-old-N.json and /tmp/parity-main-N.json.
# Usage: tests/bench/cpu-parity.sh [COMMIT]
set -u
here=$(cd "$(dirname "$0")/../.." && pwd)
commit=${1:-c7d6a56}
rm -rf /tmp/old && git -C "$here" worktree add -q /tmp/old "$commit" && make -s -C /tmp/old >/dev/null || exit 1
st=$(mktemp -d)
(cd /tmp/old && ACCELOPT_HOME=/tmp/old ACCELOPT_STATE_DIR=$st bin/accelopt calibrate --bw-mib 256 >/dev/null 2>&1)
for round in 1 2; do
  for d in /tmp/old "$here"; do
    name=$([ "$d" = /tmp/old ] && echo old || echo main)
    (cd "$d" && ACCELOPT_HOME=$d ACCELOPT_STATE_DIR=$st bin/accelopt bench --size cpu --no-vendor \
        --json /tmp/parity-$name-$round.json >/dev/null 2>&1)
  done
done
git -C "$here" worktree remove --force /tmp/old
