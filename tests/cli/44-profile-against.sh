# 44-profile-against.sh - `accelopt profile --against FILE|baseline` (issue
# 66): the kernel timed head to head against another, in alternating
# rounds on the same fresh inputs, with the speedup and its 95% interval
. tests/cli/helpers.sh
ensure_calibration
fast=nkibench/silu/examples/vector_exp.c # 5x the baseline at tiny on this VM
bin/accelopt profile --task silu --size tiny --against baseline "$fast" >"$T/fast.json" 2>"$T/fast.err"
rc=$?
python3 - "$T/fast.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
h = r["head_to_head"]
print("# %.3fx (%.3f-%.3f), %d rounds" % (h["speedup"], h["speedup_low"], h["speedup_high"], h["rounds"]))
sys.exit(0 if r["status"] == "ok" and h["rounds"] >= 21 and
         1 < h["speedup_low"] <= h["speedup"] <= h["speedup_high"] else 1)
PY
ok $? "a fast kernel against the task's baseline: faster, its interval above 1 (exit $rc)"
bin/accelopt profile --task silu --size tiny --against "$fast" nkibench/silu/baseline.c >"$T/slow.json" 2>"$T/slow.err"
[ "$(field "$T/slow.json" "r['status']")" = ok ] && [ "$(field "$T/slow.json" "r['head_to_head']['speedup_high'] < 1")" = True ]
ok $? "the baseline against that kernel, given as a file: slower, its interval under 1"
script -qc "bin/accelopt profile --task silu --size tiny --against baseline $fast" /dev/null >"$T/tty.txt" 2>&1
grep -q "against  baseline: .*x (95% interval .*, .* rounds head to head): faster" "$T/tty.txt"
ok $? "on a terminal: the speedup, its interval and what it says"
bin/accelopt profile --task silu --build-only --against baseline nkibench/silu/baseline.c >/dev/null 2>"$T/both.err"
[ $? -eq 2 ] && grep -q "nothing to do with --build-only" "$T/both.err"
ok $? "--against with --build-only is a usage error (2)"
bin/accelopt profile --task silu --against "$T/none.c" nkibench/silu/baseline.c >/dev/null 2>"$T/none.err"
[ $? -eq 1 ] && grep -q "none.c" "$T/none.err"
ok $? "a file to time against that is not there: exit 1, named"
