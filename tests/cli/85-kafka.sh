# 85-kafka.sh - stages on the Kafka transport, through the embedded broker:
# results and dead letters on their topics, at-least-once offsets, a clean
# stop, librdkafka settings without leaking their values
. tests/cli/helpers.sh
ensure_calibration
M=/usr/bin/python3
FAST="-X session.timeout.ms=6000 -X heartbeat.interval.ms=500"   # quick group rejoins

bin/accelopt broker --partitions 2 >"$T/broker.out" 2>"$T/broker.err" &
SERVICE_PIDS="$SERVICE_PIDS $!"
for _ in $(seq 100); do [ -s "$T/broker.out" ] && break; sleep 0.05; done
B=$(head -1 "$T/broker.out")
case $B in 127.0.0.1:*) ok 0 "accelopt broker prints its address ($B)" ;; *) ok 1 "accelopt broker prints its address" ;; esac

# kernels in, results and a dead letter out
$M tests/msgs.py candidate matmul - '{"plans": 2, "samples": 1}' | bin/accelopt-planner 2>/dev/null |
    bin/accelopt-executor 2>/dev/null >"$T/kernels.jsonl"
echo '{"type": "kernel", "v": 1' >>"$T/kernels.jsonl"
bin/accelopt produce -b "$B" accelopt.kernels.cpu <"$T/kernels.jsonl" 2>/dev/null
ok $? "accelopt produce sends JSON Lines to a topic"
bin/accelopt-profiler --brokers "$B" $FAST --budget 0.1 --warmup 0.02 2>"$T/prof.err" &
prof=$!
bin/accelopt consume -b "$B" accelopt.results -n 2 --idle 60 >"$T/results.jsonl" 2>/dev/null
ok $? "the profiler consumes kernels and produces results"
cp "$T/results.jsonl" "$RESULTS/kafka-results.jsonl"
[ "$(grep -c '"status":"ok"' "$T/results.jsonl")" -eq 2 ]; ok $? "both measured ok"
bin/accelopt consume -b "$B" accelopt.dlq -n 1 --idle 30 >"$T/dlq.jsonl" 2>/dev/null
grep -q '"stage":"profiler"' "$T/dlq.jsonl" && grep -q '"reason":"not valid JSON' "$T/dlq.jsonl" &&
    grep -q '"source_topic":"accelopt.kernels.cpu"' "$T/dlq.jsonl"
ok $? "a malformed message goes to accelopt.dlq with the reason and its topic"
cp "$T/dlq.jsonl" "$RESULTS/kafka-dlq.jsonl"
kill -TERM $prof
wait $prof
ok $? "SIGTERM stops the stage cleanly (exit 0)"

# a restarted stage in the same group does not redo what was committed
sed -n 1p "$T/kernels.jsonl" | sed 's/"kernel:run-t:1:0.0.0"/"kernel:run-t:1:again"/' |
    bin/accelopt produce -b "$B" accelopt.kernels.cpu 2>/dev/null
bin/accelopt-profiler --brokers "$B" $FAST --budget 0.1 --warmup 0.02 --log info 2>"$T/prof2.err" &
prof=$!
bin/accelopt consume -b "$B" accelopt.results -n 3 --idle 60 >"$T/results2.jsonl" 2>/dev/null
for _ in $(seq 50); do grep -q "kernel:run-t:1:again" "$T/prof2.err" && break; sleep 0.1; done
sleep 1
kill -TERM $prof
wait $prof
[ "$(grep -c "kernel:run-t" "$T/prof2.err")" -eq 1 ] && grep -q "kernel:run-t:1:again" "$T/prof2.err"
ok $? "after a restart only the new kernel is profiled (offsets were stored)"

# the planner in Kafka mode, keyed by run
$M tests/msgs.py candidate matmul - '{"plans": 3}' | bin/accelopt produce -b "$B" accelopt.candidates 2>/dev/null
bin/accelopt-planner --brokers "$B" $FAST 2>/dev/null &
plan=$!
bin/accelopt consume -b "$B" accelopt.plans -n 3 --idle 60 >"$T/plans.jsonl" 2>/dev/null
ok $? "the planner consumes candidates and produces plans"
kill -TERM $plan
wait $plan

# librdkafka settings: refused by name, the value never printed
bin/accelopt-profiler --brokers "$B" -X no.such.setting=S3CRETVALUE </dev/null >/dev/null 2>"$T/x.err"
[ $? -eq 2 ] && grep -q "refused the setting 'no.such.setting'" "$T/x.err" && ! grep -q S3CRETVALUE "$T/x.err"
ok $? "a bad -X setting exits 2 naming the key, not the value"
# --topic-prefix: only what a topic name may hold, and only with a cluster
bad=0
for cmd in "bin/accelopt-profiler --brokers $B" "bin/accelopt consume -b $B accelopt.runs" \
    "bin/accelopt broker --brokers $B" "bin/accelopt run matmul --brokers $B"; do
    # shellcheck disable=SC2086
    $cmd --topic-prefix 'team 1/../' </dev/null >/dev/null 2>"$T/tp.err"
    [ $? -eq 2 ] && grep -q "topic-prefix 'team 1/../' holds a character no Kafka topic may" "$T/tp.err" || bad=$((bad + 1))
done
ok $bad "a --topic-prefix with a character no topic may hold: usage error in a stage, consume, broker and run"
bin/accelopt run matmul --topic-prefix team1. --out "$T/tp-run" </dev/null >/dev/null 2>"$T/tp2.err"
[ $? -eq 2 ] && grep -q "it goes with --brokers" "$T/tp2.err" && [ ! -e "$T/tp-run" ]
ok $? "run --topic-prefix without --brokers: usage error, nothing made"
bin/accelopt consume -b "$B" accelopt.runs -n 1 --idle 1 >/dev/null 2>&1
[ $? -eq 1 ]; ok $? "consume gives up after its idle time"
