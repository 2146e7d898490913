#!/usr/bin/env bash
# idle-cost.sh [-X KEY=VALUE...] - what a run costs while it waits on its
# model (issue 53): `accelopt run` over all fourteen tasks at the tiny size
# against a scripted model server that takes 10 minutes a call; once every
# baseline is profiled and the model calls are in flight (no new request
# for 10 s), the CPU time of the run and all its processes over 20 s, as %
# of one core, and the processes counted.  Extra arguments go to the run
# (e.g. -X fetch.wait.max.ms=50, to see another setting).  LOAD=N then
# holds N busy loops beside it for HOLD seconds (default 120) and counts
# what the stages logged of lost group sessions (a rebalance under load).
# BROKER_PID=P counts an outside broker's process too, apart (a real Kafka
# named by --brokers: issue 58).  THREADS=1 adds the CPU by thread name.
set -euo pipefail
cd "$(dirname "$0")/../.."
T=$(mktemp -d /tmp/accelopt-idle-XXXXXX)
RUN_PID= LLM_PID= BUSY=
cleanup() {
    [ -z "$BUSY" ] || kill $BUSY 2>/dev/null || true
    [ -z "$RUN_PID" ] || kill -INT "$RUN_PID" 2>/dev/null || true
    [ -z "$RUN_PID" ] || wait "$RUN_PID" 2>/dev/null || true
    [ -z "$LLM_PID" ] || kill "$LLM_PID" 2>/dev/null || true
    rm -rf "$T"
}
trap cleanup EXIT
echo '{"*": [{"content": "a plan that never comes", "delay": 600}]}' >"$T/script.json"
/usr/bin/python3 tests/llm_server.py "$T/script.json" "$T/port" "$T/requests.jsonl" 2>"$T/llm.err" &
LLM_PID=$!
for _ in $(seq 100); do [ -s "$T/port" ] && break; sleep 0.05; done
tasks=$(ls nkibench | while read -r t; do [ -f "nkibench/$t/task.json" ] && echo "$t"; done)
# shellcheck disable=SC2086
bin/accelopt run $tasks --size tiny --iters 4 --beam 1 --plans 2 --samples 1 \
    --llm-url "http://127.0.0.1:$(cat "$T/port")/v1" --llm-model scripted --out "$T/run" \
    --log warn "$@" >"$T/run.out" 2>"$T/run.err" &
RUN_PID=$!
# the calls are in flight once no new one came for 10 s
last=-1 same=0
while [ $same -lt 10 ]; do
    sleep 1
    n=$( { cat "$T/requests.jsonl" 2>/dev/null || true; } | wc -l)
    if [ "$n" -gt 0 ] && [ "$n" = "$last" ]; then same=$((same + 1)); else same=0; fi
    last=$n
    kill -0 "$RUN_PID" 2>/dev/null || { echo "the run ended early:"; cat "$T/run.err"; exit 1; }
done
tree() { # the run and its descendants
    local all=$1 p
    for p in $(pgrep -P "$1"); do all="$all $(tree "$p")"; done
    echo "$all"
}
ticks() {
    local s=0 p
    for p in $1; do
        [ -r "/proc/$p/stat" ] || continue
        # utime and stime: fields 14 and 15 (the command has no spaces here)
        s=$((s + $(awk '{print $14 + $15}' "/proc/$p/stat")))
    done
    echo $s
}
procs=$(tree "$RUN_PID")
broker_a=$( [ -z "${BROKER_PID:-}" ] || ticks "$BROKER_PID")
for p in $procs; do echo "$p $(awk '{print $14 + $15}' "/proc/$p/stat" 2>/dev/null)"; done | sort >"$T/ticks-a"
threads() { # every thread of procs: "pid/tid program:thread ticks", sorted
    local p t
    for p in $procs ${BROKER_PID:-}; do
        for t in /proc/$p/task/*; do
            [ -r "$t/stat" ] || continue
            echo "$p/${t##*/} $(tr '\0' ' ' <"/proc/$p/cmdline" | cut -d' ' -f1 | xargs -r basename):$(tr ' ' _ <"$t/comm") $(sed 's/.*) //' "$t/stat" | awk '{print $12 + $13}')"
        done
    done | sort
}
threads >"$T/threads-a"
a=$(ticks "$procs")
sleep 20
b=$(ticks "$procs")
broker_b=$( [ -z "${BROKER_PID:-}" ] || ticks "$BROKER_PID")
for p in $procs; do echo "$p $(awk '{print $14 + $15}' "/proc/$p/stat" 2>/dev/null)"; done | sort >"$T/ticks-b"
threads >"$T/threads-b"
hz=$(getconf CLK_TCK)
echo "machine: $(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg); commit $(git rev-parse --short HEAD 2>/dev/null || echo '?'); run options: ${*:-(none)}"
echo "model calls in flight: $last; processes: $(echo "$procs" | wc -w)"
echo "idle: $(echo "scale=2; 100 * ($b - $a) / $hz / 20" | bc)% of one core over 20 s (the run and every stage together)"
[ -z "${BROKER_PID:-}" ] ||
    echo "the outside broker (pid $BROKER_PID): $(echo "scale=2; 100 * ($broker_b - $broker_a) / $hz / 20" | bc)% of one core over the same 20 s"
echo "by program (% of one core; processes):"
join "$T/ticks-a" "$T/ticks-b" | while read -r p x y; do
    echo "$(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | cut -d' ' -f1 | xargs -r basename) $((y - x))"
done | awk -v hz="$hz" '{t[$1] += $2; n[$1]++} END {for (k in t) printf "  %-22s %6.2f%%  %d\n", k, 100 * t[k] / hz / 20, n[k]}' | sort -k2 -rn
if [ -n "${THREADS:-}" ]; then # THREADS=1: by program and thread name, over all processes
    echo "by program:thread (% of one core; threads; an outside broker's too):"
    join "$T/threads-a" "$T/threads-b" | awk -v hz="$hz" '{t[$2] += $5 - $3; n[$2]++} END {for (k in t) if (t[k] > 0) printf "  %-34s %6.2f%%  %d\n", k, 100 * t[k] / hz / 20, n[k]}' | sort -k2 -rn
fi
if [ "${LOAD:-0}" -gt 0 ]; then
    for _ in $(seq "$LOAD"); do (while :; do :; done) & BUSY="$BUSY $!"; done
    sleep "${HOLD:-120}"
    echo "under $LOAD busy loops for ${HOLD:-120} s (load $(cut -d' ' -f1 /proc/loadavg)): lost group sessions logged: $(cat "$T"/run/logs/*.log 2>/dev/null | grep -c -i -E 'SESSTMOUT|session timed out|assignment lost' || true)"
fi
