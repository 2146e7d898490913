# 35-lost-message.sh - a message the transport acknowledged and lost (the
# mock broker under injected faults once acked a result it never kept,
# with librdkafka 2.0.2's idempotent producer): here a run's baseline
# kernel is taken off its topic by a consumer in the profiler's group,
# which commits it and measures nothing.  With --reask-after the selector
# sends the run's open phase again once its result has been missing that
# long, and the run ends; the model is not asked twice for what the
# stages answered already.
. tests/cli/helpers.sh
. tests/faults/cluster.sh
ensure_calibration
export ACCELOPT_REASK_AFTER=8 # the selector's: the others have no such option

start_broker && start_fsync_redis lost
ok $? "a broker and a redis"
for s in selector planner executor summarizer; do start_replica $s 1; done
SUBMIT_OPTS="--iters 1 --beam 1 --plans 1 --samples 1" submit_runs "$T/runs" matmul
ok $? "a run submitted, with no profiler yet"
# the baseline kernel, taken in the profiler's group and committed: lost
bin/accelopt consume -b "$B" -g accelopt-profiler accelopt.kernels.cpu -n 1 --idle 60 >"$T/taken.jsonl" 2>/dev/null
grep -q '"type":"kernel"' "$T/taken.jsonl"
ok $? "its baseline kernel taken off the topic and committed, never measured"
start_replica profiler 1
wait_done "$T/runs" 120 || { diagnose "$T/runs"; false; }
ok $? "the run ends: its phase went again once the result was missing"
grep -q "results missing for [0-9]* s: its phase's messages go again" "$T/logs/selector-1.log"
ok $? "the selector says it sent the phase again"
check_runs "$T/runs" 2 >/dev/null
ok $? "every slot holds exactly one result, the run one done"
# the phase sent again forgot only its own iteration's acted-on marks: the
# task message's (no iteration) is kept, so a replay of it is still
# refused (issue 68: every mark of the run went)
run=$(head -1 "$T/runs")
rcli hkeys "accelopt:run:$run:acted" | grep -qx "selector:task:$run"
ok $? "the re-ask kept the marks of the other iterations' messages (the task's)"
stop_all_replicas
leftovers; ok $? "no stage is left running"
