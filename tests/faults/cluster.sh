# cluster.sh - sourced by the fault tests after tests/cli/helpers.sh: a
# streaming deployment on this machine, as systemd would run it.  The
# embedded broker takes fault commands on a FIFO; redis runs with AOF
# (appendfsync always: an acknowledged write survives kill -9); each stage
# replica runs under a restart loop like Restart=on-failure with
# RestartPreventExitStatus=2.
export ACCELOPT_BUDGET=0.1 ACCELOPT_WARMUP=0.02 # quick timing: these tests check flow
export ACCELOPT_LOG=info
FAST="-X session.timeout.ms=4000 -X heartbeat.interval.ms=400" # quick group rejoins
T=$T/$(basename "$0" .sh) # a directory of its own: the tests share ACCELOPT_TEST_TMP
mkdir -p "$T/logs"

# start_broker [mock]: sets B (its address).  The suite's real Kafka broker
# (4.x, KRaft: test_kafka in tests/cli/helpers.sh), on topics of this
# suite's own prefix (P); else, or with `mock`, the embedded broker
# (librdkafka's mock cluster), which alone takes the fault commands of
# `broker_ctl CMD` (down, up, rtt, request errors: 30-broker).
start_broker() {
    if [ "${1:-}" != mock ] && has_kafka; then
        test_kafka "$(basename "$0" .sh)" 12 || return 1
        export ACCELOPT_TOPIC_PREFIX=$P # every tool of the suite speaks in its topics
        echo "# broker: Kafka ($B, topics prefixed $P)"
        return 0
    fi
    P=
    mkfifo "$T/broker.ctl"
    bin/accelopt broker --control <"$T/broker.ctl" >"$T/broker.out" 2>"$T/logs/broker.log" &
    SERVICE_PIDS="$SERVICE_PIDS $!"
    exec 7>"$T/broker.ctl" # held open: the broker reads commands until the test ends
    for _ in $(seq 100); do [ -s "$T/broker.out" ] && break; sleep 0.05; done
    B=$(head -1 "$T/broker.out")
    echo "# broker: the embedded mock cluster ($B)"
    [ -n "$B" ]
}
broker_ctl() { echo "$*" >&7; }

# start_fsync_redis NAME: start_redis with every write on disk before the reply
start_fsync_redis() {
    start_redis "$1" && rcli config set appendfsync always >/dev/null
}

# start_replica STAGE ID [ARGS...]: one replica under a restart loop; its
# log is $T/logs/STAGE-ID.log, its restarts counted in $T/logs/STAGE-ID.starts
start_replica() {
    local stage=$1 id=$2
    shift 2
    (
        trap 'kill -TERM $child 2>/dev/null; wait $child; exit 0' TERM
        while :; do
            echo start >>"$T/logs/$stage-$id.starts"
            bin/accelopt-"$stage" --brokers "$B" ${P:+--topic-prefix "$P"} --redis "$REDIS_URL" $FAST "$@" \
                </dev/null >/dev/null 2>>"$T/logs/$stage-$id.log" &
            child=$!
            echo "$child" >"$T/logs/$stage-$id.pid"
            wait $child
            rc=$?
            [ "$rc" -eq 2 ] && exit 2 # refused its settings: restarting cannot help
            [ -e "$T/logs/$stage-$id.stop" ] && exit 0
            sleep 0.3
        done
    ) &
    SUPERVISORS="${SUPERVISORS:-} $!"
    echo $! >"$T/logs/$stage-$id.sup"
}
replica_pid() { cat "$T/logs/$1-$2.pid" 2>/dev/null; }
replica_starts() { wc -l <"$T/logs/$1-$2.starts"; }
# restarts of the first replica of every stage, together
restarts() {
    local n=0 s
    for s in selector planner executor profiler summarizer; do n=$((n + $(replica_starts $s 1) - 1)); done
    echo $n
}
stop_replica() { # stop_replica STAGE ID: SIGTERM, no restart
    touch "$T/logs/$1-$2.stop"
    kill -TERM "$(cat "$T/logs/$1-$2.sup")" 2>/dev/null
    wait "$(cat "$T/logs/$1-$2.sup")" 2>/dev/null
}

# start_stages: one replica of each of the five stages
start_stages() {
    for s in selector planner executor profiler summarizer; do start_replica $s 1; done
}

stop_all_replicas() {
    local p
    touch "$T/logs/all.stop"
    for f in "$T"/logs/*.sup; do
        [ -e "$f" ] || continue
        touch "${f%.sup}.stop"
        kill -TERM "$(cat "$f")" 2>/dev/null
    done
    for p in ${SUPERVISORS:-}; do wait "$p" 2>/dev/null; done
}

# submit_runs OUT TASK... (extra options in SUBMIT_OPTS): the run ids to OUT
submit_runs() {
    local out=$1
    shift
    bin/accelopt submit --brokers "$B" --redis "$REDIS_URL" $FAST ${SUBMIT_OPTS:-} "$@" >"$out" 2>>"$T/logs/submit.log"
}

# wait_done RUNS-FILE SECONDS: until every run's state says done (a run of
# the builtin model measures every slot: it takes a move from a parent once,
# issue 66, so three tasks at the cpu size are about 30 profiles)
wait_done() {
    local until=$(($(date +%s) + $2)) run left
    while [ "$(date +%s)" -lt "$until" ]; do
        left=0
        for run in $(cat "$1"); do
            rcli hget "accelopt:run:$run" state | grep -q '"phase":"done"' || left=1
        done
        [ "$left" -eq 0 ] && return 0
        sleep 0.5
    done
    return 1
}

# diagnose RUNS-FILE: on stderr (the runner shows its last 20 lines), what
# each unfinished run waits for, what the stages last said of it, and the
# dead letters; the logs are kept under /tmp/accelopt-fault-logs/
diagnose() {
    local run keep=/tmp/accelopt-fault-logs/$(basename "$T")-$(date +%Y%m%d-%H%M%S)
    mkdir -p "$keep" && cp -r "$T/logs" "$keep/" 2>/dev/null
    for run in $(cat "$1"); do
        rcli hget "accelopt:run:$run" state | grep -q '"phase":"done"' && continue
        rcli hget "accelopt:run:$run" state |
            python3 -c 'import json,sys; s=json.load(sys.stdin); print("diagnose: %s phase %s iter %s" % (sys.argv[1], s["phase"], s["iter"]))' "$run" >&2
        echo "diagnose: slots filled: $(rcli hkeys "accelopt:run:$run:iter:$(rcli hget "accelopt:run:$run" state |
            python3 -c 'import json,sys; print(json.load(sys.stdin)["iter"])')" | tr '\n' ' ')" >&2
        grep -h "$run" "$T"/logs/*.log | tail -4 | cut -c1-200 | sed 's/^/diagnose: /' >&2
        # on the topic or not: lost on its way to the broker, or after it
        echo "diagnose: results of $run on accelopt.results: $(bin/accelopt consume -b "$B" accelopt.results \
            --idle 3 2>/dev/null | grep -c "\"run\":\"$run\"")" >&2
    done
    bin/accelopt consume -b "$B" accelopt.dlq --idle 3 2>/dev/null |
        python3 -c 'import json,sys; [print("diagnose: dead letter from %s: %s" % (d["stage"], d["reason"][:150])) for d in map(json.loads, sys.stdin)]' |
        tail -4 >&2
    echo "diagnose: logs kept in $keep" >&2
}

# check_runs RUNS-FILE KERNELS: every slot of every iteration holds exactly
# one result, every run counted KERNELS kernels, and accelopt.runs carries
# one done per run (a resent done has the same id).  Prints the number of
# result messages on accelopt.results beyond one per slot, one per
# comparison and one final head-to-head per run (redone work).
check_runs() {
    local want=$(($(wc -w <"$1") * $2)) n
    bin/accelopt consume -b "$B" accelopt.runs --idle 8 >"$T/done.jsonl" 2>"$T/logs/consume-runs.log"
    bin/accelopt consume -b "$B" accelopt.results --idle 8 >"$T/results.jsonl" 2>"$T/logs/consume-results.log"
    # read short (a busy broker slow to hand a new group its partitions'
    # first messages: the idle time ran out)?  Once more, with patience,
    # from the start of each topic
    n=$(wc -l <"$T/results.jsonl")
    if [ "$n" -lt "$want" ] || [ "$(wc -l <"$T/done.jsonl")" -lt "$(wc -w <"$1")" ]; then
        echo "# read short: $n results of at least $want, $(wc -l <"$T/done.jsonl") dones; reading again" >&2
        bin/accelopt consume -b "$B" accelopt.runs --idle 30 >"$T/done.jsonl" 2>>"$T/logs/consume-runs.log"
        bin/accelopt consume -b "$B" accelopt.results --idle 30 >"$T/results.jsonl" 2>>"$T/logs/consume-results.log"
    fi
    /usr/bin/python3 - "$1" "$2" "$REDIS_PORT" "$T/done.jsonl" "$T/results.jsonl" <<'PY'
import json, subprocess, sys, collections
runs = open(sys.argv[1]).read().split()
assert runs, "no runs"
kernels, port = int(sys.argv[2]), sys.argv[3]
def r(*a):
    return subprocess.run(["redis-cli", "-p", port, *a], capture_output=True, text=True).stdout
done = collections.defaultdict(set)
for line in open(sys.argv[4]):
    d = json.loads(line)
    done[d["run"]].add(d["id"])
results, finals, cmps = collections.Counter(), collections.Counter(), collections.Counter()
for line in open(sys.argv[5]):
    d = json.loads(line)
    if d["run"] in runs and d["kernel_id"].endswith(":final"):
        finals[d["run"]] += 1  # the final head-to-head: no slot of its own
    elif d["run"] in runs and ":cmp:" in d["kernel_id"]:
        cmps[d["kernel_id"]] += 1  # a child against its parent (phase compare): no slot of its own
    elif d["run"] in runs:
        results[(d["run"], d["kernel_id"])] += 1
slots = 0
for run in runs:
    st = json.loads(r("hget", f"accelopt:run:{run}", "state"))
    assert st["phase"] == "done", (run, st["phase"])
    assert st["kernels"] == kernels, (run, st["kernels"], kernels)
    assert len(done[run]) == 1, (run, done[run])
    for i in range(0, int(st["iter"]) + 1):
        h = r("hgetall", f"accelopt:run:{run}:iter:{i}").split("\n")
        filled = [v for v in h[1::2] if v]
        slots += len(filled)
        for v in filled:
            assert json.loads(v)["type"] == "result"
assert slots == kernels * len(runs), (slots, kernels * len(runs))
# every slot's kernel reached accelopt.results at least once
assert len(results) == slots, (len(results), slots)
# a run whose best is not its baseline ends with a head-to-head, which its
# done quotes
for line in open(sys.argv[4]):
    d = json.loads(line)
    if d["run"] in runs and d.get("speedup_method") == "head_to_head":
        assert finals[d["run"]] >= 1, d["run"]
print(sum(results.values()) - slots + sum(n - 1 for n in finals.values()) + sum(n - 1 for n in cmps.values()))
PY
}

# nothing of this test left running: stages (they name our broker and
# prefix), and no
# kernel of a killed profiler (the sandbox user's processes)
leftovers() {
    local i
    # a process of a killed profiler's sandbox dies with it, but not in the
    # same instant: give the kernel's process tree a few seconds, then name
    # whatever is still there
    for i in $(seq 40); do
        ! pgrep -f "accelopt-.*--brokers $B ${P:+--topic-prefix $P}" >/dev/null && [ "$(nobody_procs)" -le 0 ] && return 0
        sleep 0.25
    done
    { pgrep -fa "accelopt-.*--brokers $B ${P:+--topic-prefix $P}"; ps -eo uid,pid,ppid,etimes,args | awk -v f="${ACCELOPT_SANDBOX_UIDS%-*}" -v l="${ACCELOPT_SANDBOX_UIDS#*-}" '$1 >= f && $1 <= l'; } | head -8 | sed 's/^/left: /' >&2
    return 1
}
