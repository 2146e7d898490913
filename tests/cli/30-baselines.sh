# 30-baselines.sh - each baseline measured correctly, with a % of peak
. tests/cli/helpers.sh
ensure_calibration
for task in matmul silu rmsnorm_matmul; do
    out=$RESULTS/baseline-$task.json
    bin/accelopt profile --task nkibench/$task --size tiny nkibench/$task/baseline.c >"$out" 2>/dev/null
    ok $? "$task baseline profiles with exit 0"
    [ "$(field "$out" "r['status']")" = ok ]; ok $? "$task status ok"
    python3 - "$out" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert 0 < r["pct_of_peak"] <= 1, r["pct_of_peak"]
assert r["latency_min_ns"] <= r["latency_ns"] and r["repeats"] >= 3
assert r["t_min_ns"] <= r["latency_min_ns"]
assert r["max_rel_l2"] <= r["tolerance"]
sets = {e["set"] for e in r["rel_l2"]}
assert {"check0", "check1", "check2", "check0-repoisoned"} <= sets, sets
assert any(s.startswith("timed") for s in sets), sets
assert {"pid-ns", "net-ns", "mount-ns", "seccomp", "uid-65534", "no-new-privs"} <= set(r["sandbox"])
assert r["bound"] in ("memory", "matmul", "elementwise")
PY
    ok $? "$task: % of peak in (0,1], errors within tolerance, timed calls checked, sandboxed"
done
[ "$(field "$RESULTS/baseline-matmul.json" "r['bound']")" = matmul ]; ok $? "matmul is matmul-bound"
[ "$(field "$RESULTS/baseline-silu.json" "r['bound']")" = memory ]; ok $? "silu is memory-bound"
# a kernel that differs from its parent by 10x is re-measured in a fresh process
out=$T/fast.json
bin/accelopt profile --task nkibench/matmul --size tiny --parent-latency 1e9 \
    nkibench/matmul/baseline.c >"$out" 2>/dev/null
python3 -c "import json,sys; r=json.load(open(sys.argv[1])); sys.exit(0 if r['speedup'] > 10 and r['timing']['measurements'] == 2 and r['status']=='ok' else 1)" "$out"
ok $? "a >10x speedup over the parent is reported after a second measurement"
