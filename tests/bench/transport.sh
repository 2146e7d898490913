#!/usr/bin/env bash
# transport.sh - messages per second through one stage doing no work:
# `accelopt relay` (the stage loop: parse, emit under the run key, offsets
# stored after delivery) from accelopt.tasks to accelopt.runs on the
# embedded broker.  The input is produced first; the clock runs from the
# relay's start to the last message read back on accelopt.runs.
#   tests/bench/transport.sh [MESSAGES] [PARTITIONS]
#   BROKERS=HOST:PORT tests/bench/transport.sh ...   the same on a real
#       cluster (pipeline/kafka/broker.sh), on topics of a fresh prefix
# The mock cluster keeps about 5 MB per partition and drops older messages:
# keep MESSAGES x 300 bytes under 5 MB x PARTITIONS.
set -eu
cd "$(dirname "$0")/../.."
N=${1:-100000}
P=${2:-12}
T=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; rm -rf "$T"' EXIT
if [ -n "${BROKERS:-}" ]; then
    B=$BROKERS
    export ACCELOPT_TOPIC_PREFIX=bench.$$.$RANDOM. # every tool below, on topics of its own
    bin/accelopt broker --brokers "$B" --partitions "$P" >/dev/null
else
    bin/accelopt broker --partitions "$P" >"$T/addr" 2>/dev/null &
    for _ in $(seq 100); do [ -s "$T/addr" ] && break; sleep 0.05; done
    B=$(head -1 "$T/addr")
fi
# realistic small messages: an envelope and a 200-byte body, 64 runs
python3 - "$N" >"$T/in.jsonl" <<'PY'
import json, sys
for i in range(int(sys.argv[1])):
    print(json.dumps({"type": "task", "v": 1, "id": "task:%d" % i, "run": "run-%d" % (i % 64),
                      "task": "matmul", "target": "cpu", "iter": 0, "body": "x" * 200}))
PY
bin/accelopt produce -b "$B" accelopt.tasks <"$T/in.jsonl" 2>/dev/null
t0=$(date +%s%N)
bin/accelopt relay -b "$B" ${RELAY_OPTS:-} accelopt.tasks accelopt.runs 2>"$T/relay.err" &
relay=$!
bin/accelopt consume -b "$B" accelopt.runs -n "$N" --idle 60 >/dev/null 2>"$T/consume.err" || { tail -n 3 "$T/consume.err" "$T/relay.err"; exit 1; }
t1=$(date +%s%N)
kill -TERM $relay
wait $relay || true
python3 -c "import sys; n,ns=int(sys.argv[1]),int(sys.argv[2]); print('%d messages through one relay in %.2f s: %.0f messages/s' % (n, ns/1e9, n/(ns/1e9)))" "$N" $((t1 - t0))
grep -h "messages in" "$T/relay.err" | sed 's/^/# /'
