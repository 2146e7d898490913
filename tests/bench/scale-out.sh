#!/usr/bin/env bash
# scale-out.sh - one iteration's wall time with 1 and with 4 executor
# replicas, every model call taking 200 ms (the scripted server of
# tests/llm_server.py).  One matmul run at tiny: B=1, N=8 plans, K=16
# samples, T=1: 8 planner calls, 128 executor calls; the kernels are one
# source, so the profiler measures it once and the cache answers the rest.
# The time is the selector's own: from the candidate sent to the last
# result in (history[].seconds of the done message).
#   tests/bench/scale-out.sh [REPLICAS...]     (default: 1 4)
set -eu
cd "$(dirname "$0")/../.."
export ACCELOPT_HOME=$PWD
T=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; rm -rf "$T"' EXIT
export ACCELOPT_STATE_DIR=${ACCELOPT_STATE_DIR:-$T/state}
[ -f "$ACCELOPT_STATE_DIR/calibration-cpu.json" ] || bin/accelopt calibrate --bw-mib 64 >/dev/null 2>&1
FAST="-X session.timeout.ms=4000 -X heartbeat.interval.ms=400"

python3 tests/msgs.py knob nkibench/matmul/baseline.c BLOCK_N 256 >"$T/fast.c"
python3 - "$T/fast.c" >"$T/script.json" <<'PY'
import json, sys
fast = open(sys.argv[1]).read()
summary = open("tests/replies/summary-01-format.md").read()
print(json.dumps({"plan-m": [{"content": "Widen the j tile to 256 columns.", "delay": 0.2}],
                  "exec-m": [{"content": "```c\n" + fast + "```", "delay": 0.2}],
                  "sum-m": [{"content": summary, "delay": 0.2}]}))
PY
python3 tests/llm_server.py "$T/script.json" "$T/port" "$T/llm.log" 2>/dev/null &
for _ in $(seq 100); do [ -s "$T/port" ] && break; sleep 0.05; done
export ACCELOPT_LLM_URL=http://127.0.0.1:$(cat "$T/port")/v1 ACCELOPT_LLM_KEY=sk-bench
export ACCELOPT_PLANNER_MODEL=plan-m ACCELOPT_EXECUTOR_MODEL=exec-m ACCELOPT_SUMMARIZER_MODEL=sum-m
export ACCELOPT_LOG=warn

for E in "${@:-1 4}"; do
    for e in $E; do
        bin/accelopt broker --partitions 12 >"$T/addr" 2>/dev/null &
        broker=$!
        for _ in $(seq 100); do [ -s "$T/addr" ] && break; sleep 0.05; done
        B=$(head -1 "$T/addr")
        port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
        redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no >/dev/null 2>&1 &
        redis=$!
        for _ in $(seq 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.05; done
        R=redis://127.0.0.1:$port
        pids=
        for s in selector planner summarizer; do
            bin/accelopt-$s --brokers "$B" --redis "$R" $FAST </dev/null >/dev/null 2>>"$T/stages.log" &
            pids="$pids $!"
        done
        bin/accelopt-profiler --brokers "$B" --redis "$R" $FAST --cpu 0 --budget 0.1 --warmup 0.02 \
            </dev/null >/dev/null 2>>"$T/stages.log" &
        pids="$pids $!"
        for i in $(seq "$e"); do
            bin/accelopt-executor --brokers "$B" --redis "$R" $FAST </dev/null >/dev/null 2>>"$T/stages.log" &
            pids="$pids $!"
        done
        sleep 5 # every replica joined its group
        bin/accelopt submit --brokers "$B" --redis "$R" --wait --json --out "$T/out-$e" \
            --iters 1 --beam 1 --plans 8 --samples 16 --topk 2 matmul >"$T/done-$e.json" 2>>"$T/submit.log"
        python3 - "$T/done-$e.json" "$e" <<'PY'
import json, sys
d = json.loads(open(sys.argv[1]).readline())
it = [h for h in d["history"] if h.get("iter") == 1][0]
print("%s executor replica%s: iteration 1 in %.2f s (%d kernels)" %
      (sys.argv[2], "" if sys.argv[2] == "1" else "s", it["seconds"], d["kernels_evaluated"] - 1))
open(sys.argv[1] + ".s", "w").write("%f" % it["seconds"])
PY
        kill $pids $redis $broker 2>/dev/null
        wait $pids $redis $broker 2>/dev/null || true
    done
done
if [ -f "$T/done-1.json.s" ] && [ -f "$T/done-4.json.s" ]; then
    python3 -c "import sys; a,b=float(open(sys.argv[1]).read()),float(open(sys.argv[2]).read()); print('4 replicas: %.2fx faster than 1' % (a/b))" "$T/done-1.json.s" "$T/done-4.json.s"
fi
