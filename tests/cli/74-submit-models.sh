# 74-submit-models.sh - accelopt submit names a run's models (issue 29):
# names only, never a server or a key; a stage uses a run's model only when
# its operator lists it (--llm-models), and says why it refuses one; submit
# checks the names against what the deployment's stages serve before it
# sends anything.  With the scripted model server and the real broker.
. tests/cli/helpers.sh
ensure_calibration
M=/usr/bin/python3
export ACCELOPT_BUDGET=0.05 ACCELOPT_WARMUP=0.01 # these runs test the models asked, not speed
unset ACCELOPT_LLM_URL ACCELOPT_LLM_MODEL ACCELOPT_LLM_KEY ACCELOPT_LLM_KEY_FILE ACCELOPT_LLM_MODELS
FAST="-X session.timeout.ms=6000 -X heartbeat.interval.ms=500"

$M tests/msgs.py knob nkibench/matmul/baseline.c BLOCK_N 256 >"$T/fast.c"
start_llm models "$($M - "$T/fast.c" <<'PY'
import json, sys
fast = open(sys.argv[1]).read()
plan = [{"content": "Plan A: widen the j tile to 256 columns."}]
print(json.dumps({"plan-m": plan, "alt-plan-m": plan, "sneaky-m": plan,
                  "exec-m": [{"content": "```c\n" + fast + "```"}],
                  "sum-m": [{"content": open("tests/replies/summary-01-format.md").read()}],
                  "_models": ["plan-m", "alt-plan-m", "sneaky-m", "exec-m", "sum-m"]}))
PY
)"
start_redis models
bin/accelopt broker >"$T/broker.out" 2>"$T/broker.err" &
SERVICE_PIDS="$SERVICE_PIDS $!"
for _ in $(seq 100); do [ -s "$T/broker.out" ] && break; sleep 0.05; done
B=$(head -1 "$T/broker.out")
# the deployment: each role's server and model, and one more planner model
# its operator lets runs name
common="--brokers $B --redis $REDIS_URL $FAST --llm-url $LLM_URL"
for s in selector profiler; do
    bin/accelopt-$s --brokers "$B" --redis "$REDIS_URL" $FAST 2>"$T/$s.log" &
    SERVICE_PIDS="$SERVICE_PIDS $!"
done
bin/accelopt-planner $common --llm-model plan-m --llm-models ' alt-plan-m ' 2>"$T/planner.log" &
SERVICE_PIDS="$SERVICE_PIDS $!"
bin/accelopt-executor $common --llm-model exec-m 2>"$T/executor.log" &
SERVICE_PIDS="$SERVICE_PIDS $!"
bin/accelopt-summarizer $common --llm-model sum-m 2>"$T/summarizer.log" &
SERVICE_PIDS="$SERVICE_PIDS $!"
for _ in $(seq 200); do [ "$(rcli get accelopt:models:summarizer)" = sum-m ] &&
    [ -n "$(rcli get accelopt:models:planner)" ] && [ -n "$(rcli get accelopt:models:executor)" ] && break; sleep 0.05; done
[ "$(rcli get accelopt:models:planner)" = "plan-m,alt-plan-m" ] && [ "$(rcli get accelopt:models:executor)" = exec-m ]
ok $? "each role's stages say which models they serve (planner: $(rcli get accelopt:models:planner))"

sub() { timeout 120 bin/accelopt submit matmul --brokers "$B" --redis "$REDIS_URL" $FAST --iters 1 --beam 1 \
    --plans 1 --samples 1 --topk 1 --slot-deadline 60 "$@"; }
models_asked() { $M -c 'import json,sys; print(" ".join(sorted({json.loads(l)["model"] for l in open(sys.argv[1])})))' "$LLM_LOG"; }

# --- a run that names a model the planner serves: its calls ask for it ----------
sub --planner-model alt-plan-m --wait --out "$T/alt" >"$T/alt.out" 2>"$T/alt.err"
rc=$?
asked=" $(models_asked) "
run_ended $rc && [[ "$asked" == *" alt-plan-m "* && "$asked" == *" exec-m "* && "$asked" != *" plan-m "* ]]
ok $? "submit --planner-model alt-plan-m: the planner's calls ask the server for it, the executor its own (exit $rc; asked:$asked)"
$M -c 'import json,sys; c=json.load(open(sys.argv[1]))["config"]; assert c["models"] == {"planner": "alt-plan-m"}, c' "$T/alt/run.json"
ok $? "the run's record says which models it named"

# --- refused before anything is sent -----------------------------------------------
n0=$(llm_requests)
sub --planner-model other-m --out "$T/other" >"$T/other.out" 2>"$T/other.err"
[ $? -eq 2 ] && grep -q "the planner stages do not serve the model 'other-m' (they serve: plan-m,alt-plan-m)" "$T/other.err" &&
    [ ! -e "$T/other" ] && [ ! -s "$T/other.out" ]
ok $? "a model the planners do not serve: exit 2, what they serve, nothing sent and no run directory left"
sub --llm-model 'm Authorization: Bearer x' --out "$T/hdr" >/dev/null 2>"$T/hdr.err"
[ $? -eq 2 ] && grep -q "is not a model name" "$T/hdr.err" && [ ! -e "$T/hdr" ]
ok $? "a header put after a model name: not a model name, exit 2, nothing sent"
sub --llm-model 'http://evil.example/v1' --out "$T/url" >/dev/null 2>"$T/url.err"
[ $? -eq 2 ] && grep -q "do not serve the model 'http://evil.example/v1'" "$T/url.err" && [ ! -e "$T/url" ]
ok $? "a URL where a model name belongs: only ever a name asked of the stages' own server, and none serves it"
sub --llm-url http://evil.example/v1 --out "$T/url2" >/dev/null 2>"$T/url2.err"
[ $? -eq 2 ] && [ ! -e "$T/url2" ]
ok $? "submit takes no model server: the stages' own is the only one they call"
sleep 1
[ "$(llm_requests)" -eq "$n0" ]
ok $? "no model call came of the refused submissions"

# --- the stage checks every call: a list that says more than the stage serves ------
# (a replica with other settings said it last, or someone wrote the key)
rcli set accelopt:models:planner "plan-m,alt-plan-m,sneaky-m" >/dev/null
sub --planner-model sneaky-m --wait --out "$T/sneaky" >"$T/sneaky.out" 2>"$T/sneaky.err"
rc=$?
! grep -q '"model": *"sneaky-m"' "$LLM_LOG" && [ $rc -eq 1 ] &&
    grep -q "the run names the planner model 'sneaky-m', which this planner does not serve" "$T/sneaky.err" "$T/planner.log"
ok $? "a run naming a model the planner does not serve: no call asks for it, the reason said, exit $rc"

# --- a builtin stage stands in for no model a run names -----------------------------
$M - <<'PY' >"$T/cand.json"
import json
print(json.dumps({"type": "candidate", "v": 1, "id": "candidate:r-1:1:0", "run": "r-1", "task": "matmul",
                  "target": "cpu", "iter": 1, "size": "tiny", "rank": 0, "kernel_id": "kernel:r-1:0:0.0.0",
                  "sha256": "0" * 64, "latency_ns": 1000, "source": open("nkibench/matmul/baseline.c").read(),
                  "config": {"plans": 1, "models": {"planner": "gpt-big"}}}))
PY
bin/accelopt-planner --llm-model builtin <"$T/cand.json" >"$T/plan.jsonl" 2>"$T/plan.err"
[ "$(jl "$T/plan.jsonl" 0 "r.get('error', '')" | grep -c "names the planner model 'gpt-big'")" -eq 1 ]
ok $? "the builtin planner makes no plan for a run that names another model, and says so"
bin/accelopt-planner --llm-model builtin --llm-models alt >/dev/null 2>"$T/bl.err" </dev/null
[ $? -eq 2 ] && grep -q "is the builtin, which has none" "$T/bl.err"
ok $? "--llm-models on a builtin stage: a usage error"
