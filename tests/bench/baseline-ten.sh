#!/usr/bin/env bash
# baseline-ten.sh [N=10] [LOOPS=3] - issue 47's goal for a user's kernel:
# N runs of `accelopt run matmul --baseline FILE` (FILE: the task's
# baseline with its j tile widened to 256 columns, a kernel a user might
# bring; builtin model at tiny, T=3, B=2, N=4), each under LOOPS busy loops
# on the machine, then each run's best.c against FILE in an independent
# head-to-head (a profiler of its own, after the loops stopped): no best
# may be slower than the user's kernel.
set -euo pipefail
cd "$(dirname "$0")/../.."
n=${1:-10}
loops=${2:-3}
T=$(mktemp -d /tmp/accelopt-ten-XXXXXX)
load=
trap 'kill $load 2>/dev/null; rm -rf "$T"' EXIT
[ -f "${ACCELOPT_STATE_DIR:-$HOME/.local/state/accelopt}/calibration-cpu.json" ] || bin/accelopt calibrate >/dev/null
python3 tests/msgs.py knob nkibench/matmul/baseline.c BLOCK_N 256 >"$T/user.c"
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores; $loops busy loops during the runs; commit $(git rev-parse --short HEAD)"
for i in $(seq "$n"); do
    load=
    for _ in $(seq "$loops"); do (while :; do :; done) & load="$load $!"; done
    bin/accelopt run matmul --baseline "$T/user.c" --iters 3 --beam 2 --plans 4 --samples 1 --seed "$i" \
        --memory-scope run --json --out "$T/r$i" >"$T/r$i.json" 2>/dev/null || true
    kill $load 2>/dev/null
    load=
done
# the independent head-to-heads, on a quiet machine
python3 - "$T" "$n" >"$T/in.jsonl" <<'PY'
import json, sys
d, n = sys.argv[1], int(sys.argv[2])
user = open(f"{d}/user.c").read()
for i in range(1, n + 1):
    best = open(f"{d}/r{i}/matmul/best.c").read()
    print(json.dumps(dict(type="kernel", v=1, id=f"ten-{i}", run="ten", task="matmul", target="cpu", iter=1,
                          size="tiny", source=best, baseline_source=user)))
PY
ACCELOPT_LOG=warn bin/accelopt-profiler <"$T/in.jsonl" >"$T/out.jsonl" 2>"$T/err"
echo
echo "| run | the run's figure (how) | search | best is the user's kernel | independent head-to-head | slower than the user's |"
echo "|---|---|---|---|---|---|"
python3 - "$T" "$n" <<'PY'
import hashlib, json, sys
d, n = sys.argv[1], int(sys.argv[2])
user = hashlib.sha256(open(f"{d}/user.c", "rb").read()).hexdigest()
res = {json.loads(l)["kernel_id"]: json.loads(l) for l in open(f"{d}/out.jsonl")}
slower = 0
for i in range(1, n + 1):
    done = json.loads(open(f"{d}/r{i}.json").readline())
    r = res.get(f"ten-{i}", {})
    h = r.get("head_to_head") or {}
    same = done["best"]["sha256"] == user
    bad = h.get("speedup_high", 2) < 1
    slower += bad
    print("| %d | %.3fx (%s) | %.3fx | %s | %s | %s |" % (
        i, done["speedup"], done["speedup_method"], done["search_speedup"], "yes" if same else "no",
        "%.3fx (%.3f-%.3f)" % (h["speedup"], h["speedup_low"], h["speedup_high"]) if h else r.get("status", "?"),
        "YES" if bad else "no"))
print()
print(f"bests slower than the user's kernel: {slower} of {n}")
PY
