#!/usr/bin/env bash
# h2h-stop.sh N FILE:TASK... - what stopping a head-to-head on its answer
# saves (issue 66): N A/A head-to-heads of each FILE against itself (a
# distinct source each, so nothing is cached) through one accelopt-profiler
# at SIZE (default cpu), and per head-to-head its rounds, wall time, and
# the speedup with its interval (an A/A's must hold 1).
# usage: tests/bench/h2h-stop.sh 3 nkibench/silu/examples/vector_exp.c:silu
set -euo pipefail
cd "$(dirname "$0")/../.."
n=$1
shift
T=$(mktemp -d /tmp/accelopt-h2hstop-XXXXXX)
trap 'rm -rf "$T"' EXIT
export ACCELOPT_HOME=$PWD ACCELOPT_LOG=warn
[ -f "${ACCELOPT_STATE_DIR:-$HOME/.local/state/accelopt}/calibration-cpu.json" ] || bin/accelopt calibrate >/dev/null
echo "machine: $(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg); commit $(git rev-parse --short HEAD 2>/dev/null || echo '?'); size ${SIZE:-cpu}"
python3 - "$n" "${SIZE:-cpu}" "$@" >"$T/in.jsonl" <<'PY'
import hashlib, json, sys
n, size = int(sys.argv[1]), sys.argv[2]
seq = 0
for spec in sys.argv[3:]:
    path, task = spec.rsplit(":", 1)
    src = open(path).read()
    for i in range(n):
        seq += 1
        a = "/* h2h-stop %d a */\n%s" % (seq, src)
        b = "/* h2h-stop %d b */\n%s" % (seq, src)
        print(json.dumps({"type": "kernel", "v": 1, "id": "stop:%d:%s" % (seq, task), "run": "stop",
                          "task": task, "target": "cpu", "iter": 1, "size": size, "source": b,
                          "sha256": hashlib.sha256(b.encode()).hexdigest(), "baseline_source": a}))
PY
bin/accelopt-profiler <"$T/in.jsonl" >"$T/out.jsonl"
python3 - "$T/out.jsonl" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
print("| task | status | rounds | wall s | speedup (95% interval) |")
print("|---|---|---:|---:|---|")
for r in rows:
    h = r.get("head_to_head") or {}
    print("| %s | %s | %s | %.1f | %.3f (%.3f-%.3f) |" % (r["task"], r["status"], h.get("rounds"),
          r["wall_ns"] / 1e9, h.get("speedup", 0), h.get("speedup_low", 0), h.get("speedup_high", 0)))
PY
