#!/usr/bin/env bash
# h2h-under-load.sh [TRIES] [LOOPS] - a head-to-head whose answer is known,
# on a busy machine (issue 66, round six): accelopt-profiler times
# tests/known-speed/matmul_columns.c (about 10x slower) and a copy of the
# baseline, each against matmul's baseline at tiny, TRIES times (default
# 2) beside LOOPS busy loops (default 6).  Per try: the baseline's and the
# kernel's medians, the slow kernel's speedup (interval), rounds, voided
# rounds and replicates, the copy's, and the wall time.  A slower kernel
# must come out with its interval under 1, the copy holding 1.
set -euo pipefail
cd "$(dirname "$0")/../.."
tries=${1:-2} loops=${2:-6}
T=$(mktemp -d)
BUSY=
trap '[ -z "$BUSY" ] || kill $BUSY 2>/dev/null || true; rm -rf "$T"' EXIT
python3 - >"$T/in.jsonl" <<'PY'
import json
b = open("nkibench/matmul/baseline.c").read()
for i, src in (("slow", open("tests/known-speed/matmul_columns.c").read()), ("same", b + "/* the same */\n")):
    print(json.dumps(dict(type="kernel", v=1, id="k-" + i, run="h", task="matmul", target="cpu", iter=1,
                          size="tiny", source=src, baseline_source=b)))
PY
for _ in $(seq "$loops"); do (while :; do :; done) & BUSY="$BUSY $!"; done
echo "machine: $(nproc) cores, $loops busy loops; commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
for _ in $(seq "$tries"); do
    t0=$(date +%s.%N)
    bin/accelopt-profiler <"$T/in.jsonl" 2>/dev/null | python3 -c '
import json, sys
r = {m["kernel_id"]: m["head_to_head"] for m in map(json.loads, sys.stdin)}
s, m = r["k-slow"], r["k-same"]
print("base %.2f ms, kernel %.2f ms; slow %.3f (%.3f-%.3f) %d rounds, %s voided, replicates %s | same %.3f (%.3f-%.3f) %d rounds" % (
    s["baseline_median_ns"] / 1e6, s["kernel_median_ns"] / 1e6, s["speedup"], s["speedup_low"], s["speedup_high"],
    s["rounds"], s.get("rounds_voided", 0), s.get("replicates"), m["speedup"], m["speedup_low"], m["speedup_high"],
    m["rounds"]), end="")'
    echo "; wall $(echo "$(date +%s.%N) - $t0" | bc | cut -c1-5) s"
done
