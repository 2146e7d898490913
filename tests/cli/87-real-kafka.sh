# 87-real-kafka.sh - the stages against a real Apache Kafka broker (4.x,
# KRaft, from Maven Central through `make kafka`; issue 58):
# pipeline/kafka/broker.sh starts and stops a one-node broker, `accelopt
# broker --brokers` makes the topics, kernels go through a profiler to
# results, and a whole run ends with every result and no model call twice
# though the broker is killed and started again three times, and two
# stages once, while it runs.  Nothing is left running.
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

# kernels in, results out; the profiler long-polls (5 s: issue 67), where
# on the embedded broker it polls every 5 ms
$M tests/msgs.py candidate matmul - '{"plans": 2, "samples": 1}' | bin/accelopt-planner 2>/dev/null |
    bin/accelopt-executor 2>/dev/null >"$T/kernels.jsonl"
bin/accelopt produce -b "$B" accelopt.kernels.cpu <"$T/kernels.jsonl" 2>/dev/null
ok $? "accelopt produce sends kernels to the real broker"
bin/accelopt-profiler --brokers "$B" --budget 0.1 --warmup 0.02 --log debug 2>"$T/prof.err" &
prof=$!
bin/accelopt consume -b "$B" accelopt.results -n 2 --idle 90 >"$T/results.jsonl" 2>/dev/null
[ "$(grep -c '"status":"ok"' "$T/results.jsonl")" -eq 2 ]
ok $? "the profiler consumes them and both results come back ok"
grep -q "a real broker: a 5 s idle fetch" "$T/prof.err"
ok $? "a stage facing a real broker long-polls for 5 s"
kill -TERM $prof; wait $prof
ok $? "SIGTERM stops the stage cleanly (exit 0)"

# a whole run against it, with the scripted model on every role: the
# broker killed (-9) and started again three times while it runs, the
# selector and the profiler killed (-9) between (accelopt run restarts
# them).  Every result still comes, the run ends, and no model call is
# made twice: every request to the model server differs from every other
# (each plan call is told the earlier titles, each kernel call its plan).
# The planner and the executor are not killed here: a call in flight when
# its stage dies is asked again, by design.
$M tests/msgs.py knob nkibench/matmul/baseline.c BLOCK_N 256 >"$T/fast.c"
start_llm k87 "$($M tests/replies/distinct-plans.py "$T/fast.c")"
start_redis run
ACCELOPT_LOG=info ACCELOPT_LLM_URL=$LLM_URL ACCELOPT_PLANNER_MODEL=plan-m ACCELOPT_EXECUTOR_MODEL=exec-m \
    ACCELOPT_SUMMARIZER_MODEL=sum-m ACCELOPT_LLM_KEY=sk-kafka-0001 \
    bin/accelopt run matmul --size tiny --iters 2 --beam 2 --plans 2 --samples 1 --brokers "$B" \
    --redis "$REDIS_URL" --json --out "$T/r1" >"$T/r1.jsonl" 2>"$T/r1.err" &
run=$!
# results said so far, whatever their status ("ID: STATUS (1.23 s)"): how
# many are ok depends on the machine's noise, how many come does not
results() { grep -c ' ([0-9.]* s)$' "$T/r1/logs/profiler.log" 2>/dev/null; }
until_results() { # until_results N: the run's profiler has said N results (or the run ended)
    for _ in $(seq 900); do
        [ "$(results)" -ge "$1" ] 2>/dev/null && return 0
        kill -0 $run 2>/dev/null || return 1
        sleep 0.2
    done
    return 1
}
k=0
for at in 1 2 3 4 5; do
    until_results $at
    kill -0 $run 2>/dev/null; alive=$?
    seen=$(results)
    case $at in
    2 | 4) # a stage, by its own broker's address: no other test's
        stage=$([ $at = 2 ] && echo selector || echo profiler)
        pkill -KILL -f "accelopt-$stage --brokers $B"
        ok $((alive + $?)) "the $stage killed (-9) mid-run, after $seen results" ;;
    *)
        k=$((k + 1))
        kill -KILL "$(cat "$KD/pid")" 2>/dev/null
        sleep 2
        B2=$(pipeline/kafka/broker.sh start "$KD" 2>>"$T/kafka-start.err")
        [ $alive -eq 0 ] && [ "$B2" = "$B" ]
        ok $? "the broker killed (-9) mid-run, after $seen results, and started again on its port and data ($k of 3)" ;;
    esac
done
wait $run
run_ended $?; ok $? "the run ends though its broker was killed three times and two stages once ($(tail -1 "$T/r1.err" | cut -c1-80))"
grep -q 'selector was killed by signal 9; restarting' "$T/r1.err" && grep -q 'profiler was killed by signal 9; restarting' "$T/r1.err"
ok $? "accelopt run restarted the selector and the profiler"
$M - "$T/r1.jsonl" "$T/r1/matmul/history.jsonl" "$LLM_LOG" <<'PY'
import collections, json, sys
done = [json.loads(l) for l in open(sys.argv[1])]
assert len(done) == 1 and done[0]["type"] == "done", done
d = done[0]
assert d["stopped"] == "iterations" and d["iterations"] == 2, d
rows = [json.loads(l) for l in open(sys.argv[2])]
slots = [(x["iter"], x["slot"]) for x in rows]
assert len(slots) == len(set(slots)) == d["kernels_evaluated"] >= 5, (slots, d["kernels_evaluated"])
reqs = [json.loads(l) for l in open(sys.argv[3])]
seen = collections.Counter(json.dumps([r["model"], r["messages"]], sort_keys=True) for r in reqs)
twice = [k[:120] for k, n in seen.items() if n > 1]
assert not twice, twice
by = collections.Counter(r["model"] for r in reqs)
assert by["plan-m"] >= 4 and by["exec-m"] >= 2, by  # two iterations' plans, and kernels for them
print("# model calls: %s; kernels %d" % (dict(by), d["kernels_evaluated"]))
PY
ok $? "its done counts every kernel, each slot once, and no model call was made twice"
# a cluster without the accelopt topics (a prefix of its own here): run
# --brokers makes them, as accelopt broker does, where every stage once
# waited a minute on its group (issue 69)
ACCELOPT_BUDGET=0.1 ACCELOPT_WARMUP=0.02 ACCELOPT_LOG=info bin/accelopt run matmul --size tiny --iters 1 \
    --brokers "$B" --topic-prefix fresh. --out "$T/fresh" >/dev/null 2>"$T/fresh.err"
rc=$?
run_ended $rc && grep -q "made [1-9][0-9]* accelopt topics on $B" "$T/fresh.err" && ! grep -q "had not joined" "$T/fresh.err"
ok $? "run --brokers on a cluster without the accelopt topics makes them, and the run ends (rc $rc)"
stop_kafka
! pgrep -f "$KD" >/dev/null
ok $? "broker.sh stop leaves no broker running"
