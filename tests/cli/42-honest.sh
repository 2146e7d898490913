# 42-honest.sh - honest kernels in every style models write (comments about
# the rules, intrinsics, pragmas, builtins, attributes, static tables,
# scratch buffers, system headers, vector extensions) all pass the checks
# (issue 14, part 8: integrity works both ways)
. tests/cli/helpers.sh
ensure_calibration
for k in tests/honest/*.c; do
    name=$(basename "$k" .c)
    out=$RESULTS/honest-$name.json
    timeout 120 bin/accelopt profile --alone --task nkibench/matmul --size tiny --budget 0.1 --warmup 0.02 \
        "$k" >"$out" 2>"$T/honest-$name.err"
    status=$(field "$out" "r['status']" 2>/dev/null)
    [ "$status" = ok ]; ok $? "$name: ok (got ${status:-nothing}: $(field "$out" "(r.get('reason') or '')[:100]" 2>/dev/null))"
done
# the cost of continuing the stopped runner was timed before the kernel's
# first call and taken off: present, positive, and under the latency
python3 -c "
import json, sys
r = json.load(open(sys.argv[1]))
w = r['timing']['wake_ns']
sys.exit(0 if 0 < w < r['latency_ns'] + w and r['latency_min_ns'] > 0 else 1)" "$RESULTS/honest-pragmas.json"
ok $? "the runner's wake-up was timed on empty commands and taken off each call"
python3 -c "
import json, sys
r = json.load(open(sys.argv[1]))
sys.exit(0 if 0 <= r['machine_load'] < 1000 else 1)" "$RESULTS/honest-pragmas.json"
ok $? "a result says how busy the machine was (machine_load: the load average per CPU; issue 47)"
python3 -c "
import json, sys
r = json.load(open(sys.argv[1]))
# matmul at tiny moves 4*(M*K + K*N + M*N) bytes: t_memory_ns at the bandwidth quoted
sys.exit(0 if abs(r['t_memory_ns'] * r['memory_bw_gbs'] - 4 * (96*128 + 128*160 + 96*160)) < 1e-6 * 192512 else 1)" "$RESULTS/honest-pragmas.json"
ok $? "a result says which bandwidth t_memory_ns takes (memory_bw_gbs: $(field "$RESULTS/honest-pragmas.json" "r.get('memory_bw_gbs')") GB/s; issue 55)"
python3 -c "import json,sys; r=json.load(open(sys.argv[1]))
sys.exit(0 if 0 < r['machine_slowdown'] < 100 and r['machine_spread'] >= 0 and r['machine_spread_calibrated'] >= 0 else 1)" "$RESULTS/honest-pragmas.json"
ok $? "...and how much slower the profiler's own probe ran than when calibrated ($(field "$RESULTS/honest-pragmas.json" "round(r['machine_slowdown'], 2)")x)"
