# 48-noise.sh - noise is not sold as a speedup (issue 25, part 3): a model
# that returns the matmul baseline itself, each time with another comment,
# used to make a run report 1.33x (the fastest of 25 noisy measurements of
# one kernel against one of the baseline).  Now every copy is a duplicate
# of its parent, the baseline stays the best, and the run quotes 1.00x.
# Then a real rewrite: the speedup quoted is the final head-to-head's,
# inside its own interval, with the search's figure beside it.
. tests/cli/helpers.sh
ensure_calibration
M=/usr/bin/python3
export ACCELOPT_BUDGET=0.1 ACCELOPT_WARMUP=0.02
start_llm copies "$($M - <<'PY'
import json
src = open("nkibench/matmul/baseline.c").read()
copies = [{"content": "```c\n/* variant %d: tuned */\n%s// same kernel %d\n```" % (i, src, i), "usage": [10, 5]}
          for i in range(24)]
print(json.dumps({"plan-m": [{"content": "Tune the loops (plan %d)." % i, "usage": [10, 5]} for i in range(8)],
                  "exec-m": copies,
                  "sum-m": [{"content": open("tests/replies/summary-01-format.md").read(), "usage": [10, 5]}]}))
PY
)"
ACCELOPT_LLM_URL=$LLM_URL ACCELOPT_PLANNER_MODEL=plan-m ACCELOPT_EXECUTOR_MODEL=exec-m \
ACCELOPT_SUMMARIZER_MODEL=sum-m bin/accelopt run matmul --size tiny --iters 2 --beam 2 --plans 4 --samples 2 --json --out "$T/aa" \
    >"$T/aa.jsonl" 2>"$T/aa.err"
ok $? "the run of baseline copies finishes"
$M - "$T/aa.jsonl" "$T/aa/matmul/history.jsonl" <<'PY'
import json, sys
d = json.loads(open(sys.argv[1]).readline())
hist = [json.loads(l) for l in open(sys.argv[2])]
kids = [h for h in hist if h["iter"] > 0]
assert kids and all(h["status"] == "duplicate" for h in kids), sorted(set(h["status"] for h in kids))
assert d["speedup"] == 1 and d["speedup_method"] == "baseline", (d["speedup"], d["speedup_method"])
assert d["best"]["sha256"] == hist[0]["sha256"]
PY
ok $? "every copy is a duplicate of the baseline, and the run quotes 1.00x (nothing beat it)"
grep -q '1.000x' "$T/aa/summary.txt"; ok $? "summary.txt says 1.000x"

# a real rewrite (i-k-j loops: about 1.4x the baseline at tiny): the run
# ends with a head-to-head, and quotes it
cat >"$T/ikj.c" <<'EOF'
void kernel(const float *lhs, const float *rhs, float *out, int M, int K, int N)
{
    for (int i = 0; i < M; i++) {
        float *o = out + (long)i * N;
        for (int j = 0; j < N; j++) o[j] = 0;
        for (int k = 0; k < K; k++) {
            float a = lhs[(long)i * K + k];
            const float *r = rhs + (long)k * N;
            for (int j = 0; j < N; j++) o[j] += a * r[j];
        }
    }
}
EOF
start_llm ikj "$($M - "$T/ikj.c" <<'PY'
import json, sys
print(json.dumps({"plan-m": [{"content": "Loop order i-k-j.", "usage": [10, 5]}],
                  "exec-m": [{"content": "```c\n" + open(sys.argv[1]).read() + "```", "usage": [10, 5]}],
                  "sum-m": [{"content": open("tests/replies/summary-01-format.md").read(), "usage": [10, 5]}]}))
PY
)"
ACCELOPT_LLM_URL=$LLM_URL ACCELOPT_PLANNER_MODEL=plan-m ACCELOPT_EXECUTOR_MODEL=exec-m \
ACCELOPT_SUMMARIZER_MODEL=sum-m ACCELOPT_LOG=info bin/accelopt run matmul --size tiny --iters 1 \
    --beam 1 --plans 1 --samples 1 --json --out "$T/h2h" >"$T/h2h.jsonl" 2>"$T/h2h.err"
ok $? "a run with a real rewrite finishes"
$M - "$T/h2h.jsonl" "$T/h2h/matmul/history.jsonl" <<'PY'
import json, sys
d = json.loads(open(sys.argv[1]).readline())
hist = [json.loads(l) for l in open(sys.argv[2])]
assert "search_speedup" in d, {k: v for k, v in d.items() if k not in ("best", "history")}
assert abs(d["search_speedup"] - d["baseline_latency_ns"] / d["best"]["latency_ns"]) < 1e-9
if d["best"]["sha256"] != hist[0]["sha256"]:  # the search kept the rewrite (on a quiet machine it does)
    assert d["speedup_method"] == "head_to_head", d["speedup_method"]
    assert d["speedup_low"] <= d["speedup"] <= d["speedup_high"] and d["speedup"] > 1, d
    assert d["speedup_high"] / d["speedup_low"] < 1.5, "an interval that says something"
else:
    assert d["speedup_method"] == "baseline" and d["speedup"] == 1
print("# matmul i-k-j: %.3fx (%s, %s-%s), the search said %.3fx" % (d["speedup"], d["speedup_method"],
      d.get("speedup_low"), d.get("speedup_high"), d["search_speedup"]))
PY
ok $? "its speedup is the head-to-head's, inside its interval (or 1 when noise kept the baseline)"
grep -q 'goes head to head with the baseline' "$T/h2h/logs/selector.log" ||
    grep -q '(baseline)' "$T/h2h/logs/selector.log"
ok $? "the selector's log says what it did"
grep -q 'head to head\|baseline' "$T/h2h/summary.txt"; ok $? "summary.txt says how the speedup was measured"
# the head-to-head holds its kernel to the same source limit as any measurement
python3 - >"$T/big-h2h.jsonl" <<'PY'
import json
b = open("nkibench/matmul/baseline.c").read()
print(json.dumps(dict(type="kernel", v=1, id="k-big", run="h", task="matmul", target="cpu", iter=1, size="tiny",
                      source=b + "//" + "x" * 300000 + "\n", baseline_source=b)))
PY
bin/accelopt-profiler <"$T/big-h2h.jsonl" 2>/dev/null | grep -q '"status":"rejected","reason":"source is'
ok $? "a head-to-head kernel over the source limit is rejected before it is built"
