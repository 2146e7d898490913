# 80-memory-kill.sh - the summarizer killed -9 at random moments while it
# writes the memory, then replayed (at-least-once): every pair ends stored
# exactly once, with its marker; two replicas racing on the same pairs
# store each once; the cap holds throughout
. tests/cli/helpers.sh
M=/usr/bin/python3
ROUNDS=${ACCELOPT_KILL_ROUNDS:-6}   # tests/cli/80-memory-kill.sh with ACCELOPT_KILL_ROUNDS=100 for more
PAIRS=40
start_redis kill || ok 1 "redis starts"
# forty different lessons: a knob moved from one of its values to another,
# no two alike (the same move twice is one lesson: memfold.h)
$M - >"$T/moves.txt" <<'PY'
knobs = {"BLOCK_M": [4, 8, 16, 32, 64, 128], "BLOCK_N": [16, 32, 64, 128, 256, 512], "BLOCK_K": [16, 32, 64, 128, 256]}
moves = [(k, a, b) for k, v in knobs.items() for a in v for b in v if a != b]
for k, a, b in moves[:40]:
    print(k, a, b)
PY
i=0
while read -r knob from to; do
    i=$((i + 1))
    $M tests/msgs.py knob nkibench/matmul/baseline.c "$knob" "$from" >"$T/slow.c"
    $M tests/msgs.py knob nkibench/matmul/baseline.c "$knob" "$to" >"$T/fast.c"
    $M tests/msgs.py pair matmul "$T/slow.c" "$T/fast.c" 1.2 + "pair:kill:$i" "{\"expn\": ${EXPN:-1000}}"
done <"$T/moves.txt" >"$T/pairs.jsonl"
[ "$(wc -l <"$T/pairs.jsonl")" -eq $PAIRS ] || echo "not $PAIRS pairs" >&2

# feed the pairs slowly, so that a kill lands in the middle of the stream
slow_feed() { $M -c '
import sys, time
for line in open(sys.argv[1]):
    sys.stdout.write(line); sys.stdout.flush(); time.sleep(0.01)' "$1" 2>/dev/null; }

check_memory() { # check_memory [MARKERS-EXPECTED|any]
    rcli --raw lrange accelopt:memory:target:cpu 0 -1 >"$T/list.txt"
    for k in $(rcli --scan --pattern 'accelopt:pairdone:pair:kill:*'); do rcli --raw get "$k"; done >"$T/markers.txt"
    $M - "$T/list.txt" "$T/markers.txt" "${1:-$PAIRS}" <<'PY'
import json, sys
items = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
marks = [json.loads(l) for l in open(sys.argv[2]) if l.strip()]
ids = [i["pair_id"] for i in items]
assert len(ids) == len(set(ids)), "a pair was stored twice"
assert sys.argv[3] == "any" or len(marks) == int(sys.argv[3]), "%d markers" % len(marks)
stored = {m["pair_id"] for m in marks if m["stored"]}
assert set(ids) == stored, "items and markers disagree: %d vs %d" % (len(ids), len(stored))
PY
}

killed=0
for r in $(seq "$ROUNDS"); do
    slow_feed "$T/pairs.jsonl" | bin/accelopt-summarizer --redis "$REDIS_URL" >/dev/null 2>&1 &
    pid=$!
    sleep "0.$((RANDOM % 4 + 1))"
    sum_pid=$(pgrep -P $$ -f accelopt-summarizer | head -1)
    [ -n "$sum_pid" ] && kill -9 "$sum_pid" 2>/dev/null && killed=$((killed + 1))
    wait "$pid" 2>/dev/null
done
ok $((killed == 0)) "the summarizer was killed $killed times mid-stream"
stored_before=$(rcli llen accelopt:memory:target:cpu)
check_memory any; ok $? "after the kills, no item without its marker and none twice ($stored_before items)"
bin/accelopt-summarizer --redis "$REDIS_URL" <"$T/pairs.jsonl" >"$T/final.jsonl" 2>/dev/null
ok $? "a final replay of every pair finishes"
[ "$(wc -l <"$T/final.jsonl")" -eq $PAIRS ] &&
    [ "$($M -c "import json; print(len({json.loads(l)['pair_id'] for l in open('$T/final.jsonl')}))")" -eq $PAIRS ]
ok $? "one ack per pair"
check_memory; ok $? "after the replay, every pair stored exactly once"

# two replicas race on the same pairs
rcli flushall >/dev/null
bin/accelopt-summarizer --redis "$REDIS_URL" <"$T/pairs.jsonl" >"$T/race-a.jsonl" 2>/dev/null &
a=$!
bin/accelopt-summarizer --redis "$REDIS_URL" <"$T/pairs.jsonl" >"$T/race-b.jsonl" 2>/dev/null
wait $a
check_memory; ok $? "two replicas racing store each pair once"
cmp -s <(sort "$T/race-a.jsonl") <(sort "$T/race-b.jsonl"); ok $? "and both ack every pair identically"

# the cap under kills
rcli flushall >/dev/null
sed 's/"expn": 1000/"expn": 5/' "$T/pairs.jsonl" >"$T/pairs5.jsonl"
over=0
for r in 1 2 3; do
    slow_feed "$T/pairs5.jsonl" | bin/accelopt-summarizer --redis "$REDIS_URL" >/dev/null 2>&1 &
    pid=$!
    for _ in 1 2 3 4; do
        sleep 0.05
        [ "$(rcli llen accelopt:memory:target:cpu)" -le 5 ] || over=1
    done
    sum_pid=$(pgrep -P $$ -f accelopt-summarizer | head -1)
    [ -n "$sum_pid" ] && kill -9 "$sum_pid" 2>/dev/null
    wait "$pid" 2>/dev/null
done
bin/accelopt-summarizer --redis "$REDIS_URL" <"$T/pairs5.jsonl" >/dev/null 2>&1
[ $over -eq 0 ] && [ "$(rcli llen accelopt:memory:target:cpu)" -eq 5 ]
ok $? "the memory never holds more than ExpN items"
