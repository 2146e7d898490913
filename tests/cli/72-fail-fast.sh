# 72-fail-fast.sh - accelopt run's model settings (issue 29): taken as flags
# and from the config file with the environment's names, refused with their
# own message as usage errors before anything starts, and each model server
# asked once, before anything starts, whether it is there, takes the key and
# serves the model; keys never on the command line nor in the run's files
. tests/cli/helpers.sh
ensure_calibration
M=/usr/bin/python3
export ACCELOPT_BUDGET=0.05 ACCELOPT_WARMUP=0.01 # these runs test settings, not speed
unset ACCELOPT_LLM_URL ACCELOPT_LLM_MODEL ACCELOPT_LLM_KEY ACCELOPT_LLM_KEY_FILE

$M tests/msgs.py knob nkibench/matmul/baseline.c BLOCK_N 256 >"$T/fast.c"
script() { # script EXTRA-JSON: the three roles' replies, and EXTRA's keys (_key, _models)
    $M - "$T/fast.c" "$1" <<'PY'
import json, sys
fast = open(sys.argv[1]).read()
s = {"plan-m": [{"content": "Plan A: widen the j tile to 256 columns."}],
     "exec-m": [{"content": "```c\n" + fast + "```"}],
     "sum-m": [{"content": open("tests/replies/summary-01-format.md").read()}]}
s.update(json.loads(sys.argv[2]))
print(json.dumps(s))
PY
}
quick() { bin/accelopt run matmul --iters 1 --beam 1 --plans 1 --samples 1 --topk 1 "$@"; }
one_line() { [ "$(grep -c 'accelopt: error' "$1")" -eq 1 ] && [ "$(wc -l <"$1")" -le 2 ]; }

# --- each server asked before anything starts --------------------------------
port=$(free_port)
start=$(date +%s)
ACCELOPT_LLM_URL=http://127.0.0.1:$port/v1 ACCELOPT_LLM_MODEL=m quick --out "$T/dead" >/dev/null 2>"$T/dead.err"
rc=$?
took=$(($(date +%s) - start))
[ $rc -eq 1 ] && grep -q "the planner model server http://127.0.0.1:$port/v1 is unreachable" "$T/dead.err" &&
    one_line "$T/dead.err" && [ ! -e "$T/dead" ] && [ "$took" -le 15 ]
ok $? "a server that is not there: exit 1 in ${took} s, one line, nothing started ($(head -c 120 "$T/dead.err"))"

start_llm keyed "$(script '{"_key": "sk-right-key-0001", "_models": ["plan-m", "exec-m", "sum-m"]}')"
printf 'sk-wrong-key-0002\n' >"$T/wrong.key"
printf 'sk-right-key-0001\n' >"$T/right.key"
quick --llm-url "$LLM_URL" --llm-model plan-m --llm-key-file "$T/wrong.key" --out "$T/k" >/dev/null 2>"$T/k.err"
[ $? -eq 2 ] && grep -q "refuses the key (HTTP 401): Incorrect API key provided" "$T/k.err" &&
    one_line "$T/k.err" && ! grep -q 'sk-wrong' "$T/k.err" && [ ! -e "$T/k" ] && [ "$(llm_requests)" -eq 0 ]
ok $? "a server that refuses the key: exit 2 (the settings), one line without the key, no call made"
quick --llm-url "$LLM_URL" --llm-model big-m --llm-key-file "$T/right.key" --out "$T/m" >/dev/null 2>"$T/m.err"
[ $? -eq 2 ] && grep -q "has no model 'big-m' (it serves: plan-m, exec-m, sum-m)" "$T/m.err" && one_line "$T/m.err"
ok $? "a server without the model: exit 2 (the settings), and the models it has"

# --- settings refused as usage errors, before anything starts ------------------
quick --llm-model m --out "$T/u1" >/dev/null 2>"$T/u1.err"
[ $? -eq 2 ] && grep -q "the planner's model: model 'm' needs a server" "$T/u1.err" && [ ! -e "$T/u1" ]
ok $? "a model without a server: exit 2 with the reason"
quick --llm-url "$LLM_URL" --llm-model plan-m --llm-key-file "$T/no-such.key" --out "$T/u2" >/dev/null 2>"$T/u2.err"
[ $? -eq 2 ] && grep -q "cannot read the key file '$T/no-such.key'" "$T/u2.err" && [ ! -e "$T/u2" ]
ok $? "a key file that cannot be read: exit 2 with the reason"
quick --llm-url "$LLM_URL" --llm-model plan-m --llm-key sk-right-key-0001 --out "$T/u3" >/dev/null 2>"$T/u3.err"
[ $? -eq 2 ] && grep -q -- "--llm-key puts the key where every user of the machine can read it" "$T/u3.err" &&
    ! grep -q 'sk-right' "$T/u3.err"
ok $? "a key on the command line: exit 2, pointing to --llm-key-file"
quick --summarizer-url ftp://x --out "$T/u4" >/dev/null 2>"$T/u4.err"
[ $? -eq 2 ] && grep -q "the summarizer's model" "$T/u4.err"
ok $? "a role's own bad setting is named with its role"

# --- flags and the config file reach the stages ---------------------------------
printf 'llm-url = %s\nplanner-model = plan-m\nexecutor-model = exec-m\nsummarizer-model = sum-m\n' "$LLM_URL" \
    >"$T/models.conf"
ACCELOPT_LOG=info quick --config "$T/models.conf" --llm-key-file "$T/right.key" --json --out "$T/r1" \
    >"$T/r1.jsonl" 2>"$T/r1.err"
run_ended $?; ok $? "a run with its models from --config and the key file from a flag finishes"
$M - "$LLM_LOG" "$T/r1.jsonl" <<'PY'
import json, sys
reqs = [json.loads(l) for l in open(sys.argv[1])]
models = {r["model"] for r in reqs}
assert {"plan-m", "exec-m"} <= models, models
assert all(r["auth"] == "Bearer sk-right-key-0001" for r in reqs), "a call without the key"
d = json.loads(open(sys.argv[2]).readline())
assert d["kernels_evaluated"] >= 2, d
PY
ok $? "every role called its own model with the key from the file"
ACCELOPT_LLM_KEY=sk-right-key-0001 quick --llm-url "$LLM_URL" --planner-model plan-m --executor-model exec-m \
    --summarizer-model sum-m --out "$T/r2" >/dev/null 2>"$T/r2.err"
run_ended $?; ok $? "flags for the server and models, the key from the environment: the run finishes"
! grep -rq 'sk-right-key' "$T/r1" "$T/r2" && grep -q "llm-url = $LLM_URL" "$T/r2/run.conf"
ok $? "no key in the run's files (run.conf keeps the server, never the key)"

# --- a run in which every model kernel failed says why and exits 1 --------------------
start_llm junk "$(script '{"exec-m": [{"content": "I would rather not write this kernel."}]}')"
ACCELOPT_LLM_URL=$LLM_URL ACCELOPT_PLANNER_MODEL=plan-m ACCELOPT_EXECUTOR_MODEL=exec-m \
    ACCELOPT_SUMMARIZER_MODEL=sum-m quick --out "$T/j" >"$T/j.out" 2>"$T/j.err"
[ $? -eq 1 ] && grep -q "not one kernel the model wrote worked" "$T/j.err" &&
    grep -Eq '^matmul: of ([0-9]+) candidates, \1 went to the model; \1 of the \1 failed; most often \(\1\): no_code' "$T/j/summary.txt"
ok $? "every model kernel without code: exit 1, and the summary gives the count and the reason ($(grep -h '^matmul:' "$T/j/summary.txt" | head -c 100))"

# --- a server that fails mid-run: said on the terminal once, not per call ------------
start_llm down "$(script '{"exec-m": [{"status": 503, "error": {"message": "the GPU fell off the bus\u001b[2J"}}],
    "plan-m": [{"choose": ["Plan A: widen the j tile.", "Plan B: narrow the j tile.", "Plan C: unroll k."]}]}')"
ACCELOPT_LLM_URL=$LLM_URL ACCELOPT_PLANNER_MODEL=plan-m ACCELOPT_EXECUTOR_MODEL=exec-m \
    ACCELOPT_SUMMARIZER_MODEL=sum-m ACCELOPT_LLM_ATTEMPTS=1 \
    quick --plans 3 --fix-attempts 0 --out "$T/d" >"$T/d.out" 2>"$T/d.err"
rc=$?
said=$(grep -c "the executor's model calls fail: executor model call failed after 1 attempt: HTTP 503: the GPU fell off the bus" "$T/d.err")
[ $rc -eq 1 ] && [ "$said" -eq 1 ] && [ "$(grep -c '"exec-m"' "$LLM_LOG")" -ge 3 ] && ! grep -q 'kafka' "$T/d.err" &&
    ! grep -q "$(printf '\033')" "$T/d.err"
ok $? "three executor calls fail with 503: the terminal says so once ($said), without the server's escape sequence, the run exits 1"

# --- the planner is told what the run tried, and how it ended --------------------------
start_llm tried "$(script '{"exec-m": [{"content": "I would rather not write this kernel."}],
    "plan-m": [{"choose": ["Plan A: widen the j tile.", "Plan B: unroll k by 4.", "Plan C: block i by 8.", "Plan D: prefetch rhs."]}]}')"
ACCELOPT_LLM_URL=$LLM_URL ACCELOPT_PLANNER_MODEL=plan-m ACCELOPT_EXECUTOR_MODEL=exec-m \
    ACCELOPT_SUMMARIZER_MODEL=sum-m quick --iters 2 --plans 2 --fix-attempts 0 --out "$T/tr" >/dev/null 2>&1
$M - "$LLM_LOG" <<'PY'
import json, sys
reqs = [json.loads(l) for l in open(sys.argv[1])]
plans = [r["messages"][1]["content"] for r in reqs if r["model"] == "plan-m"]
first, later = plans[:2], plans[2:]
assert len(later) >= 1, len(plans)
assert not any("Steps already tried" in p for p in first), "iteration 1 has no history"
h = later[0]
assert "Steps already tried on this kernel in this run" in h, h[-800:]
assert "(iteration 1) -> no_code: the reply had no code block" in h, h[-800:]
PY
ok $? "the second iteration's planner is told the steps tried on its kernel and how each ended"
start_llm again "$(script '{"exec-m": [{"content": "I would rather not write this kernel."}],
    "plan-m": [{"content": "Plan A: widen the j tile.\nThen the rest of the plan."}]}')"
ACCELOPT_LLM_URL=$LLM_URL ACCELOPT_PLANNER_MODEL=plan-m ACCELOPT_EXECUTOR_MODEL=exec-m \
    ACCELOPT_SUMMARIZER_MODEL=sum-m quick --iters 2 --plans 1 --fix-attempts 0 --out "$T/ag" >/dev/null 2>&1
$M - "$LLM_LOG" "$T/ag/matmul/history.jsonl" <<'PY'
import json, sys
reqs = [json.loads(l) for l in open(sys.argv[1])]
hist = [json.loads(l) for l in open(sys.argv[2])]
assert len([r for r in reqs if r["model"] == "exec-m"]) == 1, "the repeated step went to the executor's model"
second = [h for h in hist if h["iter"] == 2]
assert second and second[0]["status"] == "duplicate" and "plan:" in second[0]["reason"], second
PY
ok $? "a step proposed again for the kernel it was tried on is a duplicate: no executor call"

bin/accelopt run --help >"$T/help.out"
grep -q -- '--llm-url URL' "$T/help.out" && grep -q -- '--llm-key-file FILE' "$T/help.out" &&
    grep -q -- '--planner-model NAME' "$T/help.out" && grep -q -- '--summarizer-url URL' "$T/help.out"
ok $? "run --help lists the model settings"

# --- brokers that do not answer: one line, a non-zero exit, bounded time ------------
# (nothing listens on the port: each says so after a second of refused connections)
port=$(free_port)
waiters=
for cmd in produce consume; do
    (
        start=$(date +%s)
        echo '{"type": "x"}' | bin/accelopt $cmd -b "127.0.0.1:$port" accelopt.kernels.cpu >/dev/null 2>"$T/$cmd.err"
        echo "$? $(($(date +%s) - start))" >"$T/$cmd.rc"
    ) &
    waiters="$waiters $!"
done
quick --brokers "127.0.0.1:$port" --redis redis://127.0.0.1:1 --out "$T/nb" >/dev/null 2>"$T/nb.err"
nb_rc=$?
# shellcheck disable=SC2086
wait $waiters
for cmd in produce consume; do
    read -r rc took <"$T/$cmd.rc"
    # a refused connection is said after a second of refusals, not the whole 10 s (issue 69)
    [ "$rc" -eq 1 ] && one_line "$T/$cmd.err" &&
        grep -q "cannot reach the brokers 127.0.0.1:$port within [0-9]* s: Connect to .*Connection refused" "$T/$cmd.err" &&
        [ "$took" -le 8 ]
    ok $? "$cmd with no broker there: exit 1 in ${took} s, one line ($(head -c 110 "$T/$cmd.err"))"
done
[ $nb_rc -eq 1 ] && one_line "$T/nb.err" && grep -q "cannot reach the brokers" "$T/nb.err" && [ ! -e "$T/nb" ]
ok $? "run --brokers with no broker there: exit 1, one line, nothing made"

# --- consume --idle counts from the group's join ------------------------------------
bin/accelopt broker >"$T/broker.out" 2>"$T/broker.err" &
SERVICE_PIDS="$SERVICE_PIDS $!"
for _ in $(seq 100); do [ -s "$T/broker.out" ] && break; sleep 0.05; done
B=$(head -1 "$T/broker.out")
echo '{"type": "note", "v": 1}' | bin/accelopt produce -b "$B" --unsigned accelopt.dlq 2>/dev/null
bin/accelopt consume -b "$B" accelopt.dlq -n 1 --idle 0.3 >"$T/idle.out" 2>"$T/idle.err"
[ $? -eq 0 ] && grep -q '"note"' "$T/idle.out"
ok $? "consume --idle 0.3 gets a waiting message: the group's join is not idle time"

# --- submit --wait with a task the stages cannot load: said, exit 1, no hang ----------
start_redis sub
env -u ACCELOPT_TASK_ROOTS bin/accelopt-selector --brokers "$B" --redis "$REDIS_URL" \
    -X session.timeout.ms=6000 -X heartbeat.interval.ms=500 2>"$T/sel.log" &
SERVICE_PIDS="$SERVICE_PIDS $!"
cp -r nkibench/silu "$T/mytask"
sed -i 's/"name": "silu"/"name": "mytask"/' "$T/mytask/task.json"
timeout 120 bin/accelopt submit "$T/mytask" --brokers "$B" --redis "$REDIS_URL" --wait --iters 1 \
    --out "$T/sub" >"$T/sub.out" 2>"$T/sub.err"
rc=$?
[ $rc -eq 1 ] && grep -q "mytask: the selector refused the run: .*outside the task roots" "$T/sub.err" &&
    grep -q '^mytask  *refused ' "$T/sub/summary.txt" && ! grep -qi 'nan' "$T/sub/summary.txt"
ok $? "submit --wait with a task the stages cannot load: the dead letter names the run, exit $rc, a 'refused' row without nan"
printf '%s\n' '{"type":"task","v":1,"id":"task:victim-1","run":"victim-1","task":"matmul","target":"cpu","iter":0,"size":"tiny"}' |
    bin/accelopt produce -b "$B" --unsigned accelopt.tasks 2>/dev/null
timeout 60 bin/accelopt consume -b "$B" accelopt.dlq --idle 5 >"$T/dlq.jsonl" 2>/dev/null
$M - "$T/dlq.jsonl" <<'PY'
import json, sys
d = [json.loads(l) for l in open(sys.argv[1])]
d = [x for x in d if x.get("type") == "dlq"]
mine = [x for x in d if "mytask" in x["payload"]]
forged = [x for x in d if "victim-1" in x["payload"]]
assert mine and all(x["run"].endswith("-mytask") and x["task"] == "mytask" for x in mine), mine
assert forged and all(x["run"] == "" and x["task"] == "" for x in forged), forged
PY
ok $? "a dead letter names the run of a signed message, and none of an unsigned one (which could name anyone's)"
