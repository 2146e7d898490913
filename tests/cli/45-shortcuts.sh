# 45-shortcuts.sh - kernels that take a mathematical shortcut (a softmax
# without the max subtraction, attention without the scaling, a norm without
# its gain, adamw without its bias correction, ...) are refused, each on the
# input set its first line names; the control kernel passes.
. tests/cli/helpers.sh
export ACCELOPT_BUDGET=0.1 ACCELOPT_WARMUP=0.02 # these test what is found and refused, not speed
ensure_calibration
for k in tests/shortcuts/*.c; do
    name=$(basename "$k" .c)
    task=$(sed -n '1s/.*task: \([a-z_]*\).*/\1/p' "$k")
    expect=$(sed -n '1s/.*expect: \([a-z_]*\).*/\1/p' "$k")
    set=$(sed -n '1s/.*set: \([a-z0-9-]*\).*/\1/p' "$k")
    out=$RESULTS/shortcut-$name.json
    timeout 120 bin/accelopt profile --alone --task "nkibench/$task" --size tiny "$k" >"$out" 2>/dev/null
    [ "$(field "$out" "r['status']")" = "$expect" ]
    ok $? "$name: $expect ($(field "$out" "r['status']"): $(field "$out" "r.get('reason')" | cut -c1-120))"
    if [ "$expect" != ok ]; then
        field "$out" "r['reason']" | grep -q "input set '$set'"
        ok $? "$name: caught on input set '$set'"
    fi
done
