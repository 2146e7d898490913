#!/usr/bin/env bash
# memory-persist.sh [TASK...] - what the memory a machine keeps is worth
# (issue 47): per task, in a state directory of its own (the calibration
# copied in), a first run with an empty machine memory, then the same run
# again (same settings and seed), which starts from the first run's
# lessons, and the same again with --no-memory as the control.  Builtin
# model at tiny.  Per run: the kernels evaluated until the first run's
# fastest kernel (the same source) came up, the search's own best figure
# (the baseline's time over the fastest kernel's), and the run's quoted
# figure (its final head-to-head).  ITERS and PLANS (default 4 and 2) in
# the environment change the run's shape.
set -euo pipefail
cd "$(dirname "$0")/../.."
tasks=${*:-matmul transpose_matmul rmsnorm_matmul}
T=$(mktemp -d /tmp/accelopt-mempersist-XXXXXX)
trap 'rm -rf "$T"' EXIT
cal=${ACCELOPT_STATE_DIR:-$HOME/.local/state/accelopt}/calibration-cpu.json
[ -f "$cal" ] || bin/accelopt calibrate >/dev/null
export ACCELOPT_BUDGET=${ACCELOPT_BUDGET:-0.1} ACCELOPT_WARMUP=${ACCELOPT_WARMUP:-0.02}
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg); commit $(git rev-parse --short HEAD)"
echo
echo "| task | run | memory items at its start | kernels until the first run's fastest | evaluated | search's best | head-to-head |"
echo "|---|---|---:|---:|---:|---:|---:|"
for t in $tasks; do
    st=$T/$t/state
    mkdir -p "$st"
    cp "$cal" "$st/"
    for arm in first second control; do
        opt=()
        [ $arm = control ] && opt=(--no-memory)
        ACCELOPT_STATE_DIR=$st bin/accelopt run "$t" --iters "${ITERS:-4}" --beam 1 --plans "${PLANS:-2}" --samples 1 --topk 4 \
            --seed 1 "${opt[@]}" --log info --json --out "$T/$t/$arm" >"$T/$t/$arm.json" 2>"$T/$t/$arm.err" || true
    done
    python3 - "$T/$t" "$t" <<'PY'
import json, re, sys
d, t = sys.argv[1], sys.argv[2]
def load(arm):
    done = json.load(open(f"{d}/{arm}/{t}/done.json"))
    rows = [json.loads(l) for l in open(f"{d}/{arm}/{t}/history.jsonl")]
    m = re.search(r"(\d+) memory items? from earlier runs", open(f"{d}/{arm}.err").read())
    return done, rows, (m.group(1) if m else "none read")
# the first run's fastest kernel as the search measured it (its final best
# may be the baseline when the head-to-head found no gain)
ok = [r for r in load("first")[1] if r.get("status") == "ok" and r.get("latency_ns")]
first = min(ok, key=lambda r: r["latency_ns"])["sha256"]
for arm in ("first", "second", "control"):
    done, rows, items = load(arm)
    reach = next((str(i + 1) for i, r in enumerate(rows) if r.get("sha256") == first), "never")
    ok = [r["latency_ns"] for r in rows if r.get("status") == "ok" and r.get("latency_ns")]
    base = rows[0]["latency_ns"]  # iteration 0: the baseline
    print(f"| {t} | {arm} | {items} | {reach} | {done['kernels_evaluated']} | {base / min(ok):.3f}x | "
          f"{done['speedup']:.3f}x |")
PY
done
