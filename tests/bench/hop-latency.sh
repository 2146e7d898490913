#!/usr/bin/env bash
# hop-latency.sh [BROKERS] - how long one message takes through a stage
# when nothing else is moving (issue 58): one at a time, `accelopt
# produce` to accelopt.tasks, `accelopt relay` (the stage loop) to
# accelopt.runs, `accelopt consume` back: two fetches that were waiting.
# Without BROKERS, on the embedded broker (librdkafka's mock cluster); with
# them, on that cluster (whose topics `accelopt broker --brokers` made).
#   tests/bench/hop-latency.sh [HOST:PORT] [MESSAGES]
set -eu
cd "$(dirname "$0")/../.."
B=${1:-}
N=${2:-50}
T=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; rm -rf "$T"' EXIT
if [ -z "$B" ]; then
    bin/accelopt broker --partitions 12 >"$T/addr" 2>/dev/null &
    for _ in $(seq 100); do [ -s "$T/addr" ] && break; sleep 0.05; done
    B=$(head -1 "$T/addr")
fi
bin/accelopt relay -b "$B" accelopt.tasks accelopt.runs 2>"$T/relay.err" &
python3 - "$B" "$N" <<'PY'
import json, statistics, subprocess, sys, time
b, n = sys.argv[1], int(sys.argv[2])
group = "hop-%d" % time.time_ns()
cons = subprocess.Popen(["bin/accelopt", "consume", "-b", b, "accelopt.runs", "-g", group, "--idle", "120"],
                        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
tag = "hop:%d" % time.time_ns()
prod = subprocess.Popen(["bin/accelopt", "produce", "-b", b, "accelopt.tasks"], stdin=subprocess.PIPE,
                        stderr=subprocess.DEVNULL, text=True)
def one(i):
    t0 = time.monotonic_ns()
    mine = "%s:%d" % (tag, i)
    prod.stdin.write(json.dumps({"type": "task", "v": 1, "id": mine, "run": "hop",
                                 "task": "matmul", "target": "cpu", "iter": 0}) + "\n")
    prod.stdin.flush()
    while mine not in cons.stdout.readline():  # older messages on the topic pass by
        pass
    return (time.monotonic_ns() - t0) / 1e6
one(-1)  # the first joins the groups: not counted
lat = []
for i in range(n):
    time.sleep(0.3)  # every fetch idle and waiting again
    lat.append(one(i))
prod.stdin.close(); prod.wait(); cons.terminate(); cons.wait()
q = statistics.quantiles(lat, n=20)
print("%s: %d messages, one at a time through one relay: median %.1f ms, p95 %.1f ms, max %.1f ms"
      % (b, n, statistics.median(lat), q[-1], max(lat)))
PY
