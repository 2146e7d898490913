# 50-churn.sh - replicas added and removed while runs are in flight: more
# selectors, planners, executors and pinned profilers join; some leave
# cleanly, one is killed, one stalls past its session timeout and loses its
# assignment.  Nothing is lost, every slot holds one result.
. tests/cli/helpers.sh
. tests/faults/cluster.sh
ensure_calibration

start_broker && start_fsync_redis churn
ok $? "a broker and a redis"
start_stages
SUBMIT_OPTS="--iters 3 --beam 2 --plans 2 --samples 1 --topk 2" submit_runs "$T/runs" matmul silu swiglu bmm
ok $? "runs submitted"
sleep 1
start_replica selector 2 --log debug
start_replica planner 2 --log debug
start_replica executor 2
start_replica profiler 2 --cpu 1
sleep 3
stop_replica executor 1                     # leaves the group cleanly
# the planner stalls only once it holds partitions (a rebalance can take
# longer than the 3 s above), else it has no assignment to lose
for _ in $(seq 150); do grep -q "assigned [1-9]" "$T/logs/planner-2.log" && break; sleep 0.1; done
kill -STOP "$(replica_pid planner 2)"       # stalls past its session timeout...
sleep 6
kill -CONT "$(replica_pid planner 2)"       # ...and finds its assignment lost
touch "$T/logs/profiler-2.stop"
kill -9 "$(replica_pid profiler 2)"         # dies, not restarted
stop_replica selector 1                     # selector 2 takes its runs over
start_replica executor 3 --log debug
wait_done "$T/runs" 480 || { diagnose "$T/runs"; false; }
ok $? "every run finished through the churn"
check_runs "$T/runs" 11 >/dev/null
ok $? "every slot holds exactly one result, every run one done"
grep -q "assigned" "$T/logs/selector-2.log" && grep -q "assigned" "$T/logs/executor-3.log"
ok $? "the new replicas got partitions"
stop_replica executor 2
grep -E -q "accelopt-executor: [1-9][0-9]* plans in" "$T/logs/executor-2.log"
ok $? "an added executor took a share of the plans ($(grep -o '[0-9]* plans in' "$T/logs/executor-2.log" | tail -1))"
grep -q "assignment lost" "$T/logs/planner-2.log"
ok $? "the stalled planner noticed its assignment was lost and committed none of it"
grep -q "not stored" "$T"/logs/*.log && echo "# a late commit after a lost assignment was refused" >&2
stop_all_replicas
leftovers; ok $? "no stage is left running"
