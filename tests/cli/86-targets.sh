# 86-targets.sh - a cpu run's and a cuda run's messages through one broker:
# the builtin model's stages tune a cuda baseline's knobs (cuda kernels, for
# accelopt.kernels.cuda), a cpu profiler measures only the cpu kernels, and
# the cuda kernels wait for a cuda profiler, which on a machine without a GPU
# refuses to start and says why.
. tests/cli/helpers.sh
ensure_calibration
M=/usr/bin/python3
FAST="-X session.timeout.ms=6000 -X heartbeat.interval.ms=500"

bin/accelopt broker --partitions 2 >"$T/broker.out" 2>"$T/broker.err" &
SERVICE_PIDS="$SERVICE_PIDS $!"
for _ in $(seq 100); do [ -s "$T/broker.out" ] && break; sleep 0.05; done
B=$(head -1 "$T/broker.out")

# the same task in both targets, through the builtin planner and executor
ACCELOPT_MSG_TARGET=cuda $M tests/msgs.py candidate silu - '{"plans": 2, "samples": 1}' |
    bin/accelopt-planner 2>/dev/null | bin/accelopt-executor 2>/dev/null >"$T/cuda-kernels.jsonl"
$M tests/msgs.py candidate silu - '{"plans": 1, "samples": 1}' |
    bin/accelopt-planner 2>/dev/null | bin/accelopt-executor 2>/dev/null >"$T/cpu-kernels.jsonl"
$M - "$T/cuda-kernels.jsonl" <<'PY'
import json, re, sys
base = open("nkibench/silu/baseline.cu").read()
ks = [json.loads(l) for l in open(sys.argv[1])]
knobs = lambda s: dict(re.findall(r"#define (\w+) (\S+) +/\* knob:", s))
ok = len(ks) == 2 and all(k["target"] == "cuda" and "extern \"C\" void kernel" in k["source"] and
                          knobs(k["source"]) != knobs(base) and set(knobs(k["source"])) == set(knobs(base))
                          for k in ks)
sys.exit(0 if ok else 1)
PY
ok $? "the builtin model tunes the cuda baseline's knobs: two cuda kernels, each a knob move"

bin/accelopt produce -b "$B" accelopt.kernels.cuda <"$T/cuda-kernels.jsonl" 2>/dev/null &&
    bin/accelopt produce -b "$B" accelopt.kernels.cpu <"$T/cpu-kernels.jsonl" 2>/dev/null
ok $? "the embedded broker has a kernel topic per target"
bin/accelopt-profiler --brokers "$B" $FAST --budget 0.1 --warmup 0.02 2>"$T/prof.err" &
prof=$!
bin/accelopt consume -b "$B" accelopt.results -n 1 --idle 60 >"$T/results.jsonl" 2>/dev/null
sleep 2
kill -TERM $prof
wait $prof
bin/accelopt consume -b "$B" accelopt.results -n 10 --idle 10 >"$T/all-results.jsonl" 2>/dev/null
[ "$(wc -l <"$T/all-results.jsonl")" -eq 1 ] &&
    [ "$(field "$T/results.jsonl" "r['target'] + ' ' + r['status']")" = "cpu ok" ]
ok $? "the cpu profiler measured the cpu kernel and no other"
bin/accelopt consume -b "$B" accelopt.kernels.cuda -n 2 --idle 10 >"$T/waiting.jsonl" 2>/dev/null
[ "$(grep -c '"target":"cuda"' "$T/waiting.jsonl")" -eq 2 ]
ok $? "the cuda kernels wait on accelopt.kernels.cuda for a cuda profiler"
if [ -e /dev/nvidia0 ]; then
    skip "a cuda profiler without a GPU refuses to start" "this machine has a GPU"
else
    timeout 20 bin/accelopt-profiler --target cuda --brokers "$B" </dev/null >/dev/null 2>"$T/cprof.err"
    [ $? -eq 1 ] && grep -q "no NVIDIA GPU on this machine" "$T/cprof.err"
    ok $? "a cuda profiler without a GPU refuses to start (exit 1), saying why"
fi
