#!/usr/bin/env bash
# aa-rate.sh N [TASK:SIZE...] - the A/A rate of the head-to-head (issue 46,
# part 1; children and load: issue 70's landing): each task's baseline
# against a token-different copy (an unused static constant: the same
# machine code), N head-to-heads in one profiler process (each with two
# runner processes of its own); the share of 95% intervals that hold 1.00,
# how many decided something (a gain, or a loss past 1/1.15: what a run
# keeps or teaches) and the spread of the speedups.
# usage: tests/bench/aa-rate.sh 20 matmul:tiny
#        CHILD=1 LOAD=3 ACCELOPT_BUDGET=0.1 tests/bench/aa-rate.sh 40 matmul:tiny
#   CHILD=1: each copy is a child of the baseline, measured alone first
#   (its rounds may stop early, and a difference is measured again, as in
#   a run); LOAD=N: N busy
#   loops share the cores meanwhile; ROWS=F: every head-to-head, kept in F
set -eu
cd "$(dirname "$0")/../.."
n=${1:-20}
shift || true
specs=${*:-adamw:tiny matmul:tiny silu:tiny}
child=${CHILD:-0}
T=$(mktemp -d /tmp/accelopt-aarate-XXXXXX)
LOADS=
trap 'kill $LOADS 2>/dev/null; rm -rf "$T"' EXIT
export ACCELOPT_LOG=warn
[ -f "${ACCELOPT_STATE_DIR:-$HOME/.local/state/accelopt}/calibration-cpu.json" ] ||
    bin/accelopt calibrate >/dev/null
for _ in $(seq 1 "${LOAD:-0}"); do (while :; do :; done) & LOADS="$LOADS $!"; done
sleep 1
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg), ${LOAD:-0} busy loops; commit $(git rev-parse --short HEAD); children: $child; budget ${ACCELOPT_BUDGET:-default}"
echo
echo "| task | size | comparisons | 1.00 inside | decided (gain, loss past 1/1.15) | stopped early | speedups: min, median, max | widest interval | seconds |"
echo "|---|---|---|---|---|---|---|---|---|"
for spec in $specs; do
    task=${spec%%:*}
    size=${spec#*:}
    python3 - "$task" "$size" "$n" "$child" >"$T/in.jsonl" <<'PY'
import hashlib, json, sys
task, size, n, child = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4] == "1"
src = open("nkibench/%s/baseline.c" % task).read()
if child:  # as a run has it: the baseline measured alone first, in the same profiler
    print(json.dumps(dict(type="kernel", v=1, id="baseline", run="aa", task=task, target="cpu", iter=0, size=size,
                          source=src)))
for i in range(n):
    m = dict(type="kernel", v=1, id="aa-%d" % i, run="aa", task=task, target="cpu", iter=1, size=size,
             source=src + "\nstatic const int aa_unused_%d = %d;\n" % (i, i), baseline_source=src)
    if child:
        m["parent"] = hashlib.sha256(src.encode()).hexdigest()
    print(json.dumps(m))
PY
    s=$(date +%s)
    bin/accelopt-profiler <"$T/in.jsonl" >"$T/out.jsonl" 2>"$T/err"
    [ -z "${ROWS:-}" ] || cat "$T/out.jsonl" >>"$ROWS"
    python3 - "$T/out.jsonl" "$task" "$size" "$(($(date +%s) - s))" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
h = [r["head_to_head"] for r in rows if r.get("status") == "ok" and r.get("head_to_head")]
rows = [r for r in rows if r.get("kernel_id") != "baseline"]
inside = sum(1 for x in h if x["speedup_low"] <= 1 <= x["speedup_high"])
decided = sum(1 for x in h if x["speedup_low"] > 1 or x["speedup_high"] < 1 / 1.15)
early = sum(1 for x in h if x.get("undecidable") or x.get("interval") == "student-t")
sp = sorted(x["speedup"] for x in h)
wide = max(x["speedup_high"] / x["speedup_low"] for x in h) if h else float("nan")
print("| %s | %s | %d of %d ok | %d of %d | %d | %d | %.3f, %.3f, %.3f | %.3f | %s |" % (
    sys.argv[2], sys.argv[3], len(h), len(rows), inside, len(h), decided, early, sp[0], statistics.median(sp),
    sp[-1], wide, sys.argv[4]))
for x in h:
    if not x["speedup_low"] <= 1 <= x["speedup_high"]:
        print("#   outside: %.3f (%.3f-%.3f), %d rounds%s, spreads %.3f %.3f%s%s" % (
            x["speedup"], x["speedup_low"], x["speedup_high"], x["rounds"],
            " (%d voided)" % x["rounds_voided"] if x.get("rounds_voided") else "",
            x["baseline_spread"], x["kernel_spread"], " " + x["interval"] if x.get("interval") else "",
            " replicates %s" % x["replicates"] if x.get("replicates") else ""), file=sys.stderr)
PY
done
