# 93-concurrency.sh - model calls in flight (issue 28): `accelopt run` keeps
# up to --model-concurrency calls in flight to a slow scripted server, all
# roles together, never more; and a 429 with Retry-After pauses every
# caller, not only the one that was told
. tests/cli/helpers.sh
ensure_calibration
M=/usr/bin/python3
export ACCELOPT_BUDGET=0.05 ACCELOPT_WARMUP=0.01 # these runs test flow, not speed

$M tests/msgs.py knob nkibench/matmul/baseline.c BLOCK_N 256 >"$T/fast.c"
script() { # script EXEC-STEPS-JSON: plans differ (each call told the earlier titles)
    $M - "$T/fast.c" "$1" <<'PY'
import json, sys
fast = open(sys.argv[1]).read()
summary = open("tests/replies/summary-01-format.md").read()
plans = ["Plan %s: widen the j tile to %d columns." % (c, 64 * (i + 1)) for i, c in enumerate("ABCDEFGH")]
steps = json.loads(sys.argv[2])
for s in steps:
    if s.pop("kernel", False):
        s["content"] = "```c\n" + fast + "```"
print(json.dumps({"plan-m": [{"choose": plans, "delay": 1.0}], "exec-m": steps,
                  "sum-m": [{"content": summary, "delay": 0.5}]}))
PY
}
models() {
    env ACCELOPT_LLM_URL=$LLM_URL ACCELOPT_PLANNER_MODEL=plan-m ACCELOPT_EXECUTOR_MODEL=exec-m \
        ACCELOPT_SUMMARIZER_MODEL=sum-m ACCELOPT_LLM_KEY=sk-concurrency-0001 "$@"
}

# --- at most C in flight, and C reached ----------------------------------
# one planner (6 plans, 1 s each) feeds executors that take 2 s a plan (2
# samples of 1 s): the work could keep 4 or more calls busy, the cap is 3
start_llm cap "$(script '[{"kernel": true, "delay": 1.0}]')"
ACCELOPT_LOG=info models bin/accelopt run matmul --iters 1 --beam 1 --plans 6 --samples 2 --topk 2 -j 3 --json \
    --out "$T/r1" >"$T/r1.jsonl" 2>"$T/r1.err"
run_ended $?; ok $? "accelopt run -j 3 finishes against a slow model server"
grep -q 'model calls in flight at most: 1 planning, 6 writing kernels' "$T/r1.err"
ok $? "it starts a planner for its one candidate and an executor per plan (twice the cap, six plans)"
$M - "$LLM_LOG" "$T/r1.jsonl" <<'PY'
import json, sys
reqs = [json.loads(l) for l in open(sys.argv[1])]
peak = max(r["inflight"] for r in reqs)
d = json.loads(open(sys.argv[2]).readline())
assert d["stopped"] == "iterations" and d["kernels_evaluated"] == 13, d
# every kernel written; a plan whose executor lost its partition while the
# replicas were still joining is written again (delivery is at least once)
assert len([r for r in reqs if r["model"] == "exec-m"]) >= 12, len(reqs)
assert peak == 3, "peak %d calls in flight, the cap is 3" % peak
PY
ok $? "the server saw 3 calls at once at the peak, never more, and all 12 kernels were written"

# --- a 429 pauses everyone -------------------------------------------------
start_llm pause "$(script '[{"status": 429, "headers": {"Retry-After": "2"}}, {"kernel": true, "delay": 0.3}]')"
models bin/accelopt run matmul --iters 1 --beam 1 --plans 6 --samples 1 --topk 2 -j 4 --json \
    --out "$T/r2" >"$T/r2.jsonl" 2>"$T/r2.err"
run_ended $?; ok $? "accelopt run finishes after the server said 429 once"
$M - "$LLM_LOG" <<'PY'
import json, sys
reqs = [json.loads(l) for l in open(sys.argv[1])]
ex = [r for r in reqs if r["model"] == "exec-m"]
t429 = ex[0]["t"]  # the first executor call is the one refused
# calls made after the client heard the 429 (a few ms) wait out its 2 s
early = [r["t"] - t429 for r in reqs if 0.3 < r["t"] - t429 < 1.9]
assert not early, "calls %s s after the 429" % early
assert len(ex) >= 7, len(ex)  # the refused one again, and the other five
PY
ok $? "no call reached the server in the 2 s its Retry-After asked for, from any stage"
grep -q 'attempt 1 of 3 failed (HTTP 429' "$T/r2/logs/executor.log"
ok $? "the refused call is retried (the executor's log says so)"

# --- the budget holds with calls side by side -----------------------------
# plans come at once and cost 15 tokens, kernels take 1 s and cost 150:
# eight executors would start together and spend 1320 of a 1000 budget.
# Calls in flight are costed at their role's mean call before another
# goes, so the run ends within a call of its budget, as one at a time would
start_llm budget "$(script '[{"kernel": true, "delay": 1.0, "usage": [100, 50]}]' |
    $M -c 'import json,sys; s=json.load(sys.stdin); s["plan-m"][0].update(delay=0, usage=[10, 5]); print(json.dumps(s))')"
models bin/accelopt run matmul --iters 2 --beam 1 --plans 8 --samples 2 --topk 2 -j 8 --budget-tokens 1000 \
    --json --out "$T/r3" >"$T/r3.jsonl" 2>"$T/r3.err"
run_ended $?; ok $? "a run with a token budget and eight calls side by side finishes"
$M - "$T/r3/matmul/usage.json" "$LLM_LOG" <<'PY'
import json, sys
u = json.load(open(sys.argv[1]))["total"]
tokens = u["prompt"] + u["completion"]
peak = max(json.loads(l)["inflight"] for l in open(sys.argv[2]))
assert 1000 <= tokens <= 1150, "%d tokens spent of a 1000 budget" % tokens
assert peak > 1, peak
PY
ok $? "it spent its budget and at most one call more, with calls side by side"

# --- a candidate's plans in waves ------------------------------------------
# six plans at --plan-width 4: waves of 1, 2 and 3 calls at once (a wave is
# never larger than the plans before it plus one), each call told the
# titles of every plan of the earlier waves and which rank of idea to give
waves() { # waves DIR WIDTH
    start_llm "$1" "$(script '[{"kernel": true, "delay": 0.2}]')"
    ACCELOPT_PLAN_WIDTH=$2 models bin/accelopt run matmul --iters 1 --beam 1 --plans 6 --samples 1 --topk 2 \
        -j 8 --json --out "$T/$1" >"$T/$1.jsonl" 2>"$T/$1.err"
}
waves w4 4
run_ended $?; ok $? "a run whose planner goes four calls wide finishes"
$M - "$LLM_LOG" <<'PY'
import json, re, sys
plans = [json.loads(l) for l in open(sys.argv[1])]
plans = [r for r in plans if r["model"] == "plan-m"]
execs = len([r for r in [json.loads(l) for l in open(sys.argv[1])] if r["model"] == "exec-m"])
user = lambda r: r["messages"][-1]["content"]
told = [len(re.findall(r"^- Plan [A-H]:", user(r), re.M)) for r in plans]
ranks = sorted(int(m.group(1)) for r in plans for m in [re.search(r"would rank number (\d+)", user(r))] if m)
assert len(plans) == 6, len(plans)
assert sorted(told) == [0, 1, 1, 3, 3, 3], told  # waves of 1, 2, 3
assert ranks == [1, 1, 2, 2, 3], ranks
assert max(r["inflight"] for r in plans) >= 3, [r["inflight"] for r in plans]
# six different plans, each written (delivery is at least once: a plan whose
# executor lost its partition in a rebalance under load is written again)
written = {m.group(0) for r in [json.loads(l) for l in open(sys.argv[1])] if r["model"] == "exec-m"
           for m in [re.search(r"Plan [A-H]:", r["messages"][-1]["content"])] if m}
assert len(written) == 6 and execs >= 6, (written, execs)
PY
ok $? "at --plan-width 4 six plans go in waves of 1, 2 and 3, told the earlier waves' titles, all different"
waves w1 1
$M - "$LLM_LOG" <<'PY'
import json, re, sys
plans = [json.loads(l) for l in open(sys.argv[1])]
plans = [r for r in plans if r["model"] == "plan-m"]
told = [len(re.findall(r"^- Plan [A-H]:", r["messages"][-1]["content"], re.M)) for r in plans]
assert told == [0, 1, 2, 3, 4, 5], told
assert not any("would rank number" in r["messages"][-1]["content"] for r in plans)
PY
ok $? "at --plan-width 1 each plan call is told every plan before it, one after another"

# --- a stage that refuses its settings stops the run before any task -------
ACCELOPT_PLAN_WIDTH=99 bin/accelopt run matmul --iters 1 --out "$T/r5" >"$T/r5.out" 2>"$T/r5.err"
rc=$?
[ $rc -ne 0 ] && grep -q "planner refused its settings" "$T/r5.err" && ! grep -q "submitted" "$T/r5.err"
ok $? "a planner refusing --plan-width 99 ends the run before its task is sent (exit $rc)"

# --- kernels measured side by side -----------------------------------------
# two profilers share the kernels topic (one partition each); on a machine
# with fewer cores than that they share cores, and the run says so
ACCELOPT_LOG=info bin/accelopt run matmul --iters 1 --beam 1 --plans 4 --profilers 2 --json --out "$T/r4" \
    >"$T/r4.jsonl" 2>"$T/r4.err"
run_ended $?; ok $? "accelopt run --profilers 2 finishes"
$M - "$T/r4/logs/profiler.log" "$T/r4.jsonl" <<'PY'
import json, re, sys
counts = [int(m.group(1)) for m in re.finditer(r"accelopt-profiler: (\d+) kernels in", open(sys.argv[1]).read())]
d = json.loads(open(sys.argv[2]).readline())
# the baseline, four kernels, and the final head-to-head unless the baseline
# stayed best (it was measured whatever it found: head_to_head, no_gain or
# none; search: it never came)
assert len(counts) == 2 and all(c > 0 for c in counts), counts
h2h = d["speedup_method"] in ("head_to_head", "no_gain", "none")
# (each child head to head with its parent: one profile, issue 66)
assert sum(counts) == d["kernels_evaluated"] + h2h, (counts, d["kernels_evaluated"], d["speedup_method"])
PY
ok $? "both profilers measured kernels, and every kernel was measured once"
if [ "$(nproc)" -le 2 ]; then
    grep -q "2 profilers on $(nproc) cores: they share cores" "$T/r4.err"
    ok $? "on $(nproc) cores the run warns that two profilers share them"
else
    skip "two profilers on two cores are warned about" "this machine has $(nproc) cores"
fi
