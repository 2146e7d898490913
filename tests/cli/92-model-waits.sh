# 92-model-waits.sh - a run that waits on its model says so (issue 69, item
# 1): the terminal's line and accelopt status show the model calls in
# flight and how long the oldest has been out; the first attempt that
# fails is said on the terminal as it happens, not after the last one; a
# server that answers nothing is given up in --llm-stall, not --llm-timeout.
. tests/cli/helpers.sh
ensure_calibration
M=/usr/bin/python3
export ACCELOPT_BUDGET=0.1 ACCELOPT_WARMUP=0.02 # flow, not speed

# the planner's server sends its headers, then nothing, for an hour
start_llm hang '{"plan-m": [{"stall": 3600, "content": "never"}], "*": [{"content": "unused"}]}'
export ACCELOPT_LLM_URL=$LLM_URL ACCELOPT_PLANNER_MODEL=plan-m ACCELOPT_EXECUTOR_MODEL=exec-m \
    ACCELOPT_SUMMARIZER_MODEL=sum-m ACCELOPT_LLM_STALL=4 ACCELOPT_LLM_ATTEMPTS=2 ACCELOPT_LLM_BACKOFF=0.1
start=$(date +%s)
script -qec "stty cols 120; timeout 120 bin/accelopt run matmul --iters 1 --beam 1 --plans 1 --samples 1 --out $T/w" \
    /dev/null >"$T/tty.out" 2>&1 &
tty_pid=$!
# accelopt status while the planner's call is out
seen=""
for _ in $(seq 200); do
    bin/accelopt status >"$T/status.out" 2>&1
    grep -Eq 'planner call, [0-9]+ s' "$T/status.out" && { seen=1; break; }
    sleep 0.2
done
sleep 3 # older now
bin/accelopt status >"$T/status2.out" 2>&1
bin/accelopt status --json >"$T/status.json" 2>&1
wait $tty_pid
rc=$?
took=$(($(date +%s) - start))
tr -d '\r' <"$T/tty.out" | sed 's/\x1b\[[0-9;]*[A-Za-z]//g' >"$T/tty.txt"

[ -n "$seen" ] && grep -q 'MODEL CALLS' "$T/status.out"
ok $? "accelopt status shows the planner's call in flight ($(grep matmul "$T/status.out" | grep -o 'CALLS.*\|[0-9]* planner.*'))"
$M - "$T/status.out" "$T/status2.out" "$T/status.json" <<'PY'
import json, re, sys
age = lambda f: int(re.search(r"1 planner call, (\d+) s", open(f).read()).group(1))
assert age(sys.argv[2]) >= age(sys.argv[1]) + 2, (age(sys.argv[1]), age(sys.argv[2]))
rows = [json.loads(l) for l in open(sys.argv[3]) if l.startswith("{")]
c = rows[0]["calls_in_flight"]
assert c["planner"]["calls"] == 1 and c["planner"]["oldest_s"] >= 3 and "executor" not in c, c
PY
ok $? "its age grows while it is out; --json: calls_in_flight by role"
grep -Eq 'waiting on 1 planner call, [0-9]+ s' "$T/tty.txt"
ok $? "the terminal's line says what the run waits on ($(grep -Eo 'waiting on 1 planner call, [0-9]+ s' "$T/tty.txt" | tail -1))"
# a line the terminal would wrap takes two rows, and the next redraw climbs
# one short: each is cut to the width, what it waits on before the figures
awk 'length($0) > 119 && /iter / { bad++ } END { exit bad > 0 }' "$T/tty.txt"
ok $? "on a terminal 120 wide every progress line fits ($(awk '/iter / { if (length($0) > m) m = length($0) } END { print m }' "$T/tty.txt") columns at most)"
warn=$(grep -n 'a planner model call: attempt 1 of 2 failed (stalled: nothing received for 4 s' "$T/tty.txt" | head -1 | cut -d: -f1)
last=$(grep -n 'model calls fail: planner model call failed after 2 attempts' "$T/tty.txt" | head -1 | cut -d: -f1)
[ -n "$warn" ] && [ -n "$last" ] && [ "$warn" -lt "$last" ]
ok $? "the first stalled attempt is said on the terminal when it happens, before the call fails (lines $warn, $last)"
[ "$rc" -eq 1 ] && [ "$took" -lt 60 ]
ok $? "a model that never answers ends the run in --llm-stall x attempts: exit $rc after ${took}s"
[ "$(grep -c '"model": "plan-m"' "$LLM_LOG")" -eq 2 ]
ok $? "two attempts reached the server"
