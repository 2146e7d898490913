# 43-roofline.sh - an honest kernel is never refused as impossible (issue
# 25, part 4): the streaming-store kernels of tests/honest-streaming, at the
# cpu size, under a calibration 10x too low (as one taken on a busy
# machine is; 4x was not enough when the suite timed adamw beside seven
# other scripts: it no longer beat the low floor, so nothing was held),
# are held against a fresh measurement of the machine, accepted, and the
# stored figures are called low.
. tests/cli/helpers.sh
ensure_calibration
python3 - "$ACCELOPT_STATE_DIR/calibration-cpu.json" "$T/low.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
for k in ("bandwidth_gbs", "fma_gflops", "vec_gflops"):
    c[k] *= 0.1
for p in c["bandwidth_in_cache"]:
    p["gbs"] *= 0.1
json.dump(c, open(sys.argv[2], "w"))
PY
python3 - >"$T/in.jsonl" <<'PY'
import json
for f, task in (("adamw_stream", "adamw"), ("rope_stream", "rope_single_freq_apply")):
    print(json.dumps(dict(type="kernel", v=1, id="k-" + f, run="roof", task=task, target="cpu", iter=1,
                          size="cpu", source=open("tests/honest-streaming/%s.c" % f).read())))
PY
bin/accelopt-profiler --budget 0.2 --calibration "$T/low.json" <"$T/in.jsonl" >"$RESULTS/streaming-low.jsonl" 2>"$T/low.err"
python3 - "$RESULTS/streaming-low.jsonl" <<'PY'
import json, sys
rs = [json.loads(l) for l in open(sys.argv[1])]
assert len(rs) == 2 and all(r["status"] == "ok" for r in rs), [(r["kernel_id"], r["status"], r.get("reason")) for r in rs]
assert all(r["timing"].get("roofline_rechecked_bw_gbs", 0) > 0 for r in rs), [r["timing"] for r in rs]
for r in rs:
    print("# %s: %.2f ms, %.0f%% of the fresh peak" % (r["kernel_id"], r["latency_ns"] / 1e6, 100 * r["pct_of_peak"]))
PY
ok $? "the honest streaming-store kernels (adamw, rope) pass at the cpu size, even under a calibration 10x too low: held against a fresh measurement"
grep -q 'the stored calibration is low' "$T/low.err"; ok $? "and the profiler says the stored figures are low"
# peaks are maxima (issue 53): the fresh, higher measurement is kept into
# the stored calibration for the next start
python3 - "$T/low.json" "$ACCELOPT_STATE_DIR/calibration-cpu.json" <<'PY'
import json, sys
low, real = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
print("# kept: %.1f GB/s (stored 10x low: %.1f), %d measurements" % (
      low["bandwidth_gbs"], 0.1 * real["bandwidth_gbs"], low.get("measurements", 1)))
sys.exit(0 if low["bandwidth_gbs"] > 0.3 * real["bandwidth_gbs"] and low.get("measurements", 1) >= 2 else 1)
PY
ok $? "the fresh measurement's higher peaks are kept into the stored calibration"
