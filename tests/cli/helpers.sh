# helpers.sh - sourced by the CLI tests: TAP output and common fixtures.
# A script runs alone as well (`bash tests/cli/48-noise.sh` from the tree,
# after `make`): then it makes the scratch directory and sandbox uid range
# tests/run.sh would have given it, and removes them at the end.
set -u
if [ -z "${ACCELOPT_TEST_TMP:-}" ]; then
    . "$(dirname "${BASH_SOURCE[0]}")/../env.sh"
    ALONE_TMP=$ACCELOPT_TEST_TMP # removed at exit (at_exit)
fi
cd "$ACCELOPT_HOME"
T=$ACCELOPT_TEST_TMP
RESULTS=${ACCELOPT_RESULTS:-$T/results} # every result line a test keeps, checked by schemas.py
mkdir -p "$RESULTS"
n=0

ok() { # ok CONDITION-STATUS DESCRIPTION
    n=$((n + 1))
    if [ "$1" -eq 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fi
}

skip() { # skip DESCRIPTION WHY: a test this machine cannot run, counted as skipped
    n=$((n + 1))
    echo "ok $n - $1 # SKIP $2"
}

check() { # check DESCRIPTION -- COMMAND...
    local d=$1
    shift
    "$@" >/dev/null 2>&1
    ok $? "$d"
}

# accelopt run's (and submit --wait's) status when the run went to its end:
# 0, or 3 when no task's result beat its baseline (README, exit codes)
run_ended() { [ "$1" -eq 0 ] || [ "$1" -eq 3 ]; }

# jq-like field access with python (no extra package needed)
field() { # field JSON-FILE EXPR   (EXPR over r, the parsed object)
    python3 -c "import json,sys; r=json.load(open(sys.argv[1])); v=$2; print('' if v is None else v)" "$1"
}

# The checks' python needs its standard library only: skipping site (the
# .pth files of dist-packages) saves a quarter of each start's CPU here, and
# the suite starts it about a thousand times.  A check that needs a package
# (jsonschema, numpy) calls /usr/bin/python3.
python3() { command python3 -S "$@"; }

# the calibration every test shares (small arrays keep it quick): one per
# machine, kept in build/ for later runs and slices for a day while its CPU
# is this one (20-calibrate.sh still measures for itself)
ensure_calibration() {
    local cal=$ACCELOPT_STATE_DIR/calibration-cpu.json kept=build/test-calibration-cpu.json
    [ -f "$cal" ] && return
    mkdir -p "$ACCELOPT_STATE_DIR"
    if [ -n "$(find "$kept" -mmin -1440 2>/dev/null)" ] && python3 - "$kept" <<'PY'
import json, sys
model = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "")
c = json.load(open(sys.argv[1]))
sys.exit(0 if c.get("cpu_model") == model and "probe_mean_ns" in c else 1)  # the probe came with issue 47
PY
    then
        cp "$kept" "$cal"
    else
        bin/accelopt calibrate --bw-mib 64 >/dev/null 2>&1 && cp "$cal" "$kept.tmp" &&
            mv "$kept.tmp" "$kept"
    fi
}

# processes of this test run's sandbox uids (tests/run.sh gives each run a
# range of its own) still alive, beyond those there before the test
count_nobody() {
    local first=${ACCELOPT_SANDBOX_UIDS%-*} last=${ACCELOPT_SANDBOX_UIDS#*-}
    ps -eo uid= | awk -v f="$first" -v l="$last" '$1 >= f && $1 <= l { n++ } END { print n + 0 }'
}
NOBODY_BEFORE=$(count_nobody)
nobody_procs() {
    echo $(($(count_nobody) - NOBODY_BEFORE))
}

# background services a test starts; stopped when the test exits
SERVICE_PIDS=
# a pid of ours only while its parent is this shell: one that ended long
# ago may be another test's process by now (tests run side by side, and
# pids come round again)
ours() { [ "$(ps -o ppid= -p "$1" 2>/dev/null | tr -d ' ')" = "${2:-$$}" ]; }
stop_services() {
    local p
    for p in $SERVICE_PIDS; do ours "$p" && kill "$p" 2>/dev/null; done
    for p in $SERVICE_PIDS; do wait "$p" 2>/dev/null; done
    SERVICE_PIDS=
}
at_exit() {
    stop_services
    [ -z "${KAFKA_ALONE:-}" ] || pipeline/kafka/broker.sh stop "$ACCELOPT_TEST_KAFKA_DIR"
    [ -z "${ALONE_TMP:-}" ] || rm -rf "$ALONE_TMP"
}
trap at_exit EXIT

free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# start_redis NAME: a private redis-server (AOF on) on a free port; sets
# REDIS_PORT and REDIS_URL.  The port is free when picked, not when bound:
# a script beside this one may take it first, and a ping would then reach
# that script's redis (its flushall would empty ours).  So the server that
# answers must report our pid, or a new port is tried.
start_redis() {
    local dir=$T/redis-$1 pid
    mkdir -p "$dir"
    for _ in 1 2 3 4 5; do
        REDIS_PORT=$(free_port)
        REDIS_URL=redis://127.0.0.1:$REDIS_PORT
        redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --dir "$dir" --appendonly yes --save '' \
            --logfile "$dir/log" >/dev/null 2>&1 &
        pid=$!
        SERVICE_PIDS="$SERVICE_PIDS $pid"
        for _ in $(seq 100); do
            kill -0 "$pid" 2>/dev/null || break # lost the port: try another
            redis-cli -p "$REDIS_PORT" info server 2>/dev/null | tr -d "\r" | grep -qx "process_id:$pid" && return 0
            sleep 0.05
        done
        kill "$pid" 2>/dev/null
    done
    return 1
}
rcli() { redis-cli -p "$REDIS_PORT" "$@"; }

# test_kafka NAME [PARTITIONS]: the suite's real Kafka broker (one for the
# whole run: tests/run.sh; a script run alone starts its own), shared by
# the tests each on topics of a prefix of its own.  Sets B (its address),
# P (the prefix, "t.NAME.PID.") and ON_KAFKA ("--brokers B --topic-prefix
# P", a tool's arguments); makes P's topics, PARTITIONS each (default 4).  1 where there is no Kafka (no java, no `make kafka`, or
# ACCELOPT_TEST_KAFKA=0): then the caller takes the embedded mock.
has_kafka() {
    [ "${ACCELOPT_TEST_KAFKA:-1}" != 0 ] && command -v java >/dev/null &&
        ls build/kafka/lib/kafka_2.13-*.jar >/dev/null 2>&1
}
test_kafka() {
    local dir
    has_kafka || return 1
    if [ -z "${ACCELOPT_TEST_KAFKA_DIR:-}" ]; then
        export ACCELOPT_TEST_KAFKA_DIR=$T/kafka
        KAFKA_ALONE=1
    fi
    dir=$ACCELOPT_TEST_KAFKA_DIR
    mkdir -p "$dir"
    # the first test to ask starts it; the others wait on the lock, then find it
    (
        flock 9
        [ -s "$dir/address" ] && [ -f "$dir/pid" ] && kill -0 "$(cat "$dir/pid")" 2>/dev/null && exit 0
        rm -f "$dir/address"
        pipeline/kafka/broker.sh start "$dir" >/dev/null 2>>"$dir/start.err" 9>&- # the broker must not hold the lock
    ) 9>"$dir.lock" || { echo "# the shared Kafka broker did not start: $(tail -1 "$dir/start.err")" >&2; return 1; }
    B=$(cat "$dir/address")
    P=t.$1.$$.
    ON_KAFKA="--brokers $B --topic-prefix $P"
    bin/accelopt broker --brokers "$B" --topic-prefix "$P" --partitions "${2:-4}" >/dev/null 2>>"$T/kafka-topics.err"
}

# start_llm NAME SCRIPT-JSON: the scripted model server of tests/llm_server.py;
# sets LLM_URL (the /v1 base) and LLM_LOG (one JSON line per request)
start_llm() {
    local dir=$T/llm-$1
    mkdir -p "$dir"
    printf '%s\n' "$2" >"$dir/script.json"
    LLM_LOG=$dir/requests.jsonl
    : >"$LLM_LOG"
    /usr/bin/python3 tests/llm_server.py "$dir/script.json" "$dir/port" "$LLM_LOG" 2>"$dir/err" &
    SERVICE_PIDS="$SERVICE_PIDS $!"
    for _ in $(seq 100); do [ -s "$dir/port" ] && break; sleep 0.05; done
    LLM_URL=http://127.0.0.1:$(cat "$dir/port")/v1
    [ -s "$dir/port" ]
}
llm_requests() { wc -l <"$LLM_LOG"; }
# jl FILE INDEX EXPR: EXPR over r, line INDEX (python index: -1 is the last)
# of a JSON Lines file
jl() {
    python3 -c "import json,sys; r=json.loads(open(sys.argv[1]).read().splitlines()[$2]); v=$3; print('' if v is None else v)" "$1"
}
