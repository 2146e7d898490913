#!/usr/bin/env bash
# rdkafka-idle.sh [BROKERS] - the floor under an idle stage (issue 67): one
# idle librdkafka producer and one idle consumer, each a process of its
# own doing nothing but librdkafka's own housekeeping for 20 s, their CPU
# as % of one core; a stage is one of each.  With BROKERS, that cluster
# (accelopt broker --brokers made its topics); without, an embedded
# broker of its own (`accelopt broker`, librdkafka's mock cluster).  The
# last two: a 1 ms timer slack on the client's threads (lib/wire/kafka.c).
set -euo pipefail
cd "$(dirname "$0")/../.."
T=$(mktemp -d /tmp/accelopt-rdkidle-XXXXXX)
BPID=
trap '[ -z "$BPID" ] || kill $BPID 2>/dev/null || true; rm -rf "$T"' EXIT
cc -O2 -o "$T/idle" tests/bench/rdkafka-idle.c -lrdkafka
brokers=${1:-}
if [ -z "$brokers" ]; then
    bin/accelopt broker >"$T/broker.out" 2>&1 &
    BPID=$!
    for _ in $(seq 100); do brokers=$(grep -o '127.0.0.1:[0-9]*' "$T/broker.out" | head -1 || true); [ -n "$brokers" ] && break; sleep 0.1; done
fi
echo "machine: $(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg); librdkafka $(dpkg-query -W -f '${Version}' librdkafka1 2>/dev/null || echo '?'); brokers $brokers"
pids=
"$T/idle" "$brokers" producer 20 >"$T/p" & pids="$pids $!"
"$T/idle" "$brokers" producer 20 enable.idempotence=true >"$T/pi" & pids="$pids $!"
"$T/idle" "$brokers" consumer 20 >"$T/c" & pids="$pids $!"
"$T/idle" "$brokers" consumer 20 fetch.wait.max.ms=5000 >"$T/c5" & pids="$pids $!"
# the same two with the timer slack the stages give librdkafka's threads
SLACK_NS=1000000 "$T/idle" "$brokers" producer 20 enable.idempotence=true >"$T/pis" & pids="$pids $!"
SLACK_NS=1000000 "$T/idle" "$brokers" consumer 20 fetch.wait.max.ms=5000 >"$T/c5s" & pids="$pids $!"
# shellcheck disable=SC2086
wait $pids
cat "$T/p" "$T/pi" "$T/c" "$T/c5" "$T/pis" "$T/c5s"
