#!/usr/bin/env bash
# gpu-session.sh - the cuda target's checks and figures (issue 26) in one
# short lease of a GPU machine: the steps in order of what they are worth,
# each time-boxed so that the whole ends before BUDGET seconds: the log in
# OUT/log.txt and every result in OUT/files.tgz (what the device tool
# brings back).
#
#   bash tests/bench/gpu/carry-deps.sh                    # here: the packages, into .devdeps/
#   L=$LD_LIBRARY_PATH; source .devdeps/on-device.sh      # there (carry .devdeps): the build's
#   export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$L             # packages (it replaces the path)
#   BUDGET=540 tests/bench/gpu-session.sh [STEP...]
#
# Steps (default: facts build preflight calibrate clock examples test
# loop table torch, in this order: what a cut budget must not lose first):
#   facts      the GPU, driver, clocks, toolkit, whether the driver lets
#              a user who is not root read the hardware counters
#   build      make -j WERROR= all
#   preflight  one profile (silu at tiny): which clock the runner gives;
#              where CUPTI's clock breaks the runner, the steps after it
#              run with ACCELOPT_DEVICE_CLOCK=events, and the log says so
#   calibrate  accelopt calibrate --target cuda
#   test       tests/cli/98-cuda-gpu.sh (make test-cuda), results kept
#   spin       silu at paper and tiny with the runner's synchronize
#              spinning (a patched copy), against the default: the host
#              clock's tail over the CUDA events
#   repeat     one kernel (matmul's baseline, cpu size) in 5 separate runs
#   table      accelopt bench --target cuda --size paper --json, in three
#              parts (the first with the examples and cuBLAS)
#   torch      tests/bench/torch-compare.py beside the table
#   loop       accelopt run --target cuda, three tasks at LOOP_SIZE
#              (default paper), T=2, time-boxed (a cut run writes what it has)
#   clock      the device's clock: silu at tiny (a 5 µs kernel, three
#              runs), silu's example at paper by the default clock (events
#              around the work held behind a gate, the empty call's device
#              time taken off) and by CUPTI's records (CLOCKS="default
#              cupti"), each against the host's clock and the events beside
#              it, and a 200 µs spin kernel
#   examples   the hand-written examples at paper, one run each
#   baselines  the baselines of PAPER_TASKS (default: bmm bmm_softmax
#              add_rmsnorm_matmul mamba) at paper, one profile each
# What a lease of 15 minutes held on an H200 (docs/BENCHMARKS.md, the
# second lease): facts to repeat in 41 s on a machine that had built
# before, table 433 s (18 profiles at 7-78 s and cuBLAS), torch 37 s,
# test 121 s (eight profiles at a time); a cold build is a minute or two.
set -u
cd "$(dirname "$0")/../.." || exit 1
T0=$(date +%s)
BUDGET=${BUDGET:-540}
# the log in OUT, every other file in one archive beside it (the device
# tool brings back a few files only)
OUT=${OUT:-/tmp/gpu-session-out}
O=/tmp/gpu-session-files
rm -rf "$O"
mkdir -p "$OUT" "$O"
exec > >(tee -a "$OUT/log.txt") 2>&1
trap 'tar czf "$OUT/files.tgz" -C "$O" . 2>/dev/null' EXIT
steps=${*:-facts build preflight calibrate clock examples test loop table torch}
export ACCELOPT_HOME=$PWD ACCELOPT_STATE_DIR=${ACCELOPT_STATE_DIR:-/tmp/gpu-session-state}
mkdir -p "$ACCELOPT_STATE_DIR"

left() { echo $((T0 + BUDGET - $(date +%s))); }
step() { echo; echo "=== [$(($(date +%s) - T0)) s] $*"; }
box() { # box SECONDS CMD...: at most SECONDS, never past the deadline;
    # stopped with SIGTERM, then GRACE seconds (default 3) to end
    local s=$1 l g=${GRACE:-3}
    shift
    l=$(($(left) - 3 - g))
    [ "$l" -lt "$s" ] && s=$l
    if [ "$s" -le 3 ]; then
        echo "(not run: the budget is spent) $*"
        return 99
    fi
    timeout -k "$g" "$s" "$@"
}
line() { # line FILE [LABEL]: one profile's figures on a line
    python3 - "$@" <<'PY'
import json, sys
try:
    r = json.load(open(sys.argv[1]))
except Exception:
    try:
        why = open(sys.argv[1] + ".err").read().strip().splitlines()[-1]
    except Exception:
        why = "nothing printed"
    print("%s: no result: %s" % (sys.argv[1], why[:160])); sys.exit(0)
t = r.get("timing", {})
print("%s %s %s: %s median %.2f us (min %.2f), spread %.3f, %s calls, %.1f%% of peak (%s), wall %.1f s %s" % (
      r.get("task"), r.get("size"), sys.argv[2] if len(sys.argv) > 2 else "", r.get("status"),
      r.get("latency_ns", 0) / 1e3, r.get("latency_min_ns", 0) / 1e3, r.get("spread", 0),
      r.get("repeats"), 100 * r.get("pct_of_peak", 0), r.get("bound"), r.get("wall_ns", 0) / 1e9,
      (r.get("reason") or "")[:100]))
# the clocks: which one is the latency, and the others around the same calls
print("    clock %s: host %.2f us (wake %.2f off it), events %.2f us, runner %.2f us, empty call %.2f us off, "
      "raised %s, launch %.2f us" % (
      t.get("clock", "host"), t.get("host_median_ns", 0) / 1e3, t.get("wake_ns", 0) / 1e3,
      t.get("events_median_ns", 0) / 1e3, t.get("runner_reported_median_ns", 0) / 1e3,
      t.get("empty_call_device_ns", 0) / 1e3, t.get("clock_raised_calls", "-"), t.get("launch_ns", 0) / 1e3))
# what the planner is told (the metrics pass)
c = (r.get("device_profile") or {}).get("counters")
if c:
    print("    counters: " + ", ".join("%s %s" % (k, ("%.3g" % v) if isinstance(v, float) else v) for k, v in c.items()))
# where the wall time went (what a profile costs at the paper size)
print("    wall %.1f s: compile %.1f, kernel %.1f, references %.1f, checks %.1f, inputs %.1f, "
      "to device %.1f, from device %.1f, stand-in %.1f, metrics %.1f" % tuple(x / 1e9 for x in (
      r.get("wall_ns", 0), t.get("compile_ns", 0), t.get("kernel_ns", 0), t.get("references_ns", 0),
      t.get("checks_ns", 0), t.get("inputs_ns", 0), t.get("to_device_ns", 0), t.get("from_device_ns", 0),
      t.get("stand_in_ns", 0), t.get("metrics_ns", 0))))
PY
}
profile() { # profile TASK SIZE FILE OUT [options]
    local t=$1 s=$2 f=$3 o=$4
    shift 4
    box 120 bin/accelopt profile --alone --target cuda --task "nkibench/$t" --size "$s" "$@" "$f" \
        >"$o" 2>"$o.err"
}

for s in $steps; do
    case $s in
    facts)
        step facts
        nvidia-smi --query-gpu=name,driver_version,compute_cap,clocks.sm,clocks.max.sm,clocks.mem,power.limit,memory.total --format=csv
        nvcc --version | tail -1; uname -r; nproc
        # the hardware counters (DRAM, SM, L2) need this 0 for a user who is not root
        grep -i 'RmProfilingAdminOnly' /proc/driver/nvidia/params 2>/dev/null || echo "RmProfilingAdminOnly: not readable"
        ;;
    build)
        step build
        box 120 make -s -j"$(nproc)" WERROR= all 2>&1 | grep -E 'error|warning: unused' | head
        ;;
    preflight)
        step "preflight: one profile, which clock"
        profile silu tiny nkibench/silu/baseline.cu "$O/preflight.json"
        line "$O/preflight.json"
        if grep -q "system call" "$O/preflight.json" 2>/dev/null || ! grep -q '"ok"' "$O/preflight.json" 2>/dev/null; then
            tail -3 "$O/preflight.json.err"
            export ACCELOPT_DEVICE_CLOCK=events
            echo "preflight: not ok with the default clock: the steps after this run with ACCELOPT_DEVICE_CLOCK=events"
            profile silu tiny nkibench/silu/baseline.cu "$O/preflight-events.json"
            line "$O/preflight-events.json" events
        fi
        ;;
    calibrate)
        step calibrate
        box 120 bin/accelopt calibrate --target cuda && cp "$ACCELOPT_STATE_DIR/calibration-cuda.json" "$O/"
        ;;
    test)
        step "test-cuda (tests/cli/98-cuda-gpu.sh)"
        export ACCELOPT_TEST_TMP=/tmp/gpu-session-test
        rm -rf "$ACCELOPT_TEST_TMP"; mkdir -p "$ACCELOPT_TEST_TMP"
        (. tests/env.sh; export CUDA_TEST_JOBS=${CUDA_TEST_JOBS:-8}; box 300 bash tests/cli/98-cuda-gpu.sh) | tee "$O/test-cuda.tap"
        cp -r "$ACCELOPT_TEST_TMP/results" "$O/test-results" 2>/dev/null
        unset ACCELOPT_TEST_TMP
        ;;
    repeat)
        step "repeatability: matmul's baseline at the cpu size, 5 separate runs"
        for r in 1 2 3 4 5; do
            profile matmul cpu nkibench/matmul/baseline.cu "$O/repeat-$r.json"; line "$O/repeat-$r.json" "run $r"
        done
        python3 - "$O" <<'PY'
import json, statistics, sys
m = []
for r in range(1, 6):
    try:
        m.append(json.load(open("%s/repeat-%d.json" % (sys.argv[1], r)))["latency_ns"])
    except Exception:
        pass
if m:
    med = statistics.median(m)
    print("medians of %d runs within %+.1f%% .. %+.1f%% of their median (the aim: 2%%)" % (
        len(m), 100 * (min(m) / med - 1), 100 * (max(m) / med - 1)))
PY
        ;;
    clock)
        step "the device's clock: a 5 us kernel three times, silu's example at paper by both clocks"
        for r in 1 2 3; do
            profile silu tiny nkibench/silu/examples/vector_loads.cu "$O/clock-silu-$r.json"
            line "$O/clock-silu-$r.json" "run $r"
        done
        for c in ${CLOCKS:-default cupti}; do
            ACCELOPT_DEVICE_CLOCK=${ACCELOPT_DEVICE_CLOCK:-$c} profile silu paper \
                nkibench/silu/examples/vector_loads.cu "$O/clock-paper-$c.json"
            line "$O/clock-paper-$c.json" "$c"
        done
        profile silu tiny tests/known-speed/cuda/silu_spin.cu "$O/clock-spin.json"
        line "$O/clock-spin.json" "spin 200 us"
        ;;
    baselines)
        step "baselines at paper: ${PAPER_TASKS:=bmm bmm_softmax add_rmsnorm_matmul mamba}"
        for t in $PAPER_TASKS; do
            profile "$t" paper "nkibench/$t/baseline.cu" "$O/paper-$t-baseline.json"
            line "$O/paper-$t-baseline.json" baseline
        done
        ;;
    examples)
        step "the hand-written examples at paper"
        for f in nkibench/*/examples/*.cu; do
            t=$(basename "$(dirname "$(dirname "$f")")")
            o=$O/paper-$t-$(basename "$f" .cu).json
            profile "$t" paper "$f" "$o"; line "$o" "$(basename "$f")"
        done
        ;;
    table)
        # in three parts, each its own JSON, so a part cut by the budget
        # leaves the others whole
        step "the fourteen baselines, the examples and cuBLAS at paper"
        part=0
        for tasks in matmul,silu,bmm_softmax adamw,add_rmsnorm_matmul,bmm,gqa_full,lora,mamba \
            matmul_add_rmsnorm,rmsnorm_matmul,rope_single_freq_apply,swiglu,transpose_matmul; do
            part=$((part + 1))
            extra=(--no-vendor)
            [ $part = 1 ] && extra=(--examples)
            box 900 stdbuf -oL bin/accelopt bench --target cuda --size paper --tasks "$tasks" \
                "${extra[@]}" --json "$O/bench-$part.json" | tee "$O/bench-$part.txt"
        done
        ;;
    torch)
        step "PyTorch eager and torch.compile at paper"
        ours=()
        for f in "$O"/bench-*.json; do
            [ -s "$f" ] && ours+=(--ours "$f")
        done
        box ${TORCH_S:-400} env -u PYTHONPATH PYTHONUNBUFFERED=1 python3 tests/bench/torch-compare.py --size paper \
            --calibration "$ACCELOPT_STATE_DIR/calibration-cuda.json" "${ours[@]}" | tee "$O/torch.txt"
        ;;
    loop)
        step "accelopt run --target cuda: matmul silu bmm_softmax, ${LOOP_SIZE:=paper} size, T=2"
        # stopped by the budget, a run writes its partial results: give it time
        GRACE=20 box ${LOOP_S:-400} bin/accelopt run matmul silu bmm_softmax --target cuda --size "$LOOP_SIZE" \
            --iters 2 --out "$O/loop" >"$O/loop.jsonl" 2>"$O/loop.err"
        tail -12 "$O/loop.err"
        cat "$O/loop/summary.txt" 2>/dev/null
        # what each kernel's profile cost, as the loop's profiler saw it
        python3 - "$O/loop" <<'PY'
import glob, json, statistics, sys
walls = []  # history.jsonl keeps each profile's wall time, not its timing's parts
for f in glob.glob(sys.argv[1] + "/**/history.jsonl", recursive=True):
    for l in open(f):
        try:
            r = json.loads(l)
        except ValueError:
            continue
        if isinstance(r, dict) and r.get("wall_ns"):
            walls.append(r["wall_ns"] / 1e9)
if walls:
    print("loop: %d profiles, wall median %.1f s (min %.1f, max %.1f)" % (
          len(walls), statistics.median(walls), min(walls), max(walls)))
PY
        ;;
    spin)
        # the host clock sits 24-36 us above the events for ~100 us kernels
        # (docs/BENCHMARKS.md): is it the runtime's blocking wait in the
        # synchronize?  The same profiles with the runner asking for a
        # spinning wait, from a patched copy of the harness
        step "the host clock's tail: the runner's synchronize spinning, against the default"
        S=/tmp/gpu-session-spin
        rm -rf "$S" && mkdir -p "$S" && cp -r lib nkibench prompts "$S/" &&
            sed -i 's|    check(cudaSetDevice(0), "selecting the GPU");|    check(cudaSetDeviceFlags(cudaDeviceScheduleSpin), "asking for a spinning wait");\n&|' \
                "$S/nkibench/harness/cuda/runner.cu" && grep -q ScheduleSpin "$S/nkibench/harness/cuda/runner.cu" &&
            for r in 1 2; do
                for k in default spin; do
                    h=$PWD
                    [ $k = spin ] && h=$S
                    ACCELOPT_HOME=$h profile silu paper "$h/nkibench/silu/examples/vector_loads.cu" "$O/spin-$k-$r.json"
                    line "$O/spin-$k-$r.json" "$k, run $r"
                    ACCELOPT_HOME=$h profile silu tiny "$h/nkibench/silu/baseline.cu" "$O/spin-tiny-$k-$r.json"
                    line "$O/spin-tiny-$k-$r.json" "$k, run $r"
                done
            done
        ;;
    *) echo "gpu-session.sh: no step '$s'" >&2 ;;
    esac
done
step "done ($(left) s of the budget left)"
nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader
