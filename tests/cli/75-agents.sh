# 75-agents.sh - planner, executor and summarizer in pipe mode: the builtin
# model end to end through the profiler, the LLM path against the scripted
# server (code extraction, summaries, memory in the prompt), golden prompts,
# the memory cap and replays
. tests/cli/helpers.sh
ensure_calibration
export ACCELOPT_LLM_KEY=sk-agents-test-key-0000
export ACCELOPT_MACHINE=$PWD/tests/golden/machine.txt # golden prompts: the same machine everywhere
M=/usr/bin/python3
start_redis agents || ok 1 "redis starts"

# --- the builtin model, planner -> executor -> profiler -----------------
$M tests/msgs.py candidate matmul - '{"plans": 3, "samples": 2, "seed": 1}' >"$T/cand.jsonl"
bin/accelopt-planner <"$T/cand.jsonl" >"$T/b-plans.jsonl" 2>"$T/b-plans.err"
[ $? -eq 0 ] && [ "$(wc -l <"$T/b-plans.jsonl")" -eq 3 ]; ok $? "builtin planner: 3 plans"
! grep -q '"error"' "$T/b-plans.jsonl" && grep -q 'move: ' "$T/b-plans.jsonl"
ok $? "each a knob move"
bin/accelopt-executor <"$T/b-plans.jsonl" >"$T/b-kernels.jsonl" 2>/dev/null
[ "$(wc -l <"$T/b-kernels.jsonl")" -eq 6 ] && [ "$(grep -c '"source"' "$T/b-kernels.jsonl")" -eq 6 ]
ok $? "builtin executor: 2 kernels per plan"
[ "$($M -c "import json; print(len({json.loads(l)['id'] for l in open('$T/b-kernels.jsonl')}))")" -eq 6 ]
ok $? "with distinct ids by slot"
bin/accelopt-profiler --budget 0.1 --warmup 0.02 <"$T/b-kernels.jsonl" >"$T/b-results.jsonl" 2>/dev/null
cp "$T/b-plans.jsonl" "$T/b-kernels.jsonl" "$T/b-results.jsonl" "$RESULTS/"
[ "$(wc -l <"$T/b-results.jsonl")" -eq 6 ] && [ "$(grep -c '"status":"ok"' "$T/b-results.jsonl")" -eq 6 ]
ok $? "the profiler measures them: $(grep -c '"status":"ok"' "$T/b-results.jsonl") of 6 ok"
bin/accelopt-planner <"$T/cand.jsonl" 2>/dev/null | cmp -s - "$T/b-plans.jsonl"
ok $? "the builtin planner is deterministic for a seed"
ACCELOPT_TRACE=$T/trace.jsonl bin/accelopt-executor <"$T/b-plans.jsonl" >/dev/null 2>&1
$M - "$T/trace.jsonl" "$T/b-plans.jsonl" <<'PY'
import json, sys
tr = [json.loads(l) for l in open(sys.argv[1])]
ids = [json.loads(l)["id"] for l in open(sys.argv[2])]
assert [t["id"] for t in tr] == ids, tr
assert all(t["stage"] == "executor" and t["topic"] == "stdin" and t["created_ms"] == 0 and 0 < t["start_us"] <= t["end_us"] for t in tr), tr
PY
ok $? "ACCELOPT_TRACE: a line per message handled, with its id and when its handling began and ended"

# --- executor with a model: code out of real-looking replies ------------
# the model's kernel differs from the candidate (the same kernel back would be a duplicate)
$M tests/msgs.py knob nkibench/matmul/baseline.c BLOCK_N 256 >"$T/k256.c"
start_llm exec "$($M -c "
import json
code = open('$T/k256.c').read()
print(json.dumps({'*': [{'content': 'Here is the kernel with the plan applied.\n\n\`\`\`c\n' + code + '\`\`\`\n\nIt tiles k.'},
                        {'content': 'I would simply tile the loops; no code needed.'}]}))")"
$M tests/msgs.py plan matmul "Tile the k loop by 64." - '{"samples": 2}' |
    ACCELOPT_LLM_URL=$LLM_URL ACCELOPT_LLM_MODEL=exec-m bin/accelopt-executor \
    >"$T/l-kernels.jsonl" 2>"$T/l-kernels.err"
[ "$(wc -l <"$T/l-kernels.jsonl")" -eq 2 ]; ok $? "executor: K kernels for a plan"
[ "$(sed -n 1p "$T/l-kernels.jsonl" | $M -c 'import json,sys; print(json.load(sys.stdin)["source"] == open(sys.argv[1]).read())' "$T/k256.c")" = True ]
ok $? "the code block is taken out of the prose, exactly"
sed -n 1p "$T/l-kernels.jsonl" | $M -c 'import json,sys; k = json.load(sys.stdin); sys.exit(0 if k.get("notes") == "Here is the kernel with the plan applied." else 1)'
ok $? "what the executor said before its code is the kernel's notes (what it did beyond the plan)"
sed -n 2p "$T/l-kernels.jsonl" | grep -q '"error":"the reply had no code block"'
ok $? "a reply with no block is a failed slot with the reason"
$M -c "
import json
r = [json.loads(l) for l in open('$LLM_LOG')][0]
u = r['messages'][1]['content']
assert 'Tile the k loop by 64.' in u and 'void kernel(const float *lhs' in u and 'double' in u, u[:300]
assert 'tiny' in u and 'M=96' in u
" 2>"$T/l-prompt.err"
ok $? "the executor prompt shows the plan, the candidate, the problem and the sizes"
bin/accelopt-profiler --budget 0.1 --warmup 0.02 <"$T/l-kernels.jsonl" >"$T/l-results.jsonl" 2>/dev/null
cp "$T/l-kernels.jsonl" "$T/l-results.jsonl" "$RESULTS/"
[ "$(sed -n 1p "$T/l-results.jsonl" | grep -c '"status":"ok"')" -eq 1 ] &&
    [ "$(sed -n 2p "$T/l-results.jsonl" | grep -c '"status":"no_code"')" -eq 1 ]
ok $? "both slots end in a result: ok, and no_code"
grep -q '"model":"exec-m"' "$T/l-kernels.jsonl" && grep -q '"tokens":{"prompt":100' "$T/l-kernels.jsonl"
ok $? "kernels carry the model and the tokens"
# a failed plan still fills its K slots
$M -c "
import json; m = json.loads(open('$T/b-plans.jsonl').readline())
for k in ('text', 'source'): m.pop(k)
m['error'] = 'model call failed after 5 attempts: HTTP 502'
print(json.dumps(m))" | bin/accelopt-executor >"$T/f-kernels.jsonl" 2>/dev/null
[ "$(grep -c '"error":"no plan: model call failed' "$T/f-kernels.jsonl")" -eq 2 ]
ok $? "a failed plan gives K failed kernels, so every slot gets a result"

# --- summarizer with a model, into redis ---------------------------------
cp nkibench/matmul/baseline.c "$T/slow.c"
$M tests/msgs.py knob "$T/slow.c" BLOCK_K 128 >"$T/fast.c"
summary=$($M -c 'import json; print(json.dumps(open("tests/replies/summary-01-format.md").read()))')
start_llm summ "{\"*\": [{\"content\": $summary}, {\"content\": \"No optimization found.\"}]}"
sum_args="--redis $REDIS_URL --expn 16"
$M tests/msgs.py knob "$T/slow.c" BLOCK_K 64 >"$T/fast64.c"
{ $M tests/msgs.py pair matmul "$T/slow.c" "$T/fast.c" 1.3 + pair:run-t:1:0
  $M tests/msgs.py pair matmul "$T/slow.c" "$T/fast64.c" 1.05 + pair:run-t:1:1; } |
    ACCELOPT_LLM_URL=$LLM_URL ACCELOPT_LLM_MODEL=sum-m bin/accelopt-summarizer $sum_args \
    >"$T/exp.jsonl" 2>"$T/exp.err"
cp "$T/exp.jsonl" "$RESULTS/"
[ "$(sed -n 1p "$T/exp.jsonl" | $M -c 'import json,sys; r=json.load(sys.stdin); print(r["stored"], r["title"])')" = "True Tile the reduction loop to keep the rhs panel in L1" ]
ok $? "a summary is parsed and stored"
sed -n 2p "$T/exp.jsonl" | grep -q '"stored":false' && sed -n 2p "$T/exp.jsonl" | grep -q 'found no optimization'
ok $? "'no optimization found' is acked, not stored"
[ "$(rcli llen accelopt:memory:target:cpu)" -eq 1 ] && [ "$(rcli --scan --pattern 'accelopt:pairdone:*' | wc -l)" -eq 2 ]
ok $? "one memory item, two pair markers"
item_id=$(jl "$T/exp.jsonl" 0 "r['item_id']")
n0=$(llm_requests)
$M tests/msgs.py pair matmul "$T/slow.c" "$T/fast.c" 1.3 + pair:run-t:1:0 |
    ACCELOPT_LLM_URL=$LLM_URL ACCELOPT_LLM_MODEL=sum-m bin/accelopt-summarizer $sum_args >"$T/exp2.jsonl" 2>/dev/null
[ "$(llm_requests)" -eq "$n0" ] && cmp -s "$T/exp2.jsonl" <(sed -n 1p "$T/exp.jsonl") &&
    [ "$(rcli llen accelopt:memory:target:cpu)" -eq 1 ]
ok $? "a replayed pair is acked again, identically, with no model call and no new item"
$M tests/msgs.py pair matmul "$T/slow.c" "$T/fast.c" 1.31 + pair:run-u:2:0 |
    ACCELOPT_LLM_URL=$LLM_URL ACCELOPT_LLM_MODEL=sum-m bin/accelopt-summarizer $sum_args >"$T/exp3.jsonl" 2>/dev/null
[ "$(llm_requests)" -eq "$n0" ] && grep -q '"stored":false' "$T/exp3.jsonl" &&
    grep -q "summarized before, as $item_id" "$T/exp3.jsonl" && [ "$(rcli llen accelopt:memory:target:cpu)" -eq 1 ]
ok $? "the same two kernels paired again (another run): acked, not summarized twice, no model call, no new item"

# --- the planner reads the memory into its prompt ------------------------
start_llm plan '{"*": [{"content": "Use AVX-512 FMA on 16-wide rows."}]}'
$M tests/msgs.py candidate matmul - '{"plans": 1}' |
    ACCELOPT_LLM_URL=$LLM_URL ACCELOPT_LLM_MODEL=plan-m bin/accelopt-planner --redis "$REDIS_URL" \
    >"$T/m-plan.jsonl" 2>/dev/null
jl "$LLM_LOG" -1 "r['messages'][0]['content']" >"$T/m-system.txt"
grep -q "Experience 1: Tile the reduction loop to keep the rhs panel in L1" "$T/m-system.txt"
ok $? "the planner's system prompt holds the memory"
[ -n "$item_id" ] && [ "$(field "$T/m-plan.jsonl" "r['memory_seen']")" = "['$item_id']" ]; ok $? "and the plan records the items it saw"
# --- golden prompts (ACCELOPT_UPDATE_GOLDEN=1 rewrites them) --------------
golden() { # golden ROLE LOG [DIR]
    local role=$1 log=$2 dir=${3:-tests/golden/prompts} part i=0 bad=0
    for part in system user; do
        jl "$log" -1 "r['messages'][$i]['content']" >"$T/$role.$part.txt"
        if [ -n "${ACCELOPT_UPDATE_GOLDEN:-}" ]; then
            mkdir -p "$dir"
            cp "$T/$role.$part.txt" "$dir/$role.$part.txt"
        fi
        diff -u "$dir/$role.$part.txt" "$T/$role.$part.txt" >&2 || bad=1
        i=1
    done
    return $bad
}
golden planner "$LLM_LOG"; ok $? "planner prompts match tests/golden/prompts"
# without --machine: this machine, from /proc, /sys and its calibration
$M tests/msgs.py candidate matmul - '{"plans": 1}' |
    env -u ACCELOPT_MACHINE ACCELOPT_LLM_URL=$LLM_URL ACCELOPT_LLM_MODEL=plan-m bin/accelopt-planner \
    >/dev/null 2>&1
jl "$LLM_LOG" -1 "r['messages'][0]['content']" >"$T/auto-system.txt"
bw=$($M -c 'import json,sys; print("%.1f" % json.load(open(sys.argv[1]))["bandwidth_gbs"])' \
    "$ACCELOPT_STATE_DIR/calibration-cpu.json")
# the unannounced check shape as the problem states it (issue 55): the
# sizes that stay fixed, the relation between sizes, never zero
$M tests/msgs.py candidate rope_single_freq_apply - '{"plans": 1}' |
    ACCELOPT_LLM_URL=$LLM_URL ACCELOPT_LLM_MODEL=plan-m bin/accelopt-planner >/dev/null 2>&1
jl "$LLM_LOG" -1 "r['messages'][1]['content']" >"$T/rope-user.txt"
grep -q "each size but R, H (fixed) that can shrink is drawn between half the timed size and one less; no size is ever zero" "$T/rope-user.txt" &&
    grep -q "always R = 2\*H" "$T/rope-user.txt"
ok $? "the problem states the check shape: rope's R and H fixed, R = 2*H always, no size zero"
# and what the roofline counts for it at this size: rope at tiny (R=16,
# L=1024, H=8) moves 4*(2*R*L + 2*H*L) bytes, reads 128 KiB of inputs and
# writes 64 KiB, and does 3*R*L elementwise flops, an exp or a division one
grep -qF "What the roofline counts at this size: 192 KiB moved (bytes = 4*(2*R*L + 2*H*L): the inputs, 128 KiB in all, read once; the outputs, 64 KiB, written once)" "$T/rope-user.txt" &&
    grep -qF "49152 other flops (vec_flops = 3*R*L: each exp, division" "$T/rope-user.txt"
ok $? "the problem says what the roofline counts at this size, and what one elementwise flop is"
# caches where /sys says them; a VM without: from CPUID, said so, or no line, never a guess
if [ -r /sys/devices/system/cpu/cpu0/cache/index0/size ]; then
    caches() { grep -q "^Caches (as core 0 sees them, from /sys): L1d [0-9]* KiB" "$T/auto-system.txt"; }
else
    caches() { ! grep -q "^Caches" "$T/auto-system.txt" || grep -q "^Caches (CPUID" "$T/auto-system.txt"; }
fi
grep -q "^CPU: .*logical CPUs" "$T/auto-system.txt" && caches &&
    grep -q "^Measured here (accelopt calibrate, .*): memory bandwidth $bw GB/s" "$T/auto-system.txt" &&
    grep -q 'fp32 FMA peak' "$T/auto-system.txt" && ! grep -q '{{machine}}' "$T/auto-system.txt"
ok $? "the planner is told this machine: its CPU, caches and calibrated peaks ($(grep -m1 '^Caches' "$T/auto-system.txt" | cut -c1-80))"
$M tests/msgs.py candidate matmul - '{"plans": 1, "memory_scope": "task"}' |
    ACCELOPT_LLM_URL=$LLM_URL ACCELOPT_LLM_MODEL=plan-m bin/accelopt-planner --redis "$REDIS_URL" \
    >"$T/m-plan2.jsonl" 2>/dev/null
[ "$(field "$T/m-plan2.jsonl" "r['memory_seen']")" = "[]" ]; ok $? "scope 'task' reads the task's own memory"

start_llm ge "{\"*\": [{\"content\": \"\`\`\`c\\nvoid kernel(void) {}\\n\`\`\`\"}]}"
$M tests/msgs.py plan matmul "Tile the k loop by 64." - '{"samples": 1}' |
    ACCELOPT_LLM_URL=$LLM_URL ACCELOPT_LLM_MODEL=exec-m bin/accelopt-executor >/dev/null 2>&1
golden executor "$LLM_LOG"; ok $? "executor prompts match"
# a fix request: the fixer's prompts, one kernel for the named slot
$M -c 'import sys; s = open(sys.argv[1]).read(); print(s.replace("    for (", "    undeclared_acc += 1;\n    for (", 1), end="")' \
    "$T/k256.c" >"$T/broken.c"
$M tests/msgs.py fix matmul "Widen the j tile to 256 columns." "$T/broken.c" \
    "compile_error: the compiler or linker failed
kernel.c:16:5: error: 'undeclared_acc' undeclared (first use in this function)" |
    ACCELOPT_LLM_URL=$LLM_URL ACCELOPT_LLM_MODEL=exec-m bin/accelopt-executor >"$T/fix-k.jsonl" 2>/dev/null
golden fixer "$LLM_LOG"; ok $? "fixer prompts match"
[ "$(wc -l <"$T/fix-k.jsonl")" -eq 1 ] &&
    [ "$(field "$T/fix-k.jsonl" "r['slot'] + ' ' + str(r['attempt']) + ' ' + r['id']")" = "0.0.0 2 kernel:run-t:1:0.0.0/a2" ]
ok $? "a fix request yields one kernel for its slot, as its attempt"
$M tests/msgs.py fix matmul "Widen the j tile." "$T/broken.c" "compile_error" |
    $M -c 'import json,sys; m = json.load(sys.stdin); del m["failed_source"]; m["attempt"] = 10**12; print(json.dumps(m))' |
    ACCELOPT_LLM_URL=$LLM_URL ACCELOPT_LLM_MODEL=exec-m bin/accelopt-executor --dlq "$T/fix-dlq.jsonl" \
    >"$T/fix-bad.jsonl" 2>/dev/null
[ ! -s "$T/fix-bad.jsonl" ] && grep -q "a fix request needs its sample" "$T/fix-dlq.jsonl"
ok $? "a fix request without the failed kernel, or with an absurd attempt, is a dead letter"
start_llm gs '{"*": [{"content": "No optimization found."}]}'
$M tests/msgs.py pair matmul "$T/slow.c" "$T/fast.c" 1.3 + pair:golden |
    ACCELOPT_LLM_URL=$LLM_URL ACCELOPT_LLM_MODEL=s bin/accelopt-summarizer >/dev/null 2>&1
golden summarizer "$LLM_LOG"; ok $? "summarizer prompts match"
# a regression is told as one: the child is the slow kernel, the lesson what to avoid
$M tests/msgs.py pair matmul "$T/slow.c" "$T/fast.c" 1.3 - pair:regression |
    ACCELOPT_LLM_URL=$LLM_URL ACCELOPT_LLM_MODEL=s bin/accelopt-summarizer >/dev/null 2>&1
jl "$LLM_LOG" -1 "r['messages'][1]['content']" >"$T/regr-user.txt"
grep -q "This pair is a REGRESSION" "$T/regr-user.txt" && grep -q "begin the title with \"Avoid:\"" "$T/regr-user.txt" &&
    grep -q "The slow kernel (the child: after the step)" "$T/regr-user.txt" && ! grep -q "WIN" "$T/regr-user.txt"
ok $? "the summarizer is told a regression is one: the slow kernel is the step's, the lesson what to avoid"
awk '/^The slow kernel/,/^The fast kernel/' "$T/regr-user.txt" | grep -qx "latency_ns: 3380000" &&
    awk '/^The fast kernel/,0' "$T/regr-user.txt" | grep -qx "latency_ns: 2600000" &&
    [ "$(grep -c "^t_memory_ns: 42000$" "$T/regr-user.txt")" -eq 2 ] &&
    grep -q "which is 1.300x slower (give or take 3%: a gain of 0.30 against an uncertainty of 0.03)" "$T/regr-user.txt"
ok $? "the summarizer sees both kernels' profiles, and the gain and its uncertainty in one unit (issue 47)"
# a target's prompts (prompts/<target>): one of its runs' candidate and plan
# through the planner and the executor, against tests/golden/prompts-<target>;
# the model's block tagged for the target must become the kernel.
# target_prompts TARGET PLAN-TEXT EXEC-REPLY-JSON SOURCE-START [VAR=VALUE...]
target_prompts() {
    local t=$1 plan=$2 reply=$3 src=$4
    shift 4
    start_llm "${t}plan" "{\"*\": [{\"content\": \"$plan\"}]}"
    ACCELOPT_MSG_TARGET=$t $M tests/msgs.py candidate matmul - '{"plans": 1}' |
        env "$@" ACCELOPT_MACHINE="$PWD/tests/golden/machine-$t.txt" ACCELOPT_LLM_URL="$LLM_URL" \
        ACCELOPT_LLM_MODEL=plan-m bin/accelopt-planner >"$T/${t}plan.jsonl" 2>/dev/null
    golden planner "$LLM_LOG" "tests/golden/prompts-$t"; ok $? "$t planner prompts match tests/golden/prompts-$t"
    start_llm "${t}exec" "$reply"
    ACCELOPT_MSG_TARGET=$t $M tests/msgs.py plan matmul "$plan" - '{"samples": 1}' |
        env "$@" ACCELOPT_MACHINE="$PWD/tests/golden/machine-$t.txt" ACCELOPT_LLM_URL="$LLM_URL" \
        ACCELOPT_LLM_MODEL=exec-m bin/accelopt-executor >"$T/${t}exec.jsonl" 2>/dev/null
    golden executor "$LLM_LOG" "tests/golden/prompts-$t"
    [ $? -eq 0 ] && [ "$(field "$T/${t}exec.jsonl" "r['target'] + ' ' + r['source'][:${#src}]")" = "$t $src" ]
    ok $? "$t executor prompts match, and a block tagged for $t is the kernel of a $t run"
}
target_prompts cuda "Tile the k loop in shared memory." \
    '{"*": [{"content": "```cuda\nextern \"C\" void kernel(void) {}\n```"}]}' 'extern "C"' ACCELOPT_CUDA_ARCH=sm_90a
target_prompts trn "Keep the rows of x in SBUF across the N tiles." \
    '{"*": [{"content": "```python\nimport neuronxcc.nki as nki\n```"}]}' import ACCELOPT_TRN_PLATFORM=trn1
mkdir -p "$T/badprompts/cpu"
cp prompts/cpu/* "$T/badprompts/cpu/"
sed -i 's/{{memory}}//' "$T/badprompts/cpu/planner.system.txt"
$M tests/msgs.py candidate matmul - '{"plans": 1}' 2>/dev/null |
    ACCELOPT_LLM_URL=$LLM_URL ACCELOPT_LLM_MODEL=m bin/accelopt-planner --prompts "$T/badprompts" \
    >"$T/bad.out" 2>"$T/bad.err"
[ $? -eq 1 ] && grep -q "never show {{memory}}" "$T/bad.err" && [ ! -s "$T/bad.out" ]
ok $? "a template that drops the memory stops the stage (no dead letter, no plan)"

# --- the builtin model learns across tasks of the target -----------------
rcli del accelopt:memory:target:cpu >/dev/null
$M tests/msgs.py pair matmul "$T/slow.c" "$T/fast.c" 1.4 + pair:run-t:2:0 |
    bin/accelopt-summarizer --redis "$REDIS_URL" >"$T/bexp.jsonl" 2>/dev/null
[ "$(field "$T/bexp.jsonl" "r['title'] + ' ' + str(r['move']['step'])")" = "Raise BLOCK_K from 64 to 128 1" ]
ok $? "the builtin summarizer distils the knob move"
$M tests/msgs.py candidate lora - '{"plans": 4}' | bin/accelopt-planner --redis "$REDIS_URL" \
    >"$T/lora-plans.jsonl" 2>/dev/null
head -1 "$T/lora-plans.jsonl" | grep -q 'move: BLOCK_K +1'
ok $? "the builtin planner on another task tries the remembered move first"

# --- the memory cap ------------------------------------------------------
rcli del accelopt:memory:target:cpu >/dev/null
vals=(16 32 128 256) mvals=(4 8 32 64)
# eight different lessons: the same move twice (from another parent too) is one (memfold.h)
for i in 1 2 3 4 5 6 7 8; do
    knob=BLOCK_K v=${vals[$((i % 4))]}
    [ "$i" -gt 4 ] && knob=BLOCK_M v=${mvals[$((i % 4))]}
    $M tests/msgs.py knob "$T/slow.c" "$knob" "$v" >"$T/f$i.c"
    $M tests/msgs.py pair matmul "$T/slow.c" "$T/f$i.c" 1.$i + "pair:cap:$i" '{"expn": 5}'
done | bin/accelopt-summarizer --redis "$REDIS_URL" >"$T/cap.jsonl" 2>/dev/null
[ "$(wc -l <"$T/cap.jsonl")" -eq 8 ] && [ "$(rcli llen accelopt:memory:target:cpu)" -eq 5 ]
ok $? "ExpN caps the memory (8 stored, 5 kept)"
[ "$(rcli lindex accelopt:memory:target:cpu 0 | $M -c 'import json,sys; print(json.load(sys.stdin)["pair_id"])')" = pair:cap:8 ] &&
    [ "$(rcli lindex accelopt:memory:target:cpu 4 | $M -c 'import json,sys; print(json.load(sys.stdin)["pair_id"])')" = pair:cap:4 ]
ok $? "newest first; the oldest are dropped"

# --- a pair within its noise: the model may call it inconclusive -------------------
start_llm inc '{"*": [{"content": "**Inconclusive.** The 1.04x is within the 6% it may be off by."}]}'
before=$(rcli llen accelopt:memory:target:cpu)
$M tests/msgs.py knob "$T/slow.c" BLOCK_K 32 >"$T/f32.c"
$M tests/msgs.py pair matmul "$T/slow.c" "$T/f32.c" 1.04 + pair:inc:1 |
    ACCELOPT_LLM_URL=$LLM_URL ACCELOPT_LLM_MODEL=sum-m bin/accelopt-summarizer --redis "$REDIS_URL" \
    >"$T/inc.jsonl" 2>/dev/null
grep -q '"stored":false' "$T/inc.jsonl" && grep -q 'inconclusive (the difference may be noise)' "$T/inc.jsonl" &&
    [ "$(rcli llen accelopt:memory:target:cpu)" -eq "$before" ]
ok $? "a summary that says 'Inconclusive' is acked, not stored"
