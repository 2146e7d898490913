# 90-loop.sh - the whole loop: `accelopt run` through the embedded broker and a
# private redis (builtin model, then a scripted model server), the pipe-mode
# scripts, a selector killed mid-run and resumed, and Ctrl-C
. tests/cli/helpers.sh
ensure_calibration
M=/usr/bin/python3
export ACCELOPT_BUDGET=0.1 ACCELOPT_WARMUP=0.02 # quick timing: these runs test flow, not speed
export ACCELOPT_LOG=info                          # the stage logs are read below

# every process a run started is gone: stages, redis-server (its dir names the run)
leftovers() { pgrep -f "$1" >/dev/null && pgrep -fa "$1" >&2 && return 1; return 0; }

# expected kernels: 1 baseline, then beam(i) * N * K per iteration
# --- accelopt run, builtin model -------------------------------------------
bin/accelopt run matmul silu --iters 2 --beam 2 --plans 2 --samples 1 --topk 2 --json \
    --out "$T/r1" >"$T/r1.jsonl" 2>"$T/r1.err"
run_ended $?; ok $? "accelopt run finishes (builtin model, embedded broker, private redis)"
cp "$T/r1.jsonl" "$RESULTS/run-done.jsonl"
[ "$(wc -l <"$T/r1.jsonl")" -eq 2 ]; ok $? "--json prints one done message per task"
$M - "$T/r1.jsonl" <<'PY'
import json, sys, jsonschema
schema = json.load(open("schemas/done.json"))
for line in open(sys.argv[1]):
    d = json.loads(line)
    jsonschema.validate(d, schema)
    assert d["stopped"] == "iterations" and d["iterations"] == 2, d["stopped"]
    # iteration 1 has 1 candidate, iteration 2 has 2 (beam 2): 1 + 2 + 4
    assert d["kernels_evaluated"] == 7, d["kernels_evaluated"]
    assert 0 < d["pct_of_peak"] <= 1, d["pct_of_peak"]
    # the search's figure is baseline / best; the one quoted is the final head-to-head's
    if d["speedup_method"] not in ("no_gain", "none"):  # else the result is the baseline, not the search's best
        assert abs(d["search_speedup"] - d["search_baseline_latency_ns"] / d["best"]["search_latency_ns"]) < 1e-9
    if d["speedup_method"] == "head_to_head":
        assert d["speedup_low"] <= d["speedup"] <= d["speedup_high"], d
    else:  # nothing beat it in the search, or the head-to-head found no gain
        assert d["speedup_method"] in ("baseline", "no_gain") and d["speedup"] == 1, d
    assert [h["iter"] for h in d["history"]] == [0, 1, 2]
    assert "source" in d["best"] and d["best"]["sha256"]
PY
ok $? "done messages are schema-valid with 7 kernels, 3 history entries, speedup = baseline / best"
for t in matmul silu; do
    [ -s "$T/r1/$t/best.c" ] && [ -s "$T/r1/$t/done.json" ] && [ "$(wc -l <"$T/r1/$t/history.jsonl")" -eq 7 ] || break
done
ok $? "runs/<id>/<task>/ holds best.c, done.json and all 7 kernels in history.jsonl"
$M - "$T/r1/matmul/history.jsonl" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
slots = [(r["iter"], r["slot"]) for r in rows]
assert len(set(slots)) == len(slots)
for r in rows[1:]:
    assert r["parent"] and r["plan"] and r["plan_text"] and r["status"] and r["source"], r
PY
ok $? "history: every kernel once, with its parent, plan and result"
$M - "$T"/r1/*/experiences.jsonl <<'PY'
import json, math, sys
for path in sys.argv[1:]:
    for line in open(path):
        e = json.loads(line)
        # a ratio of two medians is as uncertain as its terms together: the
        # child's spread counts as the parent's does
        assert math.isfinite(e["speedup_spread"]) and e["speedup_spread"] > 0, e
PY
ok $? "every lesson learned says how uncertain its speedup is"
grep -q '^matmul ' "$T/r1/summary.txt" && grep -q '^silu ' "$T/r1/summary.txt"
ok $? "summary.txt has a row per task"
grep -q 'pairs in, .* experiences out' "$T/r1/logs/summarizer.log" && ls "$T"/r1/redis/appendonlydir/*.aof >/dev/null
ok $? "the private redis kept an AOF"
leftovers "$T/r1"; ok $? "no stage or redis-server is left running"

# --- the scripted model server on the model path ---------------------------
# the executor's kernel is the baseline with BLOCK_N 256 (which is faster
# depends on the CPU: the test asserts the choice, not the ranking)
$M tests/msgs.py knob nkibench/matmul/baseline.c BLOCK_N 256 >"$T/fast.c"
start_llm loop "$($M - "$T/fast.c" <<'PY'
import json, sys
fast = open(sys.argv[1]).read()
summary = open("tests/replies/summary-01-format.md").read()
print(json.dumps({"plan-m": [{"content": "Widen the j tile to 256 columns.", "usage": [1000, 50]}],
                  "exec-m": [{"content": "```c\n" + fast + "```", "usage": [2000, 900]}],
                  "sum-m": [{"content": summary, "usage": [1500, 200]}]}))
PY
)"
ACCELOPT_LLM_URL=$LLM_URL ACCELOPT_PLANNER_MODEL=plan-m ACCELOPT_EXECUTOR_MODEL=exec-m \
ACCELOPT_SUMMARIZER_MODEL=sum-m ACCELOPT_LLM_KEY=sk-loop-secret-0001 \
    bin/accelopt run matmul --iters 1 --beam 1 --plans 2 --samples 1 --json --out "$T/r2" \
    >"$T/r2.jsonl" 2>"$T/r2.err"
run_ended $?; ok $? "accelopt run finishes with the model server on the model path"
$M - "$T/r2.jsonl" "$LLM_LOG" "$(sha256sum <"$T/fast.c" | cut -d" " -f1)" "$T/r2/matmul/history.jsonl" <<'PY'
import json, sys
d = json.loads(open(sys.argv[1]).readline())
reqs = [json.loads(l) for l in open(sys.argv[2])]
hist = [json.loads(l) for l in open(sys.argv[4])]
models = sorted(r["model"] for r in reqs)
# 2 plans, the second the same as the first: it ends as a duplicate slot
# and only 1 kernel is asked for
assert models.count("plan-m") == 2 and models.count("exec-m") == 1, models
assert sorted(h["status"] for h in hist if h["iter"] == 1) == ["duplicate", "ok"], hist
mine = [h for h in hist if h.get("sha256") == sys.argv[3]]
assert mine and all(h["status"] == "ok" for h in mine), "the model's kernel was measured correct"
base = hist[0]
# the model's kernel went head to head with the baseline (issue 66): it is
# the best where that found it faster, else the baseline is (a tie, or a
# pair voided on a busy machine)
faster = [h for h in mine if h["iter"] == 1 and h.get("against_parent", {}).get("verdict") == "faster"]
assert all("against_parent" in h for h in mine if h["iter"] == 1), mine
# (the result is the final head-to-head's: where it finds no gain over
# the baseline on a busy machine, the baseline is the result)
kept = faster and d["speedup_method"] == "head_to_head"
assert d["best"]["sha256"] == (faster[0]["sha256"] if kept else base["sha256"]), \
    ("the best is the kernel its head-to-head found faster, else the baseline", d["speedup_method"], len(faster))
assert d["tokens"]["prompt"] == 2 * 1000 + 1 * 2000 + 1500 * models.count("sum-m"), d["tokens"]
PY
ok $? "model path: 2 plans and 1 kernel asked for (the repeated plan a duplicate), the model's kernel measured correct, kept where its head-to-head found it faster, tokens add up"
! grep -rq 'sk-loop-secret-0001' "$T/r2" "$T/r2.jsonl" "$T/r2.err"
ok $? "the key appears in no log, result file or output"

# --- pipe mode --------------------------------------------------------------
printf '%s\n' '{"type":"task","v":1,"id":"task:p1","run":"p1","task":"matmul","target":"cpu","iter":0,"size":"tiny","config":{"beam":2,"plans":2,"samples":1,"iters":2,"topk":2}}' >"$T/task.jsonl"
ACCELOPT_LOG=warn pipeline/loop.sh "$T/task.jsonl" >"$T/loop.jsonl" 2>"$T/loop.err"
ok $? "pipeline/loop.sh runs the loop through a FIFO"
[ "$(field "$T/loop.jsonl" 'r["kernels_evaluated"]')" = 7 ]; ok $? "loop.sh: one done with 7 kernels"
cp "$T/task.jsonl" "$T/in.jsonl"
for pass in 1 2 3 4 5 6 7 8; do
    ACCELOPT_LOG=warn pipeline/iterate.sh "$T/st.json" <"$T/in.jsonl" >"$T/out.jsonl" 2>>"$T/it.err" || break
    mv "$T/out.jsonl" "$T/in.jsonl"
    [ -s "$T/in.jsonl" ] || break
done
[ "$(field "$T/st.done.jsonl" 'r["kernels_evaluated"]')" = 7 ] && [ ! -s "$T/in.jsonl" ]
ok $? "pipeline/iterate.sh, one pass at a time with a state file, ends with the same 7 kernels"

# the selector resends an outbox a crash left unsent (the crash came before
# the run left runs:active)
$M - "$T/st.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
assert "p1" not in s.get("runs:active", {}), "a finished run leaves runs:active"
s["run:p1"]["outbox_pending"] = "1"
s.setdefault("runs:active", {})["p1"] = "1"
json.dump(s, open(sys.argv[1], "w"))
PY
bin/accelopt-selector --state "$T/st.json" </dev/null >"$T/resent.jsonl" 2>/dev/null
grep -q '"type":"done"' "$T/resent.jsonl" && [ "$(field "$T/st.json" 'r["run:p1"]["outbox_pending"]')" = 0 ] &&
    [ "$(field "$T/st.json" 'r["runs:active"].get("p1")')" = "" ]
ok $? "a selector that starts resends the outbox a crash left pending"
# duplicates and strangers
printf '%s\n' '{"type":"result","v":1,"id":"x","run":"nope","task":"matmul","target":"cpu","iter":1,"kernel_id":"k","slot":"0.0.0","size":"tiny","status":"ok"}' \
    '{"type":"plan","v":1}' | bin/accelopt-selector --state "$T/st.json" --dlq "$T/sel.dlq" >/dev/null 2>&1
grep -q "not signed" "$T/sel.dlq" && grep -q "takes task, result and experience" "$T/sel.dlq"
ok $? "an unsigned result and a wrong type go to the dead letters"

# --- the run's redis and files are its owner's alone (issue 14, part 2) ------
bin/accelopt run matmul --iters 3 --beam 2 --plans 2 --samples 1 --topk 2 --json --out "$T/rp" \
    >"$T/rp.jsonl" 2>"$T/rp.err" &
rp=$!
for _ in $(seq 100); do [ -s "$T/rp/redis/redis.conf" ] && break; sleep 0.1; done
port=$(sed -n 's/^port //p' "$T/rp/redis/redis.conf")
pass=$(sed -n 's/^requirepass //p' "$T/rp/redis/redis.conf")
for _ in $(seq 100); do # the file is written before the server listens
    out=$(redis-cli -p "$port" keys '*' 2>&1)
    echo "$out" | grep -q "Connection refused" || break
    sleep 0.1
done
echo "$out" | grep -q NOAUTH; ok $? "the private redis refuses a client without the password ($out)"
out=$(redis-cli -p "$port" shutdown 2>&1); redis-cli --no-auth-warning -a "$pass" -p "$port" ping | grep -q PONG
ok $? "so a local user cannot shut it down"
[ ${#pass} -ge 32 ] && ! pgrep -f -- "$pass" >/dev/null; ok $? "its password is random and in no process's argv"
# a local user who reads the broker's address forges a result for the run
for _ in $(seq 100); do grep -q 'brokers 127' "$T/rp.err" && break; sleep 0.1; done
B=$(sed -n 's/.*brokers \([0-9.:]*\),.*/\1/p' "$T/rp.err" | head -1)
runid=$(sed -n 's/.*: run \([0-9a-f-]*\): redis.*/\1/p' "$T/rp.err" | head -1)-matmul
printf '{"type":"result","v":1,"id":"forged","run":"%s","task":"matmul","target":"cpu","iter":1,"kernel_id":"k-forged","slot":"0.0.0","size":"tiny","status":"ok","latency_ns":1,"speedup":7999,"source":"void kernel(const float *a, const float *b, float *c, int M, int K, int N) {} /* FORGED */","sig":"hmac-sha256:%064d"}\n' "$runid" 0 |
    bin/accelopt produce --unsigned -b "$B" accelopt.results 2>/dev/null
# and, with no key or another one, puts the run's baseline in at size tiny
# and a task, a candidate and a plan of its own (issue 25, part 2)
python3 - "$runid" >"$T/hostile.jsonl" <<'PY'
import json, sys
run = sys.argv[1]
env = dict(v=1, run=run, task="matmul", target="cpu")
src = open("nkibench/matmul/baseline.c").read()
print(json.dumps(dict(env, type="kernel", id="kernel:%s:0:0.0.0" % run, iter=0, size="tiny", slot="0.0.0", source=src)))
print(json.dumps(dict(env, type="task", id="task:hostile", run="hostile-run", iter=0, size="tiny")))
print(json.dumps(dict(env, type="candidate", id="candidate:hostile", iter=1, kernel_id="k", source=src, sha256="0" * 64, latency_ns=1)))
print(json.dumps(dict(env, type="plan", id="plan:hostile", iter=1, candidate_id="k", candidate_sha256="0" * 64, index=0, text="t", source=src)))
PY
printf '%064x\n' 7 >"$T/other.key"; chmod 600 "$T/other.key"
for topic in accelopt.kernels.cpu accelopt.tasks accelopt.candidates accelopt.plans; do
    sed -n "$(echo "$topic" | sed 's/accelopt.kernels.cpu/1/; s/accelopt.tasks/2/; s/accelopt.candidates/3/; s/accelopt.plans/4/')p" "$T/hostile.jsonl" >"$T/h1.jsonl"
    bin/accelopt produce --unsigned -b "$B" "$topic" <"$T/h1.jsonl" 2>/dev/null
    ACCELOPT_SIGN_KEY_FILE=$T/other.key bin/accelopt produce -b "$B" "$topic" <"$T/h1.jsonl" 2>/dev/null
done
bin/accelopt consume -b "$B" accelopt.dlq -n 9 --idle 20 2>/dev/null >"$T/rp.dlq"
grep -q 'signature does not match' "$T/rp.dlq"; ok $? "a forged result sent to the run's broker goes to the dead letters"
[ "$(grep -c '"reason":"not signed' "$T/rp.dlq")" = 4 ] && [ "$(grep -c 'signature does not match' "$T/rp.dlq")" = 5 ]
ok $? "a kernel, a task, a candidate and a plan without the key or with another go to the dead letters ($(grep -o '"stage":"[a-z]*","reason":"[^"]*' "$T/rp.dlq" | cut -c1-60 | sort | uniq -c | tr '\n' ';'))"
wait $rp; run_ended $?; ok $? "the run finishes"
! grep -q FORGED "$T/rp/matmul/best.c" && python3 -c "import json,sys; d=json.loads(open(sys.argv[1]).readline()); sys.exit(0 if d['speedup'] < 100 and d['kernels_evaluated'] == 11 else 1)" "$T/rp.jsonl"
ok $? "and it did not enter the run: best.c is a measured kernel, every slot counted once"
[ "$(stat -c %a "$T/rp" "$T/rp/logs" "$T/rp/redis" | sort -u)" = 700 ] &&
    [ "$(stat -c %a "$T/rp"/logs/*.log "$T/rp/redis/redis.conf" | sort -u)" = 600 ]
ok $? "the run directory, logs and redis are 0700, the logs and the redis config 0600"
! grep -rq -- "$pass" "$T/rp/logs" "$T/rp.err" "$T/rp.jsonl"; ok $? "the password appears in no log"

# --- a selector killed -9 mid-run: supervised restart, resumed from redis ---
bin/accelopt run matmul --iters 3 --beam 2 --plans 2 --samples 1 --topk 2 --json --out "$T/r3" \
    >"$T/r3.jsonl" 2>"$T/r3.err" &
run=$!
for _ in $(seq 600); do grep -q 'iteration 2, ' "$T/r3/logs/selector.log" 2>/dev/null && break; sleep 0.05; done
pkill -9 -P $run -f "accelopt-selector.*--redis" 2>/dev/null # this run's (tests run side by side)
wait $run; run_ended $?
ok $? "the run finishes after its selector was killed -9"
grep -q 'selector was killed by signal 9; restarting' "$T/r3.err"; ok $? "accelopt run restarted the selector"
[ "$(field "$T/r3.jsonl" 'r["kernels_evaluated"]')" = 11 ] &&
    [ "$(wc -l <"$T/r3/matmul/history.jsonl")" -eq 11 ]
ok $? "every slot counted once: 11 kernels (1 + 2 + 4 + 4)"

# --- Ctrl-C: everything stops, partial results are written ------------------
bin/accelopt run matmul silu --iters 50 --out "$T/r4" >"$T/r4.out" 2>"$T/r4.err" &
run=$!
for _ in $(seq 600); do grep -q 'iteration 1 closed' "$T/r4/logs/selector.log" 2>/dev/null && break; sleep 0.05; done
kill -INT $run
wait $run
[ $? -eq 130 ]; ok $? "SIGINT stops accelopt run with status 130"
grep -q '"stopped":	"interrupted"' "$T/r4/matmul/done.json" && [ -s "$T/r4/matmul/best.c" ] &&
    grep -q '^matmul ' "$T/r4/summary.txt"
ok $? "the partial results are written"
# a stopped run keeps what it measured (issue 53): the best it reports is
# the fastest kernel measured ok, though its iteration never closed
python3 - "$T/r4/matmul/done.json" "$T/r4/matmul/history.jsonl" "$T/r4/matmul/best.c" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
rows = [json.loads(l) for l in open(sys.argv[2]) if l.strip()]
ok = [r for r in rows if r.get("status") == "ok" and r.get("latency_ns")]
fastest = min(ok, key=lambda r: r["latency_ns"])
best = d.get("best") or {}
good = best.get("latency_ns") == fastest["latency_ns"] and open(sys.argv[3]).read() == best.get("source")
if not good:
    print("# best %s, fastest measured %s" % (best.get("latency_ns"), fastest["latency_ns"]))
sys.exit(0 if good else 1)
PY
ok $? "a stopped run's best is the fastest kernel it measured, written as best.c"
sleep 0.5
leftovers "$T/r4"; ok $? "no stage, redis-server or broker is left running"
