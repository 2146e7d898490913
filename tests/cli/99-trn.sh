# 99-trn.sh - the trn target here, where no NeuronCore is: a profiler
# refuses to measure and says why; --build-only checks a kernel on the NKI
# host emulation; then, on the stand-in Neuron SDK of tests/trn-fake
# (documented interfaces, emulated "device"), everything of ours up to the
# device runs for real: the build per shape in its sandbox, the trusted
# runner over libnrt's API, each timed execution's trace read by
# neuron-profile view in its sandbox, the device's time as the latency and
# its counters in the result and the planner's prompt, failure classes, the
# attacks on the build's directory, a whole `accelopt run --target trn`, and
# one broker carrying cpu, cuda and trn kernels to their own profilers.
# Not a NeuronCore: what only one can tell is in docs/OPERATING.md.
. tests/cli/helpers.sh
M=/usr/bin/python3
FAST="-X session.timeout.ms=6000 -X heartbeat.interval.ms=500"
prof() { # prof FILE [options]: accelopt profile --alone --target trn of silu, tiny
    local f=$1
    shift
    bin/accelopt profile --alone --target trn --task nkibench/silu --size tiny --budget 0.2 --warmup 0.02 "$@" "$f"
}
# a silu kernel with line PATTERN replaced by TEXT (sed's s|PATTERN|TEXT|)
variant() { sed "s|$1|$2|" nkibench/silu/baseline.py >"$3"; }

if [ -e /dev/neuron0 ]; then
    skip "a trn profiler without a NeuronCore refuses to start" "this machine has one"
else
    timeout 30 bin/accelopt profile --alone --target trn --task nkibench/silu --size tiny \
        nkibench/silu/baseline.py >"$T/nodev.out" 2>"$T/nodev.err"
    [ $? -ne 0 ] && grep -q "no NeuronCore on this machine" "$T/nodev.err" && grep -q -- "--build-only" "$T/nodev.err"
    ok $? "profile --target trn without a NeuronCore refuses, saying why and what works here"
    timeout 20 bin/accelopt-profiler --target trn --brokers 127.0.0.1:1 </dev/null >/dev/null 2>"$T/nodev2.err"
    [ $? -eq 1 ] && grep -q "no NeuronCore on this machine" "$T/nodev2.err"
    ok $? "a trn profiler stage without a NeuronCore refuses to start (exit 1), saying why"
    bin/accelopt calibrate --target trn >/dev/null 2>"$T/nodev3.err"
    [ $? -ne 0 ] && grep -q "no NeuronCore on this machine" "$T/nodev3.err"
    ok $? "calibrate --target trn without a NeuronCore refuses, saying why"
fi

# --- a laptop: no SDK, no device: the host emulation checks the build ----
ACCELOPT_TRN_PYTHON=/nonexistent bin/accelopt profile --build-only --target trn --task nkibench/silu \
    nkibench/silu/baseline.py >"$T/bo.json" 2>"$T/bo.err"
[ "$(field "$T/bo.json" "r['status']")" = ok ]
ok $? "--build-only without the SDK: the baseline passes the emulation's checks"
variant "nl.load(x\[i \* TILE_P + ip, j \* TILE_F + jf\], mask=inside)" "nl.load(x[0:256, 0:64])" "$T/p256.py"
ACCELOPT_TRN_PYTHON=/nonexistent bin/accelopt profile --build-only --target trn --task nkibench/silu \
    "$T/p256.py" >"$T/bo2.json" 2>/dev/null
[ "$(field "$T/bo2.json" "r['status'] + ' ' + r['failure']['class'] + ' ' + r['failure']['code']")" = \
    "compile_error partition_limit err_num_partition_exceed_arch_limit" ] &&
    grep -q 'kernel.py:[0-9]*: error: NKIError' "$T/bo2.json"
ok $? "a 256-partition tile: compile_error, class partition_limit, the message located in kernel.py"
printf 'import neuronxcc.nki as nki\nX = "bfloat16"\n' >"$T/f16.py"
ACCELOPT_TRN_PYTHON=/nonexistent bin/accelopt profile --build-only --target trn --task nkibench/silu \
    "$T/f16.py" >"$T/bo3.json" 2>/dev/null
[ "$(field "$T/bo3.json" "r['status']")" = compile_error ] && grep -q "compute in float32" "$T/bo3.json"
ok $? "a source naming bfloat16 is refused (NKIBench's rule: float32 only)"

# --- the stand-in SDK: the driver up to the device ---------------------
SDK=$T/trn-sdk
mkdir -p "$SDK/neuron/lib" "$SDK/neuron/bin" "$SDK/venv/bin" "$SDK/venv/site"
gcc -shared -fPIC -O1 -o "$SDK/neuron/lib/libnrt.so.1" tests/trn-fake/libnrt.c -lcjson -ldl &&
    cp tests/trn-fake/device.py "$SDK/neuron/lib/" &&
    cp tests/trn-fake/neuron-profile "$SDK/neuron/bin/" &&
    cp -r nkibench/harness/trn/emu/neuronxcc "$SDK/venv/site/" &&
    cp tests/trn-fake/nki_sdk.py "$SDK/venv/site/neuronxcc/nki/_sdk.py" &&
    printf '\nfrom ._sdk import baremetal, simulate_kernel  # noqa: E402,F401 - the stand-in SDK\n' \
        >>"$SDK/venv/site/neuronxcc/nki/__init__.py" &&
    printf '__version__ = "0.0-stand-in"\n' >>"$SDK/venv/site/neuronxcc/__init__.py" &&
    printf '#!/bin/sh\nPYTHONPATH=%s/venv/site exec /usr/bin/python3 "$@"\n' "$SDK" >"$SDK/venv/bin/python3" &&
    chmod -R a+rX "$SDK" && chmod +x "$SDK/venv/bin/python3"
ok $? "the stand-in Neuron SDK is set up (tests/trn-fake)"
export ACCELOPT_TRN_PYTHON=$SDK/venv/bin/python3 ACCELOPT_NEURON_HOME=$SDK/neuron ACCELOPT_TRN_DEVICE=/dev/null

prof nkibench/silu/baseline.py >"$T/ok.json" 2>"$T/ok.err"
$M - "$T/ok.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
d, t = r.get("device_profile", {}), r.get("timing", {})
c = d.get("counters", {})
ok = (r["status"] == "ok" and r["target"] == "trn" and d.get("executions", 0) >= 3 and
      d["profiled"] >= d["executions"] and r["latency_ns"] > 0 and
      c.get("hbm_read_bytes") == 4 * 64 * 4096 and c.get("hbm_write_bytes") == 4 * 64 * 4096 and
      len(c) == 16 and "neuron-nodes" in r["sandbox"] and
      # the device's time is the latency; the profiler's clock, beside it, holds the whole call
      abs(r["latency_ns"] - d["total_time_s"] * 1e9) <= r["latency_ns"] * 0.5 and
      t["host_median_ns"] >= 0.9 * t["runner_reported_median_ns"] and
      r["pct_of_peak"] > 0 and r["calibration"])
sys.exit(0 if ok else 1)
PY
ok $? "the baseline on the stand-in device: ok, its latency the traces' total_time, 16 counters, % of peak"
$M -c "
import json,sys; r=json.load(open('$T/ok.json'))
print(r['device_profile']['host_median_ns'], r['timing']['runner_reported_median_ns'])" >"$T/host.txt"
read -r host runner <"$T/host.txt"
$M -c "import sys; sys.exit(0 if float('$host') >= 0.9 * float('$runner') else 1)"
ok $? "a timed call's time is its CALL's, not the FETCH's after it (host $host ns >= the runner's $runner ns)"
# the stand-in's device process (forked by libnrt before the runner locks
# itself down) runs the kernel under a seccomp filter of its own: a kernel
# that starts a thread there (to rewrite the traces) dies (issue 46, part 6)
cat tests/trn-fake/kernels/thread_prefix.py nkibench/silu/baseline.py >"$T/thread.py"
prof "$T/thread.py" >"$T/thread.json" 2>/dev/null
[ "$(field "$T/thread.json" "r['status']")" = crash ] && grep -q "the device reported an error" "$T/thread.json"
ok $? "a kernel that starts a thread on the stand-in device is a crash, not measured ($(field "$T/thread.json" "r['status']"))"
# a device time far below the host's clock around the same executions
# (the stand-in scales this kernel's traces down 10000 times: a trace that
# does not match its execution) is refused, alone and head to head, with
# the launch overhead measured on the reference allowed (issue 46, part 6)
{ echo "# STANDIN_TRACE_SCALE = 0.0001"; cat nkibench/silu/baseline.py; } >"$T/lying.py"
ACCELOPT_LOG=info prof "$T/lying.py" >"$T/lying.json" 2>"$T/lying.err"
[ "$(field "$T/lying.json" "r['status']")" = rejected ] && grep -q "far below the host's clock" "$T/lying.json" &&
    grep -q "launch overhead on 'silu'" "$T/lying.err"
ok $? "a device time far below the host's clock is refused ($(field "$T/lying.json" "r['status'] + ': ' + (r.get('reason') or '')[:140]"))"
$M - "$T/lying.py" >"$T/lying-in.jsonl" <<'PY'
import json, sys
src, base = open(sys.argv[1]).read(), open("nkibench/silu/baseline.py").read()
for i, k in enumerate([base + "\n# the same\n", src]):
    print(json.dumps(dict(type="kernel", v=1, id="h2h-%d" % i, run="h", task="silu", target="trn", iter=1,
                          size="tiny", source=k, baseline_source=base)))
PY
bin/accelopt-profiler --target trn --budget 0.2 --warmup 0.02 <"$T/lying-in.jsonl" >"$T/lying-out.jsonl" 2>"$T/lying-h2h.err"
$M - "$T/lying-out.jsonl" <<'PY'
import json, sys
r = {m["kernel_id"]: m for m in map(json.loads, open(sys.argv[1])) if m["type"] == "result"}
assert r["h2h-0"]["status"] == "ok", r["h2h-0"]
assert r["h2h-1"]["status"] == "rejected" and "far below the host's clock" in r["h2h-1"]["reason"], r["h2h-1"]
PY
ok $? "head to head too: the honest copy ok, the one whose device time is far below the host's refused"
ACCELOPT_LOG=info prof nkibench/silu/baseline.py 2>&1 >/dev/null | grep -q "documented peaks"
ok $? "without a calibration, % of peak comes from the documented peaks, and the log says so"

variant "r = nl.divide(t, nl.add(e, 1.0))" "r = nl.divide(t, nl.add(e, 2.0))" "$T/wrong.py"
prof "$T/wrong.py" >"$T/wrong.json" 2>/dev/null
[ "$(field "$T/wrong.json" "r['status']")" = incorrect ]
ok $? "a wrong kernel on the device: incorrect"
variant "    return out" "    keep = [nl.zeros((128, 8192), dtype=nl.float32, buffer=nl.sbuf) for _ in range(8)]\n    return out" "$T/sbuf.py"
prof "$T/sbuf.py" >"$T/sbuf.json" 2>/dev/null
[ "$(field "$T/sbuf.json" "r['status'] + ' ' + r['failure']['class'] + ' ' + r['failure']['code']")" = \
    "compile_error sbuf_overflow GCA035" ]
ok $? "too much SBUF alive at once: compile_error, class sbuf_overflow, code GCA035"

# the kernel's Python runs in the build: what it leaves must not reach the measurement
variant "^import neuronxcc.nki as nki$" "import neuronxcc.nki as nki, os\nos.remove('runner'); open('runner', 'w').write('#!/bin/sh\\\\nexit 0\\\\n')" "$T/a-runner.py"
prof "$T/a-runner.py" >"$T/a-runner.json" 2>/dev/null
[ "$(field "$T/a-runner.json" "r['status']")" = rejected ] && grep -q "changed the trusted runner" "$T/a-runner.json"
ok $? "a build that replaces the trusted runner is rejected ($(field "$T/a-runner.json" "r['status'] + ': ' + (r.get('reason') or '')[:80]"))"
variant "^import neuronxcc.nki as nki$" "import neuronxcc.nki as nki, os\nos.remove('nrt.conf'); open('nrt.conf', 'w').write('lib /work/evil.so\\\\ncore 0\\\\n')" "$T/a-conf.py"
prof "$T/a-conf.py" >"$T/a-conf.json" 2>/dev/null
[ "$(field "$T/a-conf.json" "r['status']")" = rejected ] && grep -q "nrt.conf" "$T/a-conf.json"
ok $? "a build that points the runner at another runtime library is rejected ($(field "$T/a-conf.json" "r['status'] + ': ' + (r.get('reason') or '')[:80]"))"
# nothing the harness put in the build's directory may change: the tensors'
# names the runner matches (tensors.txt), the shapes it loads (shapes.txt)
# (issue 46, part 5)
for f in tensors.txt shapes.txt; do
    variant "^import neuronxcc.nki as nki$" "import neuronxcc.nki as nki, atexit, os\natexit.register(lambda: [d := open('$f').read(), os.remove('$f'), open('$f', 'w').write(d + ' ')])" "$T/a-$f.py"
    prof "$T/a-$f.py" >"$T/a-$f.json" 2>/dev/null
    [ "$(field "$T/a-$f.json" "r['status']")" = rejected ] && grep -q "the build changed '$f'" "$T/a-$f.json"
    ok $? "a build that rewrites $f is rejected ($(field "$T/a-$f.json" "r['status'] + ': ' + (r.get('reason') or '')[:80]"))"
done
# the build claims it only checked the kernel, where a NeuronCore is, and leaves no NEFF
variant "^import neuronxcc.nki as nki$" "import neuronxcc.nki as nki, atexit, glob, os\natexit.register(lambda: [os.remove(f) for f in glob.glob('kernel-*.neff')] + [open('built.txt', 'w').write('emulated 2')])" "$T/a-built.py"
prof "$T/a-built.py" >"$T/a-built.json" 2>/dev/null
[ "$(field "$T/a-built.json" "r['status']")" = rejected ] && grep -q "left no NEFFs" "$T/a-built.json"
ok $? "a build that claims a check-only result where a NeuronCore is, leaving no NEFF, is rejected ($(field "$T/a-built.json" "r['status'] + ': ' + (r.get('reason') or '')[:80]"))"

# the build renames the runner's trace directory away and puts its own, with fast "traces", there
# (only where it can write: in the build; the stand-in "device" runs the source again)
cat >"$T/forge.py" <<'PY'
import os
if os.access(".", os.W_OK) and os.path.isdir("ntff"):
    os.rename("ntff", "old-ntff")
    os.mkdir("ntff")
    os.chmod("ntff", 0o777)
    for k in range(400):
        with open("ntff/call-%d.ntff" % k, "w") as f:
            f.write('{"total_time": 1e-9}')
        os.chmod("ntff/call-%d.ntff" % k, 0o666)
PY
{ cat "$T/forge.py"; cat nkibench/silu/baseline.py; } >"$T/a-ntff.py"
prof "$T/a-ntff.py" >"$T/a-ntff.json" 2>/dev/null
st=$(field "$T/a-ntff.json" "r['status']")
[ "$st" = rejected ] && grep -q "not the runner's" "$T/a-ntff.json"
ok $? "traces the build forged in place of the runner's are never read: $st ($(field "$T/a-ntff.json" "r.get('reason', '')[:90]"))"

# a kernel with state on its "device" (a count of its executions, as a NEFF could keep in
# device memory): honest through the correctness checks and the warm-up, wrong when timed
{ echo 'CALLS = [0]  # kept across the executions of one load'
  sed 's/^def kernel(x):/def kernel(x):\n    CALLS[0] += 1/; s/            r = nl.divide(t, nl.add(e, 1.0))/            r = nl.multiply(nl.divide(t, nl.add(e, 1.0)), 0.0 if CALLS[0] > 5 else 1.0)/' \
      nkibench/silu/baseline.py; } >"$T/stateful.py"
prof "$T/stateful.py" >"$T/stateful.json" 2>/dev/null
# (by the sampled timed calls; or, half the time, by the check sets that
# then come after the timed calls: issue 56)
st=$(field "$T/stateful.json" "r['status']")
{ [ "$st" = rejected ] && grep -q "in a timed call" "$T/stateful.json"; } || [ "$st" = incorrect ]
ok $? "a kernel that turns wrong once its checks seem over is caught by the secret checks of timed executions or the check sets after them ($st)"

# the planner is shown the device's counters by the profiler's names, in NKI's prompts
start_llm tplan '{"*": [{"content": "Keep x in SBUF across both loops."}]}'
ACCELOPT_MSG_TARGET=trn $M tests/msgs.py candidate silu - '{"plans": 1}' | $M -c "
import json, sys
m = json.loads(sys.stdin.read())
m['profile']['counters'] = {'hbm_read_bytes': 1048576, 'vector_engine_active_time_percent': 0.5}
print(json.dumps(m))" | ACCELOPT_LLM_URL=$LLM_URL ACCELOPT_LLM_MODEL=plan-m bin/accelopt-planner >"$T/tplan.jsonl" 2>/dev/null
jl "$LLM_LOG" -1 "r['messages'][0]['content']" >"$T/tplan.sys"
jl "$LLM_LOG" -1 "r['messages'][1]['content']" >"$T/tplan.user"
grep -q "NeuronCore" "$T/tplan.sys" && grep -q "spill_save_bytes" "$T/tplan.sys" &&
    grep -qx "hbm_read_bytes: 1048576" "$T/tplan.user" && grep -qx "vector_engine_active_time_percent: 0.5" "$T/tplan.user" &&
    grep -q '```python' "$T/tplan.user" && grep -q "import neuronxcc.nki as nki" "$T/tplan.user" &&
    [ "$(field "$T/tplan.jsonl" "r['target']")" = trn ]
ok $? "a trn plan: prompts/trn, the NKI convention, the device's counters as name: value lines"
start_llm texec "{\"*\": [{\"content\": $($M -c 'import json; print(json.dumps("```python\n" + open("nkibench/silu/baseline.py").read().replace("TILE_F = 512", "TILE_F = 1024") + "```"))')}]}"
ACCELOPT_MSG_TARGET=trn $M tests/msgs.py plan silu "Keep x in SBUF." - '{"samples": 1}' |
    ACCELOPT_LLM_URL=$LLM_URL ACCELOPT_LLM_MODEL=exec-m bin/accelopt-executor >"$T/texec.jsonl" 2>/dev/null
[ "$(field "$T/texec.jsonl" "r['target'] + ' ' + str('TILE_F = 1024' in r.get('source', ''))")" = "trn True" ]
ok $? "a python-tagged block is the kernel of a trn run"

# --- a whole run, and one broker for three targets -------------------------
timeout 600 bin/accelopt run silu --target trn --size tiny --iters 1 --beam 1 --plans 2 --samples 1 \
    --json --out "$T/run" >"$T/run.json" 2>"$T/run.err"
run_ended $? && [ "$(field "$T/run.json" "r['target'] + ' ' + r['stopped'] + ' ' + str(r['kernels_evaluated'] >= 2)")" = "trn iterations True" ] &&
    grep -q "TILE_" "$T/run.json"
ok $? "accelopt run --target trn on the stand-in device: the builtin model moves the NKI baseline's knobs to the end"

bin/accelopt broker --partitions 2 >"$T/broker.out" 2>"$T/broker.err" &
SERVICE_PIDS="$SERVICE_PIDS $!"
for _ in $(seq 100); do [ -s "$T/broker.out" ] && break; sleep 0.05; done
B=$(head -1 "$T/broker.out")
for tg in cpu cuda trn; do
    ACCELOPT_MSG_TARGET=$tg $M tests/msgs.py candidate silu - '{"plans": 1, "samples": 1}' |
        bin/accelopt-planner 2>/dev/null | bin/accelopt-executor 2>/dev/null >"$T/$tg-kernels.jsonl"
    bin/accelopt produce -b "$B" accelopt.kernels.$tg <"$T/$tg-kernels.jsonl" 2>/dev/null
done
ensure_calibration
bin/accelopt-profiler --brokers "$B" $FAST --budget 0.1 --warmup 0.02 2>"$T/cprof.err" &
cprof=$!
bin/accelopt-profiler --target trn --brokers "$B" $FAST --budget 0.1 --warmup 0.02 2>"$T/tprof.err" &
tprof=$!
bin/accelopt consume -b "$B" accelopt.results -n 2 --idle 120 >"$T/results.jsonl" 2>/dev/null
sleep 1
kill -TERM $cprof $tprof
wait $cprof $tprof
$M - "$T/results.jsonl" <<'PY'
import json, sys
rs = [json.loads(l) for l in open(sys.argv[1])]
got = sorted((r["target"], r["status"]) for r in rs)
sys.exit(0 if got == [("cpu", "ok"), ("trn", "ok")] and
         "device_profile" in [r for r in rs if r["target"] == "trn"][0] else 1)
PY
ok $? "one broker: the cpu and trn profilers each measured their own target's kernel"
bin/accelopt consume -b "$B" accelopt.kernels.cuda -n 1 --idle 10 >"$T/waiting.jsonl" 2>/dev/null
[ "$(grep -c '"target":"cuda"' "$T/waiting.jsonl")" -eq 1 ]
ok $? "the cuda kernel waits on accelopt.kernels.cuda for a cuda profiler"

# a deployment: one broker and one Redis, the stages once, a cpu and a trn profiler;
# a cpu run and a trn run submitted together both end
start_redis dep
for st in selector planner executor summarizer; do
    bin/accelopt-$st --brokers "$B" --redis "$REDIS_URL" $FAST 2>"$T/dep-$st.log" &
    SERVICE_PIDS="$SERVICE_PIDS $!"
done
bin/accelopt-profiler --brokers "$B" --redis "$REDIS_URL" $FAST --budget 0.1 --warmup 0.02 2>"$T/dep-cprof.log" &
SERVICE_PIDS="$SERVICE_PIDS $!"
bin/accelopt-profiler --target trn --brokers "$B" --redis "$REDIS_URL" $FAST --budget 0.1 --warmup 0.02 \
    2>"$T/dep-tprof.log" &
SERVICE_PIDS="$SERVICE_PIDS $!"
sub() { # sub TARGET: a silu run of that target, to its end
    timeout 600 bin/accelopt submit silu --target "$1" --brokers "$B" --redis "$REDIS_URL" --wait --json \
        --iters 1 --beam 1 --plans 1 --samples 1 --slot-deadline 300 --out "$T/dep-$1" >"$T/dep-$1.jsonl" 2>"$T/dep-$1.err"
}
sub cpu &
subpid=$!
sub trn
trc=$?
wait $subpid
run_ended $? && run_ended $trc &&
    [ "$(field "$T/dep-cpu.jsonl" "r['target'] + ' ' + r['stopped']")" = "cpu iterations" ] &&
    [ "$(field "$T/dep-trn.jsonl" "r['target'] + ' ' + r['stopped']")" = "trn iterations" ]
ok $? "one deployment carries a cpu run and a trn run at once, each measured by its own target's profiler"

# bench: the baselines through the same profiler, no vendor point for trn
bin/accelopt bench --target trn --size tiny --tasks silu,matmul --budget 0.1 --warmup 0.02 \
    --json "$T/bench.json" >"$T/bench.out" 2>"$T/bench.err"
[ $? -eq 0 ] && [ "$(grep -c " ok " "$T/bench.out")" -eq 2 ] && ! grep -q "vendor reference point" "$T/bench.out" &&
    grep -q "documented peaks" "$T/bench.out"
rc=$?
ok $rc "accelopt bench --target trn: both baselines ok, % of peak against the documented peaks, no vendor point"
[ $rc -eq 0 ] || sed 's/^/# bench: /' "$T/bench.out" "$T/bench.err" >&2

# calibrate: peak.py's kernels through baremetal with traces, read by neuron-profile view
bin/accelopt calibrate --target trn --bw-mib 16 >"$T/cal.out" 2>"$T/cal.err"
[ $? -eq 0 ] && [ -s "$ACCELOPT_STATE_DIR/calibration-trn.json" ] &&
    [ "$(field "$ACCELOPT_STATE_DIR/calibration-trn.json" "r['target'] + ' ' + r['bandwidth_method'] + ' ' + str(r['fma_gflops'] > 0)")" = "trn copy True" ]
ok $? "accelopt calibrate --target trn measures and stores the peaks (here the stand-in's speed, not a NeuronCore's)"
prof nkibench/silu/baseline.py >"$T/cal-ok.json" 2>/dev/null
[ "$(field "$T/cal-ok.json" "r['status']")" = ok ] &&
    [ "$(field "$T/cal-ok.json" "r['calibration']")" != "$(field "$T/ok.json" "r['calibration']")" ]
ok $? "profiles after it use the measured calibration, not the documented one"
