# 35-bench.sh - the baseline table: rows, geomean, examples, the OpenBLAS point, JSON
. tests/cli/helpers.sh
ensure_calibration
out=$T/bench.txt
json=$T/bench.json
bin/accelopt bench --size tiny --tasks matmul,silu --examples --json "$json" >"$out" 2>"$T/bench.err"
ok $? "bench exits 0 when every baseline is ok"
grep -q '^geomean ' "$out"; ok $? "the table ends the baselines with a geomean"
grep -q '^matmul/packed_avx512 .* ok ' "$out"; ok $? "the matmul example is a row"
grep -q '^openblas sgemm (matmul) .* ok ' "$out"; ok $? "the OpenBLAS reference point is a row"
python3 - "$json" <<'PY'
import json, math, sys
d = json.load(open(sys.argv[1]))
tasks = [r["task"] for r in d["results"]]
assert tasks == ["matmul", "silu"], tasks
assert all(r["status"] == "ok" for r in d["results"] + d["examples"])
g = math.exp(sum(math.log(r["pct_of_peak"]) for r in d["results"]) / 2)
assert abs(g - d["geomean_pct_of_peak"]) < 1e-9, (g, d["geomean_pct_of_peak"])
assert {r["task"] for r in d["examples"]} == {"matmul", "silu"}
v = d["vendor"]
assert (v["M"], v["K"], v["N"]) == (96, 128, 160), v
assert v["max_rel_err"] < 1e-4 and v["gflops"] > 0 and v["repeats"] >= 10
assert abs(v["pct_of_peak"] - 2 * 96 * 128 * 160 / d["fma_gflops"] / v["latency_ns"]) < 1e-9
# held against the FMA rate sgemm runs at (the cpu's FMA peak; a GPU's
# fp32 FMA rate, not its tensor-core matmul peak)
assert v["name"] == "openblas_sgemm" and abs(v["pct_of_fma_rate"] - v["gflops"] / d["fma_gflops"]) < 1e-9, v
PY
ok $? "the JSON holds the rows, the geomean of the baselines, the examples and the vendor point"
bin/accelopt bench --size tiny --tasks silu --no-vendor >"$out" 2>&1
! grep -q openblas "$out"; ok $? "--no-vendor skips the OpenBLAS point"
bin/accelopt bench --size tiny --tasks matmul --openblas-core 'x;y' >"$out" 2>&1
grep -q "not an OpenBLAS core name" "$out"; ok $? "a bad --openblas-core is refused, not run by a shell"
# the rows are result messages (plus the source path): schemas.py checks them
python3 -c "import json,sys; [print(json.dumps({k: v for k, v in r.items() if k != 'source'})) for r in json.load(open(sys.argv[1]))['results']]" \
    "$json" >"$RESULTS/bench-rows.jsonl"
