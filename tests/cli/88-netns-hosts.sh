# 88-netns-hosts.sh - three hosts on one machine, joined only by a network
# (issue 58): network namespaces, a bridge and veth pairs.  Host A runs a
# real Kafka broker, redis and four stages; hosts P1 and P2 run a profiler
# each, and reach A by its address on the bridge alone.  A run's kernels
# are spread over both profilers; P1's profiler is then killed (-9) for
# good, and the run still ends with every slot measured once.
. tests/cli/helpers.sh
ensure_calibration
M=/usr/bin/python3
export ACCELOPT_BUDGET=0.05 ACCELOPT_WARMUP=0.01 # flow, not speed
FAST="-X session.timeout.ms=4000 -X heartbeat.interval.ms=400" # a dead member's share moves quickly
NA=ao-a-$$ NP1=ao-p1-$$ NP2=ao-p2-$$
A_IP=10.77.0.1
descs=("three network namespaces, P1 and P2 joined to A by a bridge"
    "a real Kafka broker and redis on A, listening on A's bridge address"
    "a run's kernels are measured by both profilers, each on its own host"
    "P1's profiler killed (-9) mid-run: the run ends, every slot measured once, P2 took the rest")
if ! has_kafka; then
    for d in "${descs[@]}"; do skip "$d" "no Kafka here (make kafka)"; done
    exit 0
fi
if ! ip netns add "$NA" 2>/dev/null; then
    for d in "${descs[@]}"; do skip "$d" "no network namespaces here (ip netns add needs root)"; done
    exit 0
fi
ip netns add "$NP1" && ip netns add "$NP2"
KD=$T/kafka-a
cleanup() {
    stop_services
    ip netns exec "$NA" pipeline/kafka/broker.sh stop "$KD" 2>/dev/null
    for ns in "$NA" "$NP1" "$NP2"; do
        ip netns pids "$ns" 2>/dev/null | xargs -r kill -KILL 2>/dev/null
        ip netns del "$ns" 2>/dev/null
    done
    at_exit
}
trap cleanup EXIT
on() { local ns=$1; shift; ip netns exec "$ns" "$@"; }
# (in the background, `ip netns exec` itself: it execs the command, so $!
# is the stage; a function's $! would be a subshell that outlives nothing)

# --- the network: a bridge on A, a veth from it to each profiler host -----
net_ok=0
{
    for ns in "$NA" "$NP1" "$NP2"; do ip -n "$ns" link set lo up; done
    ip -n "$NA" link add br0 type bridge && ip -n "$NA" addr add $A_IP/24 dev br0 && ip -n "$NA" link set br0 up
    for i in 1 2; do
        ns=ao-p$i-$$
        ip link add "va$i" netns "$NA" type veth peer name "vp$i" netns "$ns" &&
            ip -n "$NA" link set "va$i" master br0 up &&
            ip -n "$ns" addr add "10.77.0.$((i + 1))/24" dev "vp$i" && ip -n "$ns" link set "vp$i" up
    done
} 2>"$T/net.err" || net_ok=1
# (reached: A's redis answers P1 and P2 below, on A's bridge address)
ok $net_ok "${descs[0]} $(head -c 200 "$T/net.err")"

# --- host A: broker, redis, the stages but the profiler ------------------
BR=$(ACCELOPT_KAFKA_HOST=$A_IP on "$NA" pipeline/kafka/broker.sh start "$KD" 2>"$T/kafka-a.err")
RP=6379
PASS=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n') # a redis others reach has a password
ip netns exec "$NA" redis-server --port $RP --bind "$A_IP 127.0.0.1" --requirepass "$PASS" --dir "$T" --appendonly yes --save '' \
    --logfile "$T/redis-a.log" >/dev/null 2>&1 &
SERVICE_PIDS="$SERVICE_PIDS $!"
RU=redis://:$PASS@$A_IP:$RP
rping() { local ns=$1; shift; on "$ns" redis-cli -a "$PASS" --no-auth-warning -p $RP "$@" ping 2>/dev/null | grep -q PONG; }
for _ in $(seq 100); do rping "$NA" -h $A_IP && break; sleep 0.05; done
[ "$BR" = "$A_IP:${BR#*:}" ] && on "$NA" bin/accelopt broker --brokers "$BR" --partitions 4 >"$T/topics.out" 2>&1 &&
    rping "$NP1" -h $A_IP && rping "$NP2" -h $A_IP && ! rping "$NP1" -h 127.0.0.1
ok $? "${descs[1]}; P1 and P2 reach it there, and not on their own loopback ($BR)"
mkdir -p "$T/logs"
for s in selector planner executor summarizer; do
    # shellcheck disable=SC2086
    ip netns exec "$NA" bin/accelopt-$s --brokers "$BR" --redis "$RU" $FAST --log info 2>"$T/logs/$s.log" &
    SERVICE_PIDS="$SERVICE_PIDS $!"
done
# --- hosts P1 and P2: a profiler each -------------------------------------
declare -A prof
for i in 1 2; do
    # shellcheck disable=SC2086
    ip netns exec "ao-p$i-$$" bin/accelopt-profiler --brokers "$BR" --redis "$RU" $FAST --log info 2>"$T/logs/profiler-$i.log" &
    prof[$i]=$!
    SERVICE_PIDS="$SERVICE_PIDS $!"
done

ip netns exec "$NA" bin/accelopt submit matmul silu --brokers "$BR" --redis "$RU" --wait --json --iters 2 --beam 2 \
    --plans 2 --samples 1 --slot-deadline 120 --out "$T/run" >"$T/run.jsonl" 2>"$T/run.err" &
sub=$!
measured() { grep -c ': ok (' "$T/logs/profiler-$1.log" 2>/dev/null; }
for _ in $(seq 1200); do # until each profiler has measured some
    [ "$(measured 1)" -ge 2 ] && [ "$(measured 2)" -ge 2 ] && break
    kill -0 $sub 2>/dev/null || break
    sleep 0.1
done
m1=$(measured 1) m2=$(measured 2)
[ "$m1" -ge 2 ] && [ "$m2" -ge 2 ]
ok $? "${descs[2]} (P1 $m1, P2 $m2 so far)"
kill -0 $sub 2>/dev/null; alive=$?
kill -KILL "${prof[1]}"
wait $sub
rc=$?
m1k=$(measured 1)
[ $alive -eq 0 ] && ! kill -0 "${prof[1]}" 2>/dev/null && run_ended $rc && [ "$(measured 2)" -gt "$m2" ] && $M - "$T/run.jsonl" "$T/run" <<'PY'
import json, sys
done = [json.loads(l) for l in open(sys.argv[1])]
assert sorted(d["task"] for d in done) == ["matmul", "silu"], done
for d in done:
    assert d["stopped"] == "iterations" and d["iterations"] == 2, d
    rows = [json.loads(l) for l in open("%s/%s/history.jsonl" % (sys.argv[2], d["task"]))]
    slots = [(x["iter"], x["slot"]) for x in rows]
    assert len(slots) == len(set(slots)) == d["kernels_evaluated"] >= 3, slots
PY
ok $? "${descs[3]} (P1 measured $m1k, P2 $(measured 2); rc $rc)"
