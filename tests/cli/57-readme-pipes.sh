# 57-readme-pipes.sh - the README's examples of stages joined by a broker
# and by pipes work pasted as written (issue 54): each ```sh block of
# "Kafka" and "Pipe mode" runs verbatim with bash -e in a directory of its
# own (bin, tests, nkibench and pipeline linked in), and gives what it
# says it gives; every process it started is gone at its end.
. tests/cli/helpers.sh
ensure_calibration
M=/usr/bin/python3
export ACCELOPT_BUDGET=0.05 ACCELOPT_WARMUP=0.01 # these test the plumbing, not speed
# blocks BLOCK-NAME MARKER: the README's sh block holding MARKER, in $T/NAME/run.sh
block() {
    mkdir -p "$T/$1"
    for d in bin tests nkibench pipeline build; do ln -s "$ACCELOPT_HOME/$d" "$T/$1/$d"; done
    $M - "$2" "$T/$1/run.sh" <<'PY'
import re, sys
found = [b for b in re.findall(r"```sh\n(.*?)```", open("README.md").read(), re.S) if sys.argv[1] in b]
assert len(found) == 1, "the README has %d sh blocks with %r" % (len(found), sys.argv[1])
open(sys.argv[2], "w").write(found[0])
PY
}
pasted() { # pasted NAME: run its block as a user pastes it; rc in $rc
    (cd "$T/$1" && timeout 300 bash -e run.sh >out.txt 2>err.txt)
    rc=$?
}

# --- a profiler on a broker, fed by hand ---------------------------------------
block kafka 'accelopt broker > broker.addr'
if [ -s "$T/kafka/run.sh" ]; then
    pasted kafka
    $M - "$T/kafka" "$rc" <<'PY'
import json, sys
d, rc = sys.argv[1], int(sys.argv[2])
assert rc == 0, "exit %d: %s" % (rc, open(d + "/err.txt").read()[-800:])
kernels = [json.loads(l) for l in open(d + "/kernels.jsonl")]
res = [json.loads(l) for l in open(d + "/results.jsonl")]
assert len(kernels) == 4 and all(k["type"] == "kernel" for k in kernels), len(kernels)
assert sorted(r["kernel_id"] for r in res) == sorted(k["id"] for k in kernels), res
assert all(r["status"] == "ok" for r in res), [r["status"] for r in res]
PY
    ok $? "README: the broker example (broker, profiler, produce, consume) gives a result per kernel, pasted as written"
    addr=$(cat "$T/kafka/broker.addr")
    [ -n "$addr" ] && ! pgrep -f -- "--brokers $addr" >/dev/null && ! (exec 3<>"/dev/tcp/${addr%:*}/${addr##*:}") 2>/dev/null
    ok $? "README: the broker example leaves nothing running (no profiler on $addr, nothing listening there)"
else
    ok 1 "README: the broker example is there"
fi

# --- a run on a real Kafka broker of our own (issue 58) ------------------------
block realkafka 'pipeline/kafka/broker.sh start runs/kafka'
if ! command -v java >/dev/null || ! ls build/kafka/lib/kafka_2.13-*.jar >/dev/null 2>&1; then
    skip "README: a run on a real Kafka broker, pasted as written" "no java, or no Kafka in build/kafka/lib (make kafka)"
elif [ -s "$T/realkafka/run.sh" ]; then
    pasted realkafka
    [ $rc -eq 0 ] || [ $rc -eq 3 ] # 3: no gain found, a run that went to its end
    ok $? "README: a run on a real Kafka broker (start, topics, run, stop) ends, pasted as written (exit $rc$(
        [ $rc -le 3 ] || echo ": $(tail -c 300 "$T/realkafka/err.txt")"))"
    # (exit 3 under bash -e stops the block before its last line: stopped here)
    [ $rc -eq 3 ] && (cd "$T/realkafka" && pipeline/kafka/broker.sh stop runs/kafka)
    ! pgrep -f "$T/realkafka/runs/kafka" >/dev/null
    ok $? "README: broker.sh stop leaves no broker running"
else
    ok 1 "README: the real Kafka example is there"
fi

# --- the whole loop through pipes, then one pass at a time ----------------------
block loop 'pipeline/loop.sh task.jsonl'
pasted loop
$M - "$T/loop" "$rc" <<'PY'
import json, sys
d, rc = sys.argv[1], int(sys.argv[2])
assert rc == 0, "exit %d: %s" % (rc, open(d + "/err.txt").read()[-800:])
done = [json.loads(l) for l in open(d + "/done.jsonl")]
assert len(done) == 1 and done[0]["type"] == "done" and done[0]["iterations"] == 3, done
p1 = [json.loads(l) for l in open(d + "/pass1.jsonl")]
p2 = [json.loads(l) for l in open(d + "/pass2.jsonl")]
assert p1 and p2 and {m["type"] for m in p1} <= {"candidate", "kernel", "result", "plan", "pair", "done", "experience"}, p1[:2]
PY
ok $? "README: pipeline/loop.sh ends with the run's done, and iterate.sh passes give message streams"

# --- the stages composed by hand -----------------------------------------------
block hand 'bin/accelopt-profiler > results.jsonl'
pasted hand
$M - "$T/hand" "$rc" <<'PY'
import json, sys
d, rc = sys.argv[1], int(sys.argv[2])
assert rc == 0, "exit %d: %s" % (rc, open(d + "/err.txt").read()[-800:])
res = [json.loads(l) for l in open(d + "/results.jsonl")]
assert len(res) == 8 and all(r["type"] == "result" and r["status"] == "ok" for r in res), [r.get("status") for r in res]
PY
ok $? "README: planner | executor | profiler by hand gives a result for each of 4 plans x 2 samples"
echo "1..$n"
