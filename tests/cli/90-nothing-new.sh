# 90-nothing-new.sh - a search with nothing new to try stops, and says why
# (issue 69, item 3): the builtin model proposes the same knob moves again
# while its parent stays; once two iterations bring no kernel the run had
# not measured before, the run ends `exhausted` with the reason, where it
# used to go through every iteration asked for on answers from the cache.
. tests/cli/helpers.sh
ensure_calibration
M=/usr/bin/python3
export ACCELOPT_BUDGET=0.1 ACCELOPT_WARMUP=0.02 # flow, not speed

bin/accelopt run matmul --iters 20 --beam 1 --plans 2 --samples 1 --no-memory --out "$T/x" \
    >"$T/x.out" 2>"$T/x.err"
rc=$?
$M - "$T/x/matmul/done.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["stopped"] == "exhausted" and 2 <= d["iterations"] < 20, (d["stopped"], d["iterations"])
assert "nothing new to try" in d["reason"], d.get("reason")
h = [x for x in d["history"] if x["iter"] >= 1]
n = [x["new_kernels"] for x in h]
# the two last brought nothing new, and no two in a row before them (one
# alone does not stop it: a search whose parent moves tries new kernels)
assert n[-2:] == [0, 0] and not any(a == b == 0 for a, b in zip(n[:-2], n[1:-2])), n
assert d["history"][0]["new_kernels"] == 1, d["history"][0]  # the baseline
PY
ok $? "a builtin run of 20 iterations stops once two bring nothing new: exhausted, with the reason (exit $rc)"
grep -q "^matmul  *exhausted " "$T/x.out" &&
    grep -q "^matmul: stopped after [0-9]* iterations, nothing new to try" "$T/x.out"
ok $? "the summary says it stopped early, and why"
[ "$rc" -eq 3 ] || [ "$rc" -eq 0 ]
ok $? "the final head-to-head still decides the exit status (0 or 3, not a failure: $rc)"
