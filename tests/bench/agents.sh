#!/bin/bash
# agents.sh - the agents' mechanics with the scripted model server
# (tests/llm_server.py), as docs/BENCHMARKS.md reports them:
#   1. distinct plans per candidate, the paper's independent calls against
#      the distinct mode, for a model that heeds "not one of these" and for
#      one that repeats itself whatever it is told;
#   2. the fix loop on a corpus of realistic broken kernels: how each is
#      classified, whether the diagnostics the model is shown name the fault,
#      and whether the slot ends ok when the model answers with a fix.
# A scripted model only shows what the system does with replies; how often
# a real model repeats itself or fixes its kernel can only be measured
# against a real model.
#
#   tests/bench/agents.sh [PLANS]      (PLANS per candidate, default 4)
set -u
cd "$(dirname "$0")/../.."
PLANS=${1:-4}
T=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$T"' EXIT
export ACCELOPT_BUDGET=0.1 ACCELOPT_WARMUP=0.02 ACCELOPT_STATE_DIR=${ACCELOPT_STATE_DIR:-$T/state}
M=/usr/bin/python3
[ -f "$ACCELOPT_STATE_DIR/calibration-cpu.json" ] || bin/accelopt calibrate --bw-mib 64 >/dev/null 2>&1

start_llm() { # start_llm NAME SCRIPT-JSON: sets LLM_URL and LLM_LOG
    local dir=$T/llm-$1
    mkdir -p "$dir"
    printf '%s\n' "$2" >"$dir/script.json"
    LLM_LOG=$dir/requests.jsonl
    : >"$LLM_LOG"
    $M tests/llm_server.py "$dir/script.json" "$dir/port" "$LLM_LOG" 2>"$dir/err" &
    for _ in $(seq 100); do [ -s "$dir/port" ] && break; sleep 0.05; done
    LLM_URL=http://127.0.0.1:$(cat "$dir/port")/v1
}
model_run() { # model_run OUT [run options...]
    local out=$1
    shift
    ACCELOPT_LLM_URL=$LLM_URL ACCELOPT_PLANNER_MODEL=plan-m ACCELOPT_EXECUTOR_MODEL=exec-m \
    ACCELOPT_SUMMARIZER_MODEL=sum-m ACCELOPT_LLM_KEY=sk-bench \
        bin/accelopt run matmul --iters 1 --beam 1 --samples 1 --json --out "$T/$out" "$@" \
        >"$T/$out.jsonl" 2>"$T/$out.err" || echo "run $out failed: $(tail -1 "$T/$out.err")" >&2
}
reply() { $M -c 'import json,sys; print(json.dumps("```c\n" + open(sys.argv[1]).read() + "```"))' "$1"; }

$M tests/msgs.py knob nkibench/matmul/baseline.c BLOCK_N 256 >"$T/fast.c"
SUMMARY=$($M -c 'import json; print(json.dumps(open("tests/replies/summary-01-format.md").read()))')
IDEAS=$($M -c 'import json; print(json.dumps(["Widen the j tile to 256 columns.\nreuse rhs rows.",
  "Unroll the k loop by 4.\nfewer branches.", "Hoist the row pointers.\nfewer address computations.",
  "Vectorize the j loop with AVX-512.\n16 lanes.", "Block for L2 with BLOCK_K 256.\nfewer misses.",
  "Swap to the i-j-k order.\naccumulate in a register."]))')

echo "== distinct plans per candidate ($PLANS plan calls, 1 candidate)"
printf '%-34s %-12s %9s %15s\n' "scripted model" "plan mode" "distinct" "executor calls"
for model in heeds repeats; do
    if [ $model = heeds ]; then step="{\"choose\": $IDEAS}"; else step="{\"content\": \"Widen the j tile to 256 columns.\"}"; fi
    for mode in independent distinct; do
        start_llm "$model-$mode" "{\"plan-m\": [$step], \"exec-m\": [{\"content\": $(reply "$T/fast.c")}], \"sum-m\": [{\"content\": $SUMMARY}]}"
        model_run "p-$model-$mode" --plans "$PLANS" --plan-mode $mode
        $M - "$T/p-$model-$mode/matmul/history.jsonl" "$LLM_LOG" "$model" "$mode" <<'PY'
import json, sys
hist = [json.loads(l) for l in open(sys.argv[1]) if json.loads(l)["iter"] == 1]
plans = {h["plan_text"] for h in hist if h.get("plan_text")}
calls = sum(1 for l in open(sys.argv[2]) if json.loads(l)["model"] == "exec-m")
what = {"heeds": "heeds 'a different idea'", "repeats": "repeats itself whatever it is told"}
print("%-34s %-12s %5d of %d %15d" % (what[sys.argv[3]], sys.argv[4], len(plans), len(hist), calls))
PY
    done
done

echo
echo "== the fix loop on a corpus of broken kernels (--fix-attempts 2)"
# each broken kernel is the fast kernel with one realistic mistake
$M - "$T/fast.c" "$T" <<'PY'
import sys
s = open(sys.argv[1]).read()
out = sys.argv[2]
def w(name, t):
    assert t != s, name
    open("%s/broken-%s.c" % (out, name), "w").write(t)
first_for = s.index("    for (")
w("missing-include", s[:first_for] + "    const float floor_value = -FLT_MAX; /* needs <float.h> */\n    (void)floor_value;\n" + s[first_for:])
w("wrong-signature", s.replace("float *out, int M, int K, int N)", "float *out, long M, long K, long N)"))
w("off-by-one-tail", s.replace("int j1 = min_int(j0 + BLOCK_N, N);", "int j1 = min_int(j0 + BLOCK_N, N - 1);"))
w("wrong-reduction", s.replace("    memset(out, 0, sizeof(float) * (size_t)M * (size_t)N);\n", ""))
w("out-of-bounds", s.replace("out[(long)i * N + j] += a", "out[(long)i * N * 4096 + j] += a"))
PY
printf '%-18s %-14s %-70s %-6s %s\n' "broken kernel" "first verdict" "the fault as the model is told it (first line)" "fixed" "attempts"
fixed=0 n=0
for f in "$T"/broken-*.c; do
    name=$(basename "$f" .c)
    name=${name#broken-}
    start_llm "fix-$name" "{\"plan-m\": [{\"content\": \"Widen the j tile to 256 columns.\"}], \"exec-m\": [{\"content\": $(reply "$f")}, {\"content\": $(reply "$T/fast.c")}], \"sum-m\": [{\"content\": $SUMMARY}]}"
    model_run "f-$name" --plans 1 --fix-attempts 2
    line=$($M - "$T/f-$name/matmul/history.jsonl" "$LLM_LOG" "$name" <<'PY'
import json, sys
hist = [json.loads(l) for l in open(sys.argv[1]) if json.loads(l)["iter"] == 1]
h = hist[0]
reqs = [json.loads(l) for l in open(sys.argv[2]) if json.loads(l)["model"] == "exec-m"]
told = "-"
if len(reqs) > 1:
    u = reqs[1]["messages"][1]["content"]
    d = u[u.index("Why it failed:"):].split("\n")[2:]
    d = d[:d.index("```")] if "```" in d else d
    told = next((l for l in d if l.startswith("kernel.c:") and "error:" in l), d[0])
    told = told.split(": error: ")[-1] if told.startswith("kernel.c:") else told
first = h["fixes"][0]["status"] if h.get("fixes") else h["status"]
print("%-18s %-14s %-70s %-6s %d" % (sys.argv[3], first, told.strip()[:70], "yes" if h["status"] == "ok" else "no",
                                      h.get("attempts", 1)))
PY
)
    echo "$line"
    n=$((n + 1))
    case "$line" in *" yes "*) fixed=$((fixed + 1)) ;; esac
done
echo "fixed: $fixed of $n (a model that answers every fix request with a correct kernel)"
