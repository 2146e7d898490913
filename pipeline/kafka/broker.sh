#!/usr/bin/env bash
# broker.sh - a one-node Apache Kafka broker of our own (KRaft: broker and
# controller in one process, no ZooKeeper), on free loopback ports, its
# data, settings and log in a directory of ours.
#
#   pipeline/kafka/broker.sh start DIR [--sasl]   prints HOST:PORT once it
#                                        serves (again: the same ports, data
#                                        and mode)
#   pipeline/kafka/broker.sh stop DIR    a controlled shutdown, waited for
#
# --sasl: every listener takes SASL alone and an authorizer refuses what no
# ACL allows (issue 68: on a PLAINTEXT listener any local user could join a
# stage's group and take its messages).  Two users: `admin`, the broker's
# own and a super user, and `accelopt`, allowed everything on the topics
# and groups of the deployment (ACCELOPT_TOPIC_PREFIX + "accelopt." and
# "accelopt-") and nothing else.  They authenticate by SASL/PLAIN: Debian's
# librdkafka (2.0.2) cannot do SCRAM with Kafka 4 (its client-final
# message repeats the client's nonce, which Kafka 4 refuses; mended in
# librdkafka 2.6.1).  PLAIN sends the password as it is: on loopback only
# root can read it there; a broker other hosts reach wants TLS in front
# (SASL_SSL), which this script does not set up.  The stages' settings go
# to DIR/client.properties (mode 600): give it as `--kafka-file`, never the
# password on a command line.  DIR is the broker's alone (mode 700).
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
prefix=${ACCELOPT_TOPIC_PREFIX:-}
usage() { echo "usage: $0 start DIR [--sasl] | stop DIR" >&2; exit 2; }
case $host in *[!A-Za-z0-9.-]* | "") echo "broker.sh: ACCELOPT_KAFKA_HOST '$host' is not a host name or IPv4 address" >&2; exit 2 ;; esac
case $prefix in *[!A-Za-z0-9._-]*) echo "broker.sh: ACCELOPT_TOPIC_PREFIX '$prefix' is not letters, digits, '.', '_' and '-'" >&2; exit 2 ;; esac
sasl=0
case $# in
    2) ;;
    3) [ "$1" = start ] && [ "$3" = --sasl ] || usage; sasl=1 ;;
    *) usage ;;
esac
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

plain_props() {
    cat <<PROPS
listeners=PLAINTEXT://$host:$port,CONTROLLER://$host:$cport
advertised.listeners=PLAINTEXT://$host:$port
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
PROPS
}

new_password() { od -An -N24 -tx1 /dev/urandom | tr -d ' \n'; }

# The passwords: made once, kept in the folder.
sasl_secrets() {
    local jaas='s|.*password="\([0-9a-f]*\)".*|\1|p'
    umask 077
    if [ -f "$dir/admin.properties" ]; then
        admin_pw=$(sed -n "/^sasl.jaas.config=/$jaas" "$dir/admin.properties")
        client_pw=$(sed -n 's|^sasl.password=||p' "$dir/client.properties")
    else
        admin_pw=$(new_password) client_pw=$(new_password)
        # the Java tools' settings (ours: the ACLs) and the stages' (librdkafka)
        printf '%s\n' "security.protocol=SASL_PLAINTEXT" "sasl.mechanism=PLAIN" \
            "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username=\"admin\" password=\"$admin_pw\";" \
            >"$dir/admin.properties"
        printf '%s\n' "# accelopt's stages on this broker: --kafka-file $dir/client.properties" \
            "security.protocol=SASL_PLAINTEXT" "sasl.mechanisms=PLAIN" "sasl.username=accelopt" \
            "sasl.password=$client_pw" >"$dir/client.properties"
    fi
    [ -n "$admin_pw" ] && [ -n "$client_pw" ] || { echo "broker.sh: no passwords in $dir" >&2; exit 1; }
}

sasl_props() {
    cat <<PROPS
listeners=CLIENT://$host:$port,CONTROLLER://$host:$cport
advertised.listeners=CLIENT://$host:$port
inter.broker.listener.name=CLIENT
listener.security.protocol.map=CLIENT:SASL_PLAINTEXT,CONTROLLER:SASL_PLAINTEXT
sasl.enabled.mechanisms=PLAIN
sasl.mechanism.inter.broker.protocol=PLAIN
listener.name.client.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="$admin_pw" user_admin="$admin_pw" user_accelopt="$client_pw";
sasl.mechanism.controller.protocol=PLAIN
listener.name.controller.sasl.enabled.mechanisms=PLAIN
listener.name.controller.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="$admin_pw" user_admin="$admin_pw";
authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer
allow.everyone.if.no.acl.found=false
super.users=User:admin
PROPS
}

# The stages' user may do anything with the deployment's topics and groups
# (prefixed ACLs), and nothing else; made again at every start (an ACL
# there already is kept as it is).
grant() {
    "$@" org.apache.kafka.tools.AclCommand --bootstrap-server "$host:$port" \
        --command-config "$dir/admin.properties" --add --allow-principal User:accelopt --operation All \
        --resource-pattern-type prefixed --topic "${prefix}accelopt." --group "${prefix}accelopt-" \
        >"$dir/acls.out" 2>&1
}

start() {
    [ -d "$lib" ] && ls "$lib"/kafka_2.13-*.jar >/dev/null 2>&1 ||
        { echo "broker.sh: no Kafka in $lib: run 'make kafka' first" >&2; exit 2; }
    command -v java >/dev/null || { echo "broker.sh: no java (make deps installs it)" >&2; exit 2; }
    mkdir -p "$dir"
    chmod 700 "$dir"
    dir=$(cd "$dir" && pwd)
    if [ -f "$dir/pid" ] && alive "$(cat "$dir/pid")"; then
        echo "broker.sh: a broker already runs from $dir (pid $(cat "$dir/pid"))" >&2
        exit 1
    fi
    local port cport
    if [ -f "$dir/server.properties" ]; then # started again: its ports, data and mode as before
        host=$(sed -n 's|^listeners=[A-Z]*://\([^:]*\):.*|\1|p' "$dir/server.properties")
        port=$(sed -n 's|^listeners=[A-Z]*://[^:]*:\([0-9]*\),.*|\1|p' "$dir/server.properties")
        cport=$(sed -n 's|^listeners=.*CONTROLLER://[^:]*:\([0-9]*\)$|\1|p' "$dir/server.properties")
        if [ -f "$dir/admin.properties" ]; then sasl=1; elif [ $sasl = 1 ]; then
            echo "broker.sh: $dir holds a broker without SASL: start it without --sasl, or use a new folder" >&2
            exit 2
        fi
    else
        port=$(free_port)
        cport=$(free_port)
        while [ "$cport" = "$port" ]; do cport=$(free_port); done
    fi
    [ -n "$port" ] && [ -n "$cport" ] || { echo "broker.sh: no ports in $dir/server.properties" >&2; exit 1; }
    [ $sasl = 0 ] || sasl_secrets
    umask 077
    cat >"$dir/server.properties" <<PROPS
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@$host:$cport
controller.listener.names=CONTROLLER
$(if [ $sasl = 1 ]; then sasl_props; else plain_props; fi)
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
            if [ $sasl = 1 ] && ! grant "${jvm[@]}"; then
                echo "broker.sh: the ACLs were not made (their log: $dir/acls.out)" >&2
                tail -n 5 "$dir/acls.out" >&2 || true
                stop
                exit 1
            fi
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
