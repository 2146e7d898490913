# 87-real-kafka.sh - the stages against a real Apache Kafka broker (4.x,
# KRaft, from Maven Central through `make kafka`; issue 58):
# pipeline/kafka/broker.sh starts and stops a one-node broker, `accelopt
# broker --brokers` makes the topics, kernels go through a profiler to
# results, and a whole run ends with every result though the broker is
# killed and started again while it runs.  Nothing is left running.
. tests/cli/helpers.sh
ensure_calibration
M=/usr/bin/python3
if ! command -v java >/dev/null || ! ls build/kafka/lib/kafka_2.13-*.jar >/dev/null 2>&1; then
    skip "a real Kafka broker" "no java, or no Kafka in build/kafka/lib (make kafka)"
    exit 0
fi
KD=$T/kafka
stop_kafka() { pipeline/kafka/broker.sh stop "$KD"; }
trap 'stop_services; stop_kafka; at_exit' EXIT
B=$(pipeline/kafka/broker.sh start "$KD" 2>"$T/kafka-start.err")
case $B in 127.0.0.1:[0-9]*) ok 0 "broker.sh starts a one-node KRaft broker and prints its address ($B)" ;;
    *) ok 1 "broker.sh starts a one-node KRaft broker: $(tail -3 "$T/kafka-start.err")"; exit 1 ;; esac

# the topics, made once: a second time finds them there
bin/accelopt broker --brokers "$B" --partitions 4 >"$T/topics.out" 2>"$T/topics.err"
ok $? "accelopt broker --brokers makes the accelopt topics on a real cluster"
grep -qx "[1-9][0-9]* topics made on $B (0 there already)" "$T/topics.out"
ok $? "... every one new the first time ($(cat "$T/topics.out"))"
bin/accelopt broker --brokers "$B" >"$T/topics2.out" 2>&1 && grep -qx "0 topics made on $B ([1-9][0-9]* there already)" "$T/topics2.out"
ok $? "... and none the second: they are left as they are ($(cat "$T/topics2.out"))"

# kernels in, results out; the profiler long-polls (the client's default
# fetch wait), where on the embedded broker it polls every 5 ms
$M tests/msgs.py candidate matmul - '{"plans": 2, "samples": 1}' | bin/accelopt-planner 2>/dev/null |
    bin/accelopt-executor 2>/dev/null >"$T/kernels.jsonl"
bin/accelopt produce -b "$B" accelopt.kernels.cpu <"$T/kernels.jsonl" 2>/dev/null
ok $? "accelopt produce sends kernels to the real broker"
bin/accelopt-profiler --brokers "$B" --budget 0.1 --warmup 0.02 --log debug 2>"$T/prof.err" &
prof=$!
bin/accelopt consume -b "$B" accelopt.results -n 2 --idle 90 >"$T/results.jsonl" 2>/dev/null
[ "$(grep -c '"status":"ok"' "$T/results.jsonl")" -eq 2 ]
ok $? "the profiler consumes them and both results come back ok"
grep -q "a real broker: the client's long idle fetch" "$T/prof.err"
ok $? "a stage facing a real broker keeps the client's long-poll fetch"
kill -TERM $prof; wait $prof
ok $? "SIGTERM stops the stage cleanly (exit 0)"

# a whole run against it, the broker killed and started again twice while
# it runs (after its 2nd and its 6th result of 12): every result still
# comes, the run ends
start_redis run
ACCELOPT_LOG=info bin/accelopt run matmul --size tiny --iters 2 --beam 2 --plans 2 --samples 1 --brokers "$B" \
    --redis "$REDIS_URL" --json --out "$T/r1" >"$T/r1.jsonl" 2>"$T/r1.err" &
run=$!
for k in 1 2; do
    for _ in $(seq 600); do # until the run's results are flowing
        [ -n "$(ls "$T"/r1/logs/profiler.log 2>/dev/null)" ] &&
            [ "$(grep -c ': ok (' "$T/r1/logs/profiler.log" 2>/dev/null)" -ge $((k == 1 ? 2 : 6)) ] && break
        kill -0 $run 2>/dev/null || break
        sleep 0.2
    done
    kill -0 $run 2>/dev/null; alive=$?
    seen=$(grep -c ': ok (' "$T/r1/logs/profiler.log" 2>/dev/null)
    kill -KILL "$(cat "$KD/pid")" 2>/dev/null
    sleep 2
    B2=$(pipeline/kafka/broker.sh start "$KD" 2>>"$T/kafka-start.err")
    [ $alive -eq 0 ] && [ "$B2" = "$B" ]
    ok $? "the broker killed (-9) mid-run, after $seen results, and started again on its port and data ($k of 2)"
done
wait $run
run_ended $?; ok $? "the run ends though its broker was killed twice ($(tail -1 "$T/r1.err" | cut -c1-80))"
$M - "$T/r1.jsonl" <<'PY'
import json, sys
done = [json.loads(l) for l in open(sys.argv[1])]
assert len(done) == 1 and done[0]["type"] == "done", done
assert done[0].get("kernels_evaluated", 0) >= 5, done[0]
PY
ok $? "its done message counts every kernel (a baseline and two iterations)"
stop_kafka
! pgrep -f "$KD" >/dev/null
ok $? "broker.sh stop leaves no broker running"
