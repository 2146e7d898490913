# 60-inflight-kill.sh - an executor killed with eight model calls in flight
# in its one process (issue 67): its plans are committed only up to the
# lowest unfinished one, so nothing is lost; the four calls that had come
# back (later plans, done out of order) are not asked of the model again,
# and the four that had not are made once more.  On the embedded broker,
# then on a real Kafka broker where there is one (test_kafka).
. tests/cli/helpers.sh
ensure_calibration
M=/usr/bin/python3
export ACCELOPT_BUDGET=0.05 ACCELOPT_WARMUP=0.01

$M tests/msgs.py knob nkibench/matmul/baseline.c BLOCK_N 256 >"$T/fast.c"
# inflight_kill NAME [RUN ARGS...]: the run, the kill, the checks
inflight_kill() {
    local name=$1 ex RUN
    shift
    # the first four executor calls take 8 s, every later one 0.3 s
    start_llm "kill-$name" "$($M - "$T/fast.c" <<'PY'
import json, sys
k = "```c\n" + open(sys.argv[1]).read() + "```"
plans = ["Plan %s: widen the j tile, variant %s." % (c, c) for c in "ABCDEFGH"]
print(json.dumps({"plan-m": [{"choose": plans}],
                  "exec-m": [{"content": k, "delay": 8.0}] * 4 + [{"content": k, "delay": 0.3}],
                  "sum-m": [{"content": open("tests/replies/summary-01-format.md").read()}]}))
PY
)"
    ACCELOPT_LLM_URL=$LLM_URL ACCELOPT_PLANNER_MODEL=plan-m ACCELOPT_EXECUTOR_MODEL=exec-m \
    ACCELOPT_SUMMARIZER_MODEL=sum-m ACCELOPT_LLM_KEY=sk-inflight-0001 ACCELOPT_PLAN_WIDTH=8 \
        bin/accelopt run matmul --iters 1 --beam 1 --plans 8 --samples 1 --topk 2 -j 8 --json --log info \
        --out "$T/$name" "$@" >"$T/$name.jsonl" 2>"$T/$name.err" &
    RUN=$!
    SERVICE_PIDS="$SERVICE_PIDS $RUN"
    # once the four quick calls have come back (eight requests, the last four
    # answered and their kernels written: a busy machine takes longer than
    # their 0.3 s), kill -9 the executor: four calls still in flight
    for _ in $(seq 1200); do
        [ "$(grep -c '"exec-m"' "$LLM_LOG")" -ge 8 ] &&
            [ "$(grep -c 'kernel written' "$T/$name/logs/executor.log" 2>/dev/null)" -ge 4 ] && break
        sleep 0.05
    done
    sleep 0.5 # each kept in the store just after its line
    ex=$(pgrep -P "$RUN" -f accelopt-executor)
    grep -q '"exec-m"' "$LLM_LOG" && [ -n "$ex" ] && kill -9 "$ex"
    ok $? "$name: the executor is killed with calls in flight (pid ${ex:-none}, $(grep -c '"exec-m"' "$LLM_LOG") calls made)"
    wait "$RUN"
    run_ended $?; ok $? "$name: the run ends: accelopt run restarted the executor"
    grep -c "written before; sent again" "$T/$name/logs/executor.log" >"$T/again" || true
    $M - "$LLM_LOG" "$T/$name.jsonl" "$(cat "$T/again")" <<'PY'
import json, sys
reqs = [json.loads(l) for l in open(sys.argv[1]) if '"exec-m"' in l]
d = json.loads(open(sys.argv[2]).readline())
again = int(sys.argv[3])
# every plan's kernel reached the profiler: 1 baseline + 8 kernels
assert d["kernels_evaluated"] == 9, d["kernels_evaluated"]
# the four answered calls were not made again; the four cut off were
assert len(reqs) == 12, "%d executor calls for 8 plans, 4 cut off by the kill" % len(reqs)
assert again == 4, "%d kernels sent again as written" % again
print("# %d executor calls, %d kernels sent again as written" % (len(reqs), again))
PY
    ok $? "$name: nothing lost: eight kernels measured; twelve calls, the four answered ones not asked again"
}

inflight_kill mock
if test_kafka inflight-kill; then
    inflight_kill kafka $ON_KAFKA
else
    skip "kafka: an executor killed with calls in flight on a real broker" "no java, or no Kafka (make kafka)"
fi
