#!/usr/bin/env bash
# probe-load.sh N - what a result says of a busy machine (issue 47): N
# kernels (silu's baseline at tiny, each a token-different copy so none is
# served from the cache) through one profiler, quiet and then beside 1 and
# 3 busy loops; per level the medians (and ranges) of machine_load (the
# load average per CPU), machine_slowdown (the profiler's own probe against
# the calibration) and machine_spread, and the kernels' own spread.
set -eu
cd "$(dirname "$0")/../.."
n=${1:-10}
T=$(mktemp -d /tmp/accelopt-probe-XXXXXX)
LOAD=
trap 'kill $LOAD 2>/dev/null; rm -rf "$T"' EXIT
export ACCELOPT_LOG=warn
cal=${ACCELOPT_STATE_DIR:-$HOME/.local/state/accelopt}/calibration-cpu.json
grep -q probe_mean_ns "$cal" 2>/dev/null || bin/accelopt calibrate >/dev/null
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg); commit $(git rev-parse --short HEAD)"
echo
echo "| busy loops | kernels | machine_load | machine_slowdown | machine_spread (calibrated) | kernel spread |"
echo "|---|---|---|---|---|---|"
for loops in 0 1 3; do
    for _ in $(seq "$loops"); do (while :; do :; done) & LOAD="$LOAD $!"; done
    sleep 1
    python3 - "$n" "$loops" >"$T/in.jsonl" <<'PY'
import json, sys
n, loops = int(sys.argv[1]), sys.argv[2]
src = open("nkibench/silu/baseline.c").read()
for i in range(n):
    print(json.dumps(dict(type="kernel", v=1, id="p-%s-%d" % (loops, i), run="probe", task="silu", target="cpu",
                          iter=1, size="tiny", source=src + "\nstatic const int probe_%s_%d = %d;\n" % (loops, i, i))))
PY
    bin/accelopt-profiler <"$T/in.jsonl" >"$T/out.jsonl"
    kill $LOAD 2>/dev/null || true
    LOAD=
    python3 - "$T/out.jsonl" "$loops" <<'PY'
import json, statistics, sys
rs = [json.loads(l) for l in open(sys.argv[1])]
ok = [r for r in rs if r["status"] == "ok"]
def cell(k, f="%.2f"):
    v = [r[k] for r in ok if k in r]
    return (f + " (" + f + "-" + f + ")") % (statistics.median(v), min(v), max(v)) if v else "-"
cal = ok[0].get("machine_spread_calibrated") if ok else None
print("| %s | %d of %d | %s | %s | %s (%s) | %s |" % (sys.argv[2], len(ok), len(rs), cell("machine_load"),
      cell("machine_slowdown"), cell("machine_spread", "%.1f"), "%.2f" % cal if cal is not None else "-",
      cell("spread", "%.3f")))
PY
    sleep 5
done
