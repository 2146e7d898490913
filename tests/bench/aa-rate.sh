#!/usr/bin/env bash
# aa-rate.sh N [TASK:SIZE...] - the A/A rate of the final head-to-head
# (issue 46, part 1): each task's baseline against a token-different copy
# (an unused static constant: the same machine code), N head-to-heads in
# one profiler process (each with two runner processes of its own); the
# share of 95% intervals that hold 1.00 and the spread of the speedups.
set -eu
cd "$(dirname "$0")/../.."
n=${1:-20}
shift || true
specs=${*:-adamw:tiny matmul:tiny silu:tiny}
T=$(mktemp -d /tmp/accelopt-aarate-XXXXXX)
trap 'rm -rf "$T"' EXIT
export ACCELOPT_LOG=warn
[ -f "${ACCELOPT_STATE_DIR:-$HOME/.local/state/accelopt}/calibration-cpu.json" ] ||
    bin/accelopt calibrate >/dev/null
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg); commit $(git rev-parse --short HEAD)"
echo
echo "| task | size | comparisons | 1.00 inside | speedups: min, median, max | widest interval | seconds |"
echo "|---|---|---|---|---|---|---|"
for spec in $specs; do
    task=${spec%%:*}
    size=${spec#*:}
    python3 - "$task" "$size" "$n" >"$T/in.jsonl" <<'PY'
import json, sys
task, size, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
src = open("nkibench/%s/baseline.c" % task).read()
for i in range(n):
    m = dict(type="kernel", v=1, id="aa-%d" % i, run="aa", task=task, target="cpu", iter=1, size=size,
             source=src + "\nstatic const int aa_unused_%d = %d;\n" % (i, i), baseline_source=src)
    print(json.dumps(m))
PY
    s=$(date +%s)
    bin/accelopt-profiler <"$T/in.jsonl" >"$T/out.jsonl" 2>"$T/err"
    python3 - "$T/out.jsonl" "$task" "$size" "$(($(date +%s) - s))" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
h = [r["head_to_head"] for r in rows if r.get("status") == "ok" and r.get("head_to_head")]
inside = sum(1 for x in h if x["speedup_low"] <= 1 <= x["speedup_high"])
sp = sorted(x["speedup"] for x in h)
wide = max(x["speedup_high"] / x["speedup_low"] for x in h) if h else float("nan")
print("| %s | %s | %d of %d ok | %d of %d | %.3f, %.3f, %.3f | %.3f | %s |" % (
    sys.argv[2], sys.argv[3], len(h), len(rows), inside, len(h), sp[0], statistics.median(sp), sp[-1], wide, sys.argv[4]))
PY
done
