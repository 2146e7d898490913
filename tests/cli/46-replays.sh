# 46-replays.sh - a local user without the key replays a genuine, signed
# message into a run's broker (issue 46, part 4): the embedded broker takes
# anyone on loopback, and a captured plan's signature still holds.  Each
# stage acts on a message id once per run; a copy at another place is a
# dead letter with the reason, and no model call is made for it.
. tests/cli/helpers.sh
ensure_calibration
M=/usr/bin/python3
export ACCELOPT_BUDGET=0.05 ACCELOPT_WARMUP=0.01
$M tests/msgs.py knob nkibench/matmul/baseline.c BLOCK_N 256 >"$T/fast.c"
# the run's own embedded broker: on the suite's shared Kafka broker a busy
# CI once gave the capturing consumer no plan before the run was over
ON_KAFKA= P=
# two plans; each kernel takes the executor's model 2 s, so the run is
# still going when the replays come
start_llm replay "$($M - "$T/fast.c" <<'PY'
import json, sys
fast = open(sys.argv[1]).read()
summary = open("tests/replies/summary-01-format.md").read()
print(json.dumps({"plan-m": [{"choose": ["Plan A: widen the j tile.", "Plan B: narrow the j tile."]}],
                  "exec-m": [{"content": "```c\n" + fast + "```", "delay": 2.0, "usage": [1000, 500]}],
                  "sum-m": [{"content": summary}]}))
PY
)"
ACCELOPT_LOG=info ACCELOPT_LLM_URL=$LLM_URL ACCELOPT_PLANNER_MODEL=plan-m ACCELOPT_EXECUTOR_MODEL=exec-m \
    ACCELOPT_SUMMARIZER_MODEL=sum-m ACCELOPT_LLM_KEY=sk-replay-0001 \
    bin/accelopt run matmul --iters 1 --beam 1 --plans 2 --samples 1 --fix-attempts 0 --json --out "$T/r" $ON_KAFKA \
    >"$T/r.jsonl" 2>"$T/r.err" &
run=$!
if [ -z "$ON_KAFKA" ]; then # the run's embedded broker: its address, once it says it
    for _ in $(seq 100); do grep -q 'brokers 127' "$T/r.err" && break; sleep 0.1; done
    B=$(sed -n 's/.*brokers \([0-9.:]*\),.*/\1/p' "$T/r.err" | head -1)
fi
# the local user reads one genuine plan off the broker and produces it ten
# times more, as it is (its signature included)
timeout 60 bin/accelopt consume -b "$B" ${P:+--topic-prefix "$P"} accelopt.plans -n 1 --idle 50 2>/dev/null | head -n 1 >"$T/plan.jsonl"
for _ in $(seq 10); do cat "$T/plan.jsonl"; done | bin/accelopt produce --unsigned -b "$B" ${P:+--topic-prefix "$P"} accelopt.plans 2>/dev/null
[ -s "$T/plan.jsonl" ] && grep -q '"sig":"hmac-sha256:' "$T/plan.jsonl"
ok $? "a genuine signed plan captured off the run's broker, and produced ten times more"
# ... and the run's own task message, once more (issue 68: its dead letter
# names the run, and the run took that for the selector's refusal to start
# it, and ended with exit 1)
timeout 60 bin/accelopt consume -b "$B" ${P:+--topic-prefix "$P"} accelopt.tasks -n 1 --idle 50 2>/dev/null | head -n 1 >"$T/task.jsonl"
bin/accelopt produce --unsigned -b "$B" ${P:+--topic-prefix "$P"} accelopt.tasks <"$T/task.jsonl" 2>/dev/null
wait $run
rc=$?
run_ended $rc; ok $? "the run finishes (exit $rc)"
grep -q '"sig":"hmac-sha256:' "$T/task.jsonl" &&
    grep -q "dead letter from 'accelopt.tasks': a replay" "$T"/r/logs/selector*.log &&
    ! grep -q "refused the run" "$T/r.err" && [ "$(field "$T/r/matmul/done.json" "r['stopped']")" = iterations ]
ok $? "its task message replayed: a dead letter, and the run goes on to its end (exit $rc)"
execs=$(grep -c '"exec-m"' "$LLM_LOG")
[ "$execs" -eq 2 ]; ok $? "two plans, two executor model calls: none for the replays ($execs)"
# (the executor logs each dead letter it writes, with its reason)
nd=$(cat "$T"/r/logs/executor*.log | grep -c "dead letter from 'accelopt.plans': a replay: message 'plan:.*' of run '.*' was taken to act on already")
[ "$nd" -eq 10 ]; ok $? "each replay is a dead letter saying so ($nd of 10)"
$M - "$T/r/matmul/usage.json" <<'PY'
import json, sys
u = json.load(open(sys.argv[1]))
ex = sum(r["completion"] for r in u["by"] if r["role"] == "executor")
assert ex == 2 * 500, ("the run paid for two kernels", ex)
PY
ok $? "and the run paid for two kernels"

# --- a message that comes again at its own place --------------------------
# (a broker or stage went down before its offset was committed: it is acted
# on again, by design) is answered from the run's store: the plans and the
# kernels written the first time go out again, and the model is not asked
# twice.  Pipe mode with --redis hands out both copies as Kafka would.
start_redis again
start_llm again "$($M tests/replies/distinct-plans.py "$T/fast.c")"
agents() {
    ACCELOPT_LOG=info ACCELOPT_LLM_URL=$LLM_URL ACCELOPT_PLANNER_MODEL=plan-m ACCELOPT_EXECUTOR_MODEL=exec-m \
        ACCELOPT_LLM_KEY=sk-again-0001 "$@" --redis "$REDIS_URL"
}
cand=$($M tests/msgs.py candidate matmul - '{"plans": 2, "samples": 2}')
printf '%s\n%s\n' "$cand" "$cand" | agents bin/accelopt-planner >"$T/again-plans.jsonl" 2>"$T/again-planner.err"
agents bin/accelopt-executor <"$T/again-plans.jsonl" >"$T/again-kernels.jsonl" 2>"$T/again-executor.err"
$M - "$T/again-plans.jsonl" "$T/again-kernels.jsonl" "$LLM_LOG" <<'PY'
import collections, json, sys
plans = [json.loads(l) for l in open(sys.argv[1])]
kernels = [json.loads(l) for l in open(sys.argv[2])]
calls = collections.Counter(json.loads(l)["model"] for l in open(sys.argv[3]))
# (a stage with calls in flight writes its outputs as they are done: in
# any order, each copy of a message started once the one before is done)
by_id = collections.defaultdict(list)
for m in plans + kernels:
    by_id[m["id"]].append(m.get("text", m.get("source")))
assert len(plans) == 4 and len(kernels) == 8 and len(by_id) == 6, sorted(by_id)
assert all(len(v) == 2 and v[0] == v[1] for v in by_id.values()), "each sent twice, the same both times"
assert len({p["text"] for p in plans}) == 2, "two plans that differ"
assert calls == {"plan-m": 2, "exec-m": 2 * 2}, calls  # once each: the second copies answered from the store
PY
ok $? "a candidate and its plans handed out twice: the same plans and kernels again, each model call made once"
grep -q "written before; sent again as it was, the model not asked twice" "$T/again-planner.err" &&
    grep -q "written before; sent again as it was, the model not asked twice" "$T/again-executor.err"
ok $? "the planner and the executor say so"
# ... a duplicate plan too (issue 68: only the plans that were not
# duplicates were written down, so each copy asked the model again for the
# duplicates): three plans, the model giving the same one each time, the
# candidate handed out twice: three calls, not five
start_redis dups
start_llm dups '{"plan-m": [{"content": "Plan A: widen the j tile to 256.\n\nSet BLOCK_N to 256."}]}'
cand=$($M tests/msgs.py candidate matmul - '{"plans": 3, "samples": 1}')
printf '%s\n%s\n' "$cand" "$cand" | agents bin/accelopt-planner >"$T/dups-plans.jsonl" 2>"$T/dups-planner.err"
calls=$(grep -c '"plan-m"' "$LLM_LOG")
[ "$calls" -eq 3 ] && [ "$(grep -c '"duplicate_of"' "$T/dups-plans.jsonl")" -eq 4 ]
ok $? "a candidate handed out twice with duplicate plans: each plan asked of the model once ($calls calls)"
# --- a stage acts only for runs in flight here (issue 68, part 2) ----------
# every run on a cluster shares its topics and groups: a signed message of a
# run this deployment's Redis does not hold as active (over, stopped, or
# another deployment's) is a dead letter, with no model call; one of a run
# in flight is acted on
start_redis live
bin/accelopt broker >"$T/lb.out" 2>"$T/lb.err" &
SERVICE_PIDS="$SERVICE_PIDS $!"
for _ in $(seq 100); do [ -s "$T/lb.out" ] && break; sleep 0.05; done
LB=$(head -1 "$T/lb.out")
start_llm live "$($M - "$T/fast.c" <<'PY'
import json, sys
print(json.dumps({"exec-m": [{"content": "```c\n" + open(sys.argv[1]).read() + "```"}]}))
PY
)"
ACCELOPT_LOG=info ACCELOPT_LLM_URL=$LLM_URL ACCELOPT_EXECUTOR_MODEL=exec-m ACCELOPT_LLM_KEY=sk-live-0001 \
    bin/accelopt-executor --brokers "$LB" --redis "$REDIS_URL" 2>"$T/live-exec.log" &
SERVICE_PIDS="$SERVICE_PIDS $!"
redis-cli -p "$REDIS_PORT" SADD accelopt:runs:active live-1 >/dev/null
for r in stale-1 live-1; do
    $M tests/msgs.py plan matmul "Widen the j tile." | sed "s/run-t/$r/g"
done | bin/accelopt produce -b "$LB" accelopt.plans 2>"$T/live-produce.err"
for _ in $(seq 600); do
    grep -q "dead letter from 'accelopt.plans': run 'stale-1' is not in flight here" "$T/live-exec.log" &&
        grep -q "kernel:live-1:1:0.0.1: " "$T/live-exec.log" && break
    sleep 0.1
done
sleep 1 # (a call for the stale plan would be in the log by now)
# (each of the live plan's samples is a call: as many calls as live kernels)
grep -q "dead letter from 'accelopt.plans': run 'stale-1' is not in flight here" "$T/live-exec.log" &&
    grep -q "kernel:live-1:1:0.0.0: kernel written" "$T/live-exec.log" && ! grep -q "kernel:stale-1" "$T/live-exec.log" &&
    [ "$(grep -c '"exec-m"' "$LLM_LOG")" -eq "$(grep -c "kernel:live-1:1:0\.0\.[0-9]*: " "$T/live-exec.log")" ]
rc=$?
ok $rc "a plan of a run not in flight here is a dead letter with no model call; one of a run in flight is acted on"
[ $rc -eq 0 ] || sed 's/^/# executor: /' "$T/live-exec.log" "$T/live-produce.err" | tail -20 >&2
echo "1..$n"
