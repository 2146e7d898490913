#!/usr/bin/env bash
# kafka-faults.sh - a run on a real Kafka broker (one node, KRaft, of its
# own), undisturbed and with faults: the broker killed (-9) and started
# again after its 1st, 3rd and 5th result, the selector killed (-9) after
# the 2nd and the profiler after the 4th (accelopt run restarts them).
# The scripted model server answers every role; prints per run: the tree,
# faults or none, wall s, kernels, model calls, model calls made twice.
#   tests/bench/kafka-faults.sh [N] [COMMIT]
# N runs of each kind (default 2), alternating; with COMMIT, that commit's
# build runs the same, alternating with this tree's.  FAULTS=broker3+stages2:
# only the runs with faults.
set -u
here=$(cd "$(dirname "$0")/../.." && pwd)
n=${1:-2} commit=${2:-}
cd "$here"
T=$(mktemp -d)
KD=$T/kafka
# KEEP=1: the runs' directories and the model server's logs are kept (the
# folder is named at the end)
trap 'kill $(jobs -p) 2>/dev/null; pipeline/kafka/broker.sh stop "$KD"; wait 2>/dev/null;
      [ -n "$commit" ] && git worktree remove --force "$T/old"
      if [ -n "${KEEP:-}" ]; then echo "kept: $T" >&2; else rm -rf "$T"; fi' EXIT
trees=("$here")
if [ -n "$commit" ]; then
    git worktree add -q "$T/old" "$commit" && make -s -C "$T/old" >/dev/null 2>&1 || exit 1
    trees=("$T/old" "$here")
fi
export ACCELOPT_STATE_DIR=$T/state ACCELOPT_BUDGET=0.1 ACCELOPT_WARMUP=0.02
bin/accelopt calibrate --bw-mib 256 >/dev/null 2>&1
B=$(pipeline/kafka/broker.sh start "$KD") || exit 1
python3 tests/msgs.py knob nkibench/matmul/baseline.c BLOCK_N 256 >"$T/fast.c"
python3 tests/replies/distinct-plans.py "$T/fast.c" >"$T/script.json"
printf '%-10s %-7s %7s %8s %12s %6s\n' tree faults wall_s kernels model_calls twice
k=0
for i in $(seq "$n"); do
    for faults in ${FAULTS:-none broker3+stages2}; do
        for d in "${trees[@]}"; do
            k=$((k + 1))
            name=$([ "$d" = "$here" ] && echo this || echo "${commit:0:8}")
            prefix=b$k.
            (cd "$d" && bin/accelopt broker --brokers "$B" --topic-prefix "$prefix" --partitions 4 >/dev/null 2>&1 ||
                bin/accelopt broker --brokers "$B" --partitions 4 >/dev/null 2>&1) # an old tree has no prefix
            rport=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
            redis-server --port "$rport" --bind 127.0.0.1 --dir "$T" --save '' >/dev/null 2>&1 &
            rpid=$!
            : >"$T/llm$k.log"
            python3 tests/llm_server.py "$T/script.json" "$T/llm$k.port" "$T/llm$k.log" 2>/dev/null &
            lpid=$!
            for _ in $(seq 100); do [ -s "$T/llm$k.port" ] && redis-cli -p "$rport" ping >/dev/null 2>&1 && break; sleep 0.05; done
            pre=()
            (cd "$d" && bin/accelopt run --help 2>/dev/null | grep -q topic-prefix) && pre=(--topic-prefix "$prefix")
            t0=$(date +%s.%N)
            (cd "$d" && ACCELOPT_LOG=info ACCELOPT_LLM_URL=http://127.0.0.1:$(cat "$T/llm$k.port")/v1 \
                ACCELOPT_PLANNER_MODEL=plan-m ACCELOPT_EXECUTOR_MODEL=exec-m ACCELOPT_SUMMARIZER_MODEL=sum-m \
                ACCELOPT_LLM_KEY=sk-bench-0001 exec bin/accelopt run matmul --size tiny --iters 2 --beam 2 \
                --plans 2 --samples 1 --brokers "$B" "${pre[@]}" --redis "redis://127.0.0.1:$rport" --json \
                --out "$T/run$k") >"$T/run$k.jsonl" 2>"$T/run$k.err" &
            run=$!
            if [ $faults != none ]; then
                for at in 1 2 3 4 5; do
                    for _ in $(seq 1500); do
                        c=$(grep -c ' ([0-9.]* s)$' "$T/run$k/logs/profiler.log" 2>/dev/null); [ "${c:-0}" -ge $at ] && break
                        kill -0 $run 2>/dev/null || break
                        sleep 0.2
                    done
                    case $at in
                    2) pkill -KILL -f "accelopt-selector --brokers $B" ;;
                    4) pkill -KILL -f "accelopt-profiler --brokers $B" ;;
                    *) kill -KILL "$(cat "$KD/pid")"; sleep 2; pipeline/kafka/broker.sh start "$KD" >/dev/null ;;
                    esac
                done
            fi
            wait $run
            wall=$(echo "$(date +%s.%N) - $t0" | bc)
            kill $lpid $rpid 2>/dev/null
            wait $lpid $rpid 2>/dev/null
            python3 - "$T/run$k.jsonl" "$T/llm$k.log" "$name" "$faults" "$wall" <<'PY'
import collections, json, sys
done = [json.loads(l) for l in open(sys.argv[1])]
reqs = [json.loads(l) for l in open(sys.argv[2])]
seen = collections.Counter(json.dumps([r["model"], r["messages"]], sort_keys=True) for r in reqs)
twice = sum(n - 1 for n in seen.values())
kernels = done[0]["kernels_evaluated"] if done else "none"
print("%-10s %-7s %7.1f %8s %12d %6d" % (sys.argv[3], sys.argv[4][:7], float(sys.argv[5]), kernels, len(reqs), twice))
PY
        done
    done
done
