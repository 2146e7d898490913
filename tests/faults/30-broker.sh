# 30-broker.sh - broker outages and request errors injected through the mock
# cluster's fault injection while runs are in flight: no stage exits,
# nothing is lost, the work resumes when the fault clears.
. tests/cli/helpers.sh
. tests/faults/cluster.sh
ensure_calibration

# under its injected faults the mock once acked a result it never kept
# (librdkafka 2.0.2's idempotent producer; 35-lost-message): the selector
# asks again for a phase whose results are missing a minute
export ACCELOPT_REASK_AFTER=60
start_broker mock && start_fsync_redis broker # its faults are the mock's commands
ok $? "a broker with fault control and a redis"
start_stages
SUBMIT_OPTS="--iters 3 --beam 2 --plans 2 --samples 1 --topk 2" submit_runs "$T/runs" matmul silu swiglu
ok $? "runs submitted"
sleep 2
broker_ctl down
sleep 4
broker_ctl up
sleep 2
broker_ctl errors produce 30 NOT_LEADER_FOR_PARTITION
broker_ctl errors fetch 30 NOT_LEADER_FOR_PARTITION
sleep 2
broker_ctl errors offsetcommit 10 REQUEST_TIMED_OUT
broker_ctl errors heartbeat 5 NOT_COORDINATOR
broker_ctl rtt 300
sleep 3
broker_ctl rtt 0
for _ in $(seq 50); do [ "$(grep -c "control:" "$T/logs/broker.log")" -ge 8 ] && break; sleep 0.1; done
[ "$(grep -c "control:" "$T/logs/broker.log")" -eq 8 ]; ok $? "the broker took the 8 fault commands"
wait_done "$T/runs" 420 || { diagnose "$T/runs"; false; }
ok $? "every run finished across an outage, request errors and a slow broker"
check_runs "$T/runs" 11 >/dev/null
ok $? "every slot holds exactly one result, every run one done"
n_restarts=$(restarts)
[ "$n_restarts" -eq 0 ]; ok $? "no stage exited ($n_restarts restarts)"
stop_all_replicas
leftovers; ok $? "no stage is left running"
