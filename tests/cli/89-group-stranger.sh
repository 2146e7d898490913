# 89-group-stranger.sh - a run on its own (embedded) broker, which any
# local user can reach, ends with a clear message when a consumer that is
# not the run's joins a stage's group and takes its messages (issue 68,
# item 4): the stages say what they hold at every assignment, and the run
# stops when a stage is left short of its topics' partitions for a minute,
# rather than wait out the slot deadline (30 min by default).
. tests/cli/helpers.sh
ensure_calibration
export ACCELOPT_BUDGET=0.1 ACCELOPT_WARMUP=0.02 # this run tests who holds what, not speed
bin/accelopt run matmul --size tiny --iters 300 --log info --json --out "$T/r" >"$T/r.jsonl" 2>"$T/r.err" &
run=$!
B=
for _ in $(seq 100); do
    B=$(sed -n 's/.*, brokers \([0-9.]*:[0-9]*\), logs in .*/\1/p' "$T/r.err")
    [ -n "$B" ] && break
    sleep 0.2
done
# a stranger in the selector's group: the range assignor gives it half of
# accelopt.results, whose messages the selector then never sees
start=$(date +%s)
timeout 150 bin/accelopt consume -b "$B" accelopt.results --group accelopt-selector -n 1000 --idle 140 \
    >"$T/stranger.jsonl" 2>"$T/stranger.err" &
stranger=$!
wait $run
rc=$?
took=$(($(date +%s) - start))
kill $stranger 2>/dev/null
wait $stranger 2>/dev/null
[ $rc -eq 1 ] && grep -q "the run's selector has held [0-9]* of the [0-9]* partitions of its topics for 60 s: a consumer that is not this run's is in its group" "$T/r.err"
ok $? "a stranger in the selector's group ends the run (exit $rc) with a line that says so ($(grep -o "the run's selector has held [0-9]* of the [0-9]*" "$T/r.err"))"
[ "$took" -lt 120 ]
ok $? "... within about a minute of its joining ($took s), not at the slot deadline"
[ -s "$T/r/summary.txt" ] || [ -s "$T/r/run.json" ]
ok $? "... and the run's partial results are written"
