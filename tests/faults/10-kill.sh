# 10-kill.sh - kill -9 of a random stage at random moments while runs are in
# flight, ACCELOPT_KILL_ROUNDS times (default 6; 30 for the full count):
# every slot ends with exactly one result, every run with one done, redone
# work stays bounded by the kills, nothing is left running.
. tests/cli/helpers.sh
. tests/faults/cluster.sh
ensure_calibration
ROUNDS=${ACCELOPT_KILL_ROUNDS:-6}
TASKS="matmul silu swiglu"
[ "$ROUNDS" -gt 10 ] && TASKS="matmul silu swiglu bmm lora adamw"

start_broker && start_fsync_redis kill
ok $? "a broker with fault control and a redis with AOF"
start_stages
SUBMIT_OPTS="--iters 3 --beam 2 --plans 2 --samples 1 --topk 2" submit_runs "$T/runs" $TASKS
ok $? "accelopt submit sends the runs to the running stages"
[ "$(wc -l <"$T/runs")" -eq "$(echo $TASKS | wc -w)" ]; ok $? "submit prints one run id per task"
for _ in $(seq 100); do
    bin/accelopt status --redis "$REDIS_URL" --json >"$T/status.jsonl" 2>/dev/null
    [ "$(grep -c '"phase":"' "$T/status.jsonl")" -eq "$(wc -l <"$T/runs")" ] && break
    sleep 0.1
done
python3 - "$T/status.jsonl" "$T/runs" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
assert sorted(r["run"] for r in rows) == sorted(open(sys.argv[2]).read().split()), rows
assert all(r["phase"] in ("baseline", "collect", "memory") and r["iters"] == 3 for r in rows), rows
PY
ok $? "accelopt status lists the runs in flight with their phase and iterations"

kills=0
stages=(selector planner executor profiler summarizer)
while [ "$kills" -lt "$ROUNDS" ]; do
    sleep "$(python3 -c 'import random; print(round(random.uniform(0.3, 2.5), 2))')"
    s=${stages[$((RANDOM % 5))]}
    p=$(replica_pid "$s" 1)
    [ -n "$p" ] && ours "$p" "$(cat "$T/logs/$s-1.sup")" && kill -9 "$p" 2>/dev/null && kills=$((kills + 1)) && echo "kill $kills: $s ($p)" >>"$T/logs/kills"
done
wait_done "$T/runs" $((300 + ROUNDS * 15)) || { diagnose "$T/runs"; false; }
ok $? "every run finished after $ROUNDS kill -9s of random stages"
redone=$(check_runs "$T/runs" 11)
ok $? "every slot holds exactly one result, every run one done (1 + 2 + 4 + 4 kernels each)"
echo "# $kills kills, $redone result messages redone" >&2
[ "${redone:-999}" -le $((kills * 4)) ]; ok $? "redone work is bounded by the kills ($redone results redone for $kills kills)"
bin/accelopt status --redis "$REDIS_URL" >"$T/status.txt"
[ "$(grep -c done "$T/status.txt")" -eq 0 ]; ok $? "accelopt status lists no finished run as in flight"
stop_all_replicas
leftovers; ok $? "no stage and no kernel of a killed profiler is left running"
