# 89-kafka-sasl.sh - a real Kafka broker that takes no one without the
# deployment's credentials (issue 68, item 4): pipeline/kafka/broker.sh
# --sasl starts one with SASL on every listener and an authorizer; the
# stages' user may use the deployment's topics and groups and nothing
# else.  A keyless client, a wrong password and the right user under
# another prefix are refused, each with a line that says why; a whole run
# with --kafka-file ends normally while a keyless stranger tries to join
# the executors' group, and no process's command line holds the password.
. tests/cli/helpers.sh
ensure_calibration
if ! command -v java >/dev/null || ! ls build/kafka/lib/kafka_2.13-*.jar >/dev/null 2>&1; then
    skip "a Kafka broker with SASL and ACLs" "no java, or no Kafka in build/kafka/lib (make kafka)"
    exit 0
fi
export ACCELOPT_BUDGET=0.1 ACCELOPT_WARMUP=0.02 # this run tests who may talk, not speed
KD=$T/kafka
trap 'pipeline/kafka/broker.sh stop "$KD"; stop_services; at_exit' EXIT
B=$(pipeline/kafka/broker.sh start "$KD" --sasl 2>"$T/kafka-start.err")
case $B in 127.0.0.1:[0-9]*) ok 0 "broker.sh --sasl starts a broker with SASL and ACLs ($B)" ;;
    *) ok 1 "broker.sh --sasl starts a broker: $(tail -3 "$T/kafka-start.err")"; exit 1 ;; esac
F=$KD/client.properties
[ "$(stat -c %a "$F")" = 600 ] && [ "$(stat -c %a "$KD")" = 700 ] && grep -q '^sasl.password=..*' "$F"
ok $? "... the stages' settings in a file of mode 600, in a folder of mode 700"
sed -n 's/^sasl.password=//p' "$F" >"$T/pw" # a pattern file: the password on grep's own command line would match itself

# who may not: no credentials, a wrong password, the right user elsewhere
bin/accelopt broker --brokers "$B" >"$T/keyless.out" 2>&1
[ $? -ne 0 ] && grep -q "SASL or TLS alone drops a client without them: give its settings with --kafka-file" "$T/keyless.out"
ok $? "a keyless client is refused, told why ($(tail -1 "$T/keyless.out" | cut -c1-90)...)"
sed 's/^sasl.password=.*/sasl.password=guess/' "$F" >"$T/guess.properties" && chmod 600 "$T/guess.properties"
bin/accelopt consume -b "$B" --kafka-file "$T/guess.properties" accelopt.plans --group accelopt-executor \
    -n 1 --idle 5 >"$T/guess.out" 2>&1
[ $? -ne 0 ] && grep -q "Invalid username or password" "$T/guess.out"
ok $? "a wrong password is refused"
bin/accelopt broker --brokers "$B" --kafka-file "$F" --partitions 4 >"$T/topics.out" 2>&1 &&
    grep -qx "[1-9][0-9]* topics made on $B (0 there already)" "$T/topics.out"
ok $? "the stages' user makes the accelopt topics with --kafka-file ($(cat "$T/topics.out"))"
timeout 60 bin/accelopt consume -b "$B" --kafka-file "$F" --topic-prefix other. accelopt.results -n 1 \
    --idle 5 >"$T/other.out" 2>&1
[ $? -eq 1 ] && grep -q "the cluster refuses this client: .*Group authorization failed" "$T/other.out"
ok $? "... and is refused, at once, a group outside the deployment's prefix ($(cut -c1-80 "$T/other.out")...)"

# a settings file others may read, or one given without --brokers: refused
cp "$F" "$T/open.properties" && chmod 644 "$T/open.properties"
bin/accelopt broker --brokers "$B" --kafka-file "$T/open.properties" >"$T/open.out" 2>&1
[ $? -ne 0 ] && grep -q "may be read by others (mode 644): chmod 600" "$T/open.out"
ok $? "a --kafka-file others may read is refused"
bin/accelopt run matmul --size tiny --kafka-file "$F" --out "$T/nob" >/dev/null 2>"$T/nob.err"
[ $? -eq 2 ] && grep -q "it goes with --brokers" "$T/nob.err"
ok $? "--kafka-file without --brokers is a usage error (2)"

# a whole run beside a keyless stranger that tries the executors' group
bin/accelopt run matmul --size tiny --iters 1 --brokers "$B" --kafka-file "$F" --json --out "$T/r" \
    >"$T/r.jsonl" 2>"$T/r.err" &
run=$!
bin/accelopt consume -b "$B" accelopt.plans --group accelopt-executor -n 1 --idle 20 >"$T/stranger.out" 2>&1 &
stranger=$!
seen=0
while kill -0 $run 2>/dev/null; do # every command line on the machine, while the run lasts
    grep -lF -f "$T/pw" /proc/[0-9]*/cmdline 2>/dev/null | grep -q . && seen=1
    sleep 0.2
done
wait $run
rc=$?
wait $stranger
srd=$?
run_ended $rc && [ "$(grep -c '"type":"done"' "$T/r.jsonl")" -eq 1 ]
ok $? "a run with --kafka-file ends normally (exit $rc; $(tail -1 "$T/r.err" | cut -c1-60))"
[ $srd -ne 0 ] && grep -q "cannot reach the brokers" "$T/stranger.out"
ok $? "... while the keyless stranger got nothing ($(cut -c1-60 "$T/stranger.out")...)"
[ $seen -eq 0 ] && ! grep -rqF -f "$T/pw" "$T/r" "$T/r.err" "$T/r.jsonl"
ok $? "... and the password was on no command line, in no log or result of the run"

# started again: the same port, the same users, the same ACLs
pipeline/kafka/broker.sh stop "$KD"
B2=$(pipeline/kafka/broker.sh start "$KD" 2>"$T/kafka-start2.err")
[ "$B2" = "$B" ] && bin/accelopt broker --brokers "$B" --kafka-file "$F" >"$T/topics2.out" 2>&1 &&
    grep -qx "0 topics made on $B ([1-9][0-9]* there already)" "$T/topics2.out" &&
    ! bin/accelopt broker --brokers "$B" >/dev/null 2>&1
ok $? "started again it keeps its port, mode and users: the file still opens it, no key still does not"
