#!/usr/bin/env bash
# inflight.sh - model calls in flight in one process (issue 67): M plans
# piped into one executor with --calls C, against the scripted server
# (tests/llm_server.py) answering every call in LATENCY seconds.  Prints the
# processes that served them, the peak calls in flight the server saw, the
# wall time and the ideal (calls x LATENCY / C: a plan's two samples are
# two calls), and the executor's CPU time.
#   tests/bench/inflight.sh [LATENCY [C [M]]]     (default: 2 16 64)
set -eu
cd "$(dirname "$0")/../.."
LAT=${1:-2} C=${2:-16} M=${3:-64}
T=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; rm -rf "$T"' EXIT
python3 - "$LAT" >"$T/script.json" <<'PY'
import json, sys
src = open("nkibench/matmul/baseline.c").read()
print(json.dumps({"*": [{"content": "```c\n" + src.replace("#define BLOCK_N 64", "#define BLOCK_N 128") + "```",
                         "delay": float(sys.argv[1])}]}))
PY
python3 tests/llm_server.py "$T/script.json" "$T/port" "$T/llm.log" 2>"$T/server.err" &
for _ in $(seq 100); do [ -s "$T/port" ] && break; sleep 0.05; done
for i in $(seq "$M"); do python3 tests/msgs.py plan matmul "Plan $i: widen the j tile." | \
    python3 -c "import json,sys; m=json.load(sys.stdin); m['id']+='.%d' % $i; print(json.dumps(m))"; done >"$T/plans.jsonl"
start=$(date +%s.%N)
ACCELOPT_LLM_URL=http://127.0.0.1:$(cat "$T/port")/v1 ACCELOPT_LLM_MODEL=m \
    /usr/bin/time -f '%U %S' -o "$T/cpu" bin/accelopt-executor --calls "$C" <"$T/plans.jsonl" >"$T/out.jsonl" 2>"$T/err"
end=$(date +%s.%N)
python3 - "$T/llm.log" "$T/out.jsonl" "$start" "$end" "$LAT" "$C" "$M" "$(cat "$T/cpu")" <<'PY'
import json, sys
reqs = [json.loads(l) for l in open(sys.argv[1])]
out = [json.loads(l) for l in open(sys.argv[2])]
wall = float(sys.argv[4]) - float(sys.argv[3])
lat, c, m = float(sys.argv[5]), int(sys.argv[6]), int(sys.argv[7])
ideal = len(reqs) * lat / c  # each plan's samples are calls of their own
user, sys_ = map(float, sys.argv[8].split())
ok = sum(1 for k in out if k.get("source"))
print("one executor process, --calls %d: %d plans, %d calls, %d kernels written" % (c, m, len(reqs), ok))
print("calls in flight at the server: peak %d" % max(r["inflight"] for r in reqs))
print("wall %.1f s, ideal %.1f s (%d calls x %.1f s / %d): %.2fx of the ideal" % (wall, ideal, len(reqs), lat, c, wall / ideal))
print("the executor's CPU: %.2f s user, %.2f s system" % (user, sys_))
PY
