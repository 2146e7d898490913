#!/usr/bin/env bash
# concurrency.sh - model calls in flight against a scripted server whose
# every call takes LATENCY seconds (tests/llm_server.py), at the paper's
# shape: B=6, N=12, K=2, T=2, two tasks (matmul, silu) at tiny.  Prints the
# calls by role, the calls in flight (peak, and the mean over the time any
# call was in flight), the model-bound wall time (first call to last
# answer), the whole run's, and the ideal: calls x LATENCY / C.
#   tests/bench/concurrency.sh [LATENCY [C [REV]]]   (default: 2 16, the tree)
# PLAN_WIDTH=W: the planner's --plan-width (default 8).  KEEP=DIR: a copy
# of the run's files (logs, the server's log) is left in DIR.
# PLAN_MODE=independent in the environment: the paper's plan calls (each
# alike) instead of the distinct ones (each told the earlier titles).
# With REV, that commit is built in a scratch worktree and measured instead
# (a commit before --model-concurrency existed takes no -j).
set -eu
cd "$(dirname "$0")/../.."
LAT=${1:-2} C=${2:-16} REV=${3:-}
T=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; [ -z "${KEEP:-}" ] || cp -r "$T" "$KEEP"; [ -z "$REV" ] || git worktree remove --force "$T/tree" >/dev/null 2>&1; rm -rf "$T"' EXIT
HOME_TREE=$PWD
export ACCELOPT_STATE_DIR=${ACCELOPT_STATE_DIR:-$HOME_TREE/build/test-state}
[ -f "$ACCELOPT_STATE_DIR/calibration-cpu.json" ] || bin/accelopt calibrate >/dev/null 2>&1
J="-j $C"
if [ -n "$REV" ]; then
    git worktree add --detach "$T/tree" "$REV" >/dev/null 2>&1
    make -C "$T/tree" -j2 >/dev/null
    cd "$T/tree"
    bin/accelopt run --help 2>&1 | grep -q model-concurrency || J=
fi
export ACCELOPT_HOME=$PWD ACCELOPT_BUDGET=0.05 ACCELOPT_WARMUP=0.01
[ -z "${PLAN_WIDTH:-}" ] || export ACCELOPT_PLAN_WIDTH=$PLAN_WIDTH

python3 - "$LAT" "${PLAN_MODE:-distinct}" "${PLAN_SAMPLE:-0}" >"$T/script.json" <<'PY'
import itertools, json, re, sys
lat = float(sys.argv[1])
def knobs(path, sets):  # the source with knobs set, as tests/msgs.py knob does
    src = open(path).read()
    for name, value in sets:
        src, n = re.subn(r"(#define %s )\S+" % name, r"\g<1>%d" % value, src, count=1)
        assert n == 1, name
    return "```c\n" + src + "```"
mm = [knobs("nkibench/matmul/baseline.c", [("BLOCK_M", m), ("BLOCK_N", n)])
      for m, n in itertools.product([8, 16, 32, 64], [32, 64, 128, 256])]
si = [knobs("nkibench/silu/baseline.c", [("UNROLL", u), ("ROW_BLOCK", r)])
      for u, r in itertools.product([1, 2, 4, 8], [1, 4, 16, 64])]
plans = ["Plan %02d: try the %s tiling idea." % (i, w) for i, w in enumerate(
    "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho "
    "sigma tau upsilon phi chi psi omega".split())]
summary = open("tests/replies/summary-01-format.md").read()
# distinct: a model that heeds "not one of these" and the rank a call of a
# wave is asked for (PLAN_SAMPLE=1: one that samples among the ideas left
# instead, so calls of one wave may repeat each other); independent: one
# that answers each alike call with the next idea
plan = {"choose": plans} if sys.argv[2] == "distinct" else {"pick": {"": plans}}
if sys.argv[3] == "1" and "choose" in plan:
    plan["sample"] = 1
print(json.dumps({"plan-m": [dict(plan, delay=lat)],
                  "exec-m": [{"pick": {"BLOCK_N": mm, "ROW_BLOCK": si}, "delay": lat}],
                  "sum-m": [{"content": summary, "delay": lat}]}))
PY
LLM_SPANS=$T/spans.jsonl python3 "$HOME_TREE/tests/llm_server.py" "$T/script.json" "$T/port" "$T/llm.log" 2>/dev/null &
for _ in $(seq 100); do [ -s "$T/port" ] && break; sleep 0.05; done
export ACCELOPT_LLM_URL=http://127.0.0.1:$(cat "$T/port")/v1 ACCELOPT_LLM_KEY=sk-bench
export ACCELOPT_PLANNER_MODEL=plan-m ACCELOPT_EXECUTOR_MODEL=exec-m ACCELOPT_SUMMARIZER_MODEL=sum-m
start=$(date +%s.%N)
# shellcheck disable=SC2086
bin/accelopt run matmul silu --size tiny --iters 2 --beam 6 --plans 12 --samples 2 --topk 4 \
    --fix-attempts 0 --plan-mode "${PLAN_MODE:-distinct}" $J --json --out "$T/out" >"$T/done.jsonl" 2>"$T/run.err"
end=$(date +%s.%N)
dups=$(cat "$T"/out/*/logs/planner*.log "$T"/out/logs/planner*.log 2>/dev/null | grep -c "a duplicate of" || true)
echo "plans marked a duplicate: $dups"
python3 - "$T/llm.log" "$T/spans.jsonl" "$T/done.jsonl" "$LAT" "$C" "$start" "$end" "${REV:-the tree}" "${PLAN_MODE:-distinct}" <<'PY'
import json, sys
reqs = [json.loads(l) for l in open(sys.argv[1])]
spans = [json.loads(l) for l in open(sys.argv[2])]
done = [json.loads(l) for l in open(sys.argv[3])]
lat, c, start, end = float(sys.argv[4]), int(sys.argv[5]), float(sys.argv[6]), float(sys.argv[7])
by = {}
for r in reqs:
    by[r["model"]] = by.get(r["model"], 0) + 1
t0, t1 = min(s["t0"] for s in spans), max(s["t1"] for s in spans)
busy = sum(s["t1"] - s["t0"] for s in spans)
# the mean over the time some call was in flight
ev = sorted([(s["t0"], 1) for s in spans] + [(s["t1"], -1) for s in spans])
n = active = 0
last = ev[0][0]
for t, d in ev:
    if n > 0:
        active += t - last
    n += d
    last = t
ideal = len(reqs) * lat / c
print("%s, %s plans: %d calls (plan %d, exec %d, summary %d), %s" % (
    sys.argv[8], sys.argv[9], len(reqs), by.get("plan-m", 0), by.get("exec-m", 0), by.get("sum-m", 0),
    ", ".join("%s %s %d kernels" % (d["task"], d["stopped"], d["kernels_evaluated"]) for d in done)))
print("calls in flight: peak %d, mean %.1f while any was" % (max(r["inflight"] for r in reqs), busy / active))
# the calls in flight, averaged over each 5 s from the first call
w = [0.0] * (int((t1 - t0) / 5) + 1)
for sp in spans:
    a, b = sp["t0"] - t0, sp["t1"] - t0
    for i in range(int(a / 5), int(b / 5) + 1):
        w[i] += max(0.0, min(b, 5 * (i + 1)) - max(a, 5 * i)) / 5
print("in flight per 5 s: " + " ".join("%.0f" % x for x in w))
for m in ("plan-m", "exec-m", "sum-m"):
    w = [0.0] * (int((t1 - t0) / 5) + 1)
    for sp in spans:
        if sp.get("model") != m:
            continue
        a, b = sp["t0"] - t0, sp["t1"] - t0
        for i in range(int(a / 5), int(b / 5) + 1):
            w[i] += max(0.0, min(b, 5 * (i + 1)) - max(a, 5 * i)) / 5
    print("  %-6s          " % m[:-2] + " ".join("%.0f" % x for x in w))
print("model-bound wall time %.1f s (first call to last answer), run %.1f s; ideal at C=%d: %.1f s "
      "(%.2fx of ideal)" % (t1 - t0, end - start, c, ideal, (t1 - t0) / ideal))
PY
