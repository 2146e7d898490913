#!/usr/bin/env bash
# broker.sh - a one-node Apache Kafka broker of our own (KRaft: broker and
# controller in one process, no ZooKeeper), on free loopback ports, its
# data, settings and log in a directory of ours.
#
#   pipeline/kafka/broker.sh start DIR   prints HOST:PORT once it serves
#                                        (again: the same ports and data)
#   pipeline/kafka/broker.sh stop DIR    a controlled shutdown, waited for
#
# ACCELOPT_KAFKA_HOST: the address it listens on and gives its clients
# (default 127.0.0.1; another host's clients need one they can reach).
# The jars come from Maven Central through `make kafka` (part of `make
# deps`) into build/kafka/lib; ACCELOPT_KAFKA_LIB names another folder.
# `accelopt broker --brokers HOST:PORT` makes the accelopt topics; a topic
# a stage uses before then is made with ACCELOPT_KAFKA_PARTITIONS (12).
# Tuned to wait cheaply (issue 67: idle, 8-12% of a core before, about
# 2% after): the serial collector and C1 alone (a test broker's load
# needs no C2, whose compiles went on for minutes), two request handlers
# and one network thread (each wakes every 300 ms), one group
# coordinator thread (4 by default, each polling on its own), and the
# controller's no-op records every 30 s (500 ms by default).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
lib=${ACCELOPT_KAFKA_LIB:-$root/build/kafka/lib}
parts=${ACCELOPT_KAFKA_PARTITIONS:-12}
heap=${ACCELOPT_KAFKA_HEAP:-512m}
host=${ACCELOPT_KAFKA_HOST:-127.0.0.1}
usage() { echo "usage: $0 start|stop DIR" >&2; exit 2; }
case $host in *[!A-Za-z0-9.-]* | "") echo "broker.sh: ACCELOPT_KAFKA_HOST '$host' is not a host name or IPv4 address" >&2; exit 2 ;; esac
[ $# -eq 2 ] || usage
dir=$2

# Is the process there and not a zombie?  (One killed with -9 is a zombie
# until its new parent reaps it, which some init processes take seconds to.)
alive() {
    local st
    st=$(ps -o stat= -p "$1" 2>/dev/null) && [ -n "$st" ] && [ "${st#Z}" = "$st" ]
}

free_port() {
    python3 -c 'import socket, sys; s = socket.socket(); s.bind((sys.argv[1], 0)); print(s.getsockname()[1])' "$host"
}

start() {
    [ -d "$lib" ] && ls "$lib"/kafka_2.13-*.jar >/dev/null 2>&1 ||
        { echo "broker.sh: no Kafka in $lib: run 'make kafka' first" >&2; exit 2; }
    command -v java >/dev/null || { echo "broker.sh: no java (make deps installs it)" >&2; exit 2; }
    mkdir -p "$dir"
    dir=$(cd "$dir" && pwd)
    if [ -f "$dir/pid" ] && alive "$(cat "$dir/pid")"; then
        echo "broker.sh: a broker already runs from $dir (pid $(cat "$dir/pid"))" >&2
        exit 1
    fi
    local port cport
    if [ -f "$dir/server.properties" ]; then # started again: its ports and data as before
        host=$(sed -n 's|^listeners=PLAINTEXT://\([^:]*\):.*|\1|p' "$dir/server.properties")
        port=$(sed -n 's|^listeners=PLAINTEXT://[^:]*:\([0-9]*\),.*|\1|p' "$dir/server.properties")
        cport=$(sed -n 's|^listeners=.*CONTROLLER://[^:]*:\([0-9]*\)$|\1|p' "$dir/server.properties")
    else
        port=$(free_port)
        cport=$(free_port)
        while [ "$cport" = "$port" ]; do cport=$(free_port); done
    fi
    [ -n "$port" ] && [ -n "$cport" ] || { echo "broker.sh: no ports in $dir/server.properties" >&2; exit 1; }
    cat >"$dir/server.properties" <<PROPS
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@$host:$cport
listeners=PLAINTEXT://$host:$port,CONTROLLER://$host:$cport
advertised.listeners=PLAINTEXT://$host:$port
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
log.dirs=$dir/data
num.partitions=$parts
auto.create.topics.enable=true
offsets.topic.replication.factor=1
offsets.topic.num.partitions=12
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
group.min.session.timeout.ms=1000
log.retention.hours=168
metadata.max.idle.interval.ms=30000
num.io.threads=2
num.network.threads=1
group.coordinator.threads=1
PROPS
    cat >"$dir/log4j2.properties" <<LOG
rootLogger.level = INFO
rootLogger.appenderRef.file.ref = file
appender.file.type = File
appender.file.name = file
appender.file.fileName = $dir/kafka.log
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
LOG
    local jvm=(java -Xms"$heap" -Xmx"$heap" -XX:+UseSerialGC -XX:-UsePerfData -XX:TieredStopAtLevel=1
               -Djava.awt.headless=true -Dlog4j2.configurationFile="$dir/log4j2.properties"
               -cp "$lib/*")
    if [ ! -f "$dir/data/meta.properties" ]; then
        "${jvm[@]}" kafka.tools.StorageTool format -t "$("${jvm[@]}" kafka.tools.StorageTool random-uuid)" \
            -c "$dir/server.properties" >"$dir/format.out" 2>&1 ||
            { cat "$dir/format.out" >&2; exit 1; }
    fi
    : >"$dir/kafka.log"
    setsid "${jvm[@]}" kafka.Kafka "$dir/server.properties" >"$dir/stdout" 2>&1 </dev/null &
    echo $! >"$dir/pid"
    for _ in $(seq 600); do
        if grep -q "Kafka Server started" "$dir/kafka.log" 2>/dev/null; then
            echo "$host:$port" >"$dir/address"
            echo "$host:$port"
            return 0
        fi
        alive "$(cat "$dir/pid")" || break
        sleep 0.1
    done
    echo "broker.sh: the broker did not start (its log: $dir/kafka.log)" >&2
    tail -n 20 "$dir/stdout" "$dir/kafka.log" >&2 || true
    stop
    exit 1
}

stop() {
    local pid
    [ -f "$dir/pid" ] || return 0
    pid=$(cat "$dir/pid")
    if alive "$pid"; then
        kill -TERM "$pid"
        for _ in $(seq 300); do alive "$pid" || break; sleep 0.1; done
        alive "$pid" && kill -KILL "$pid" 2>/dev/null
    fi
    rm -f "$dir/pid"
}

case $1 in
    start) start ;;
    stop) stop ;;
    *) usage ;;
esac
