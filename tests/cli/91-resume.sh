# 91-resume.sh - a run that was stopped goes on (issue 28): `accelopt run`
# interrupted in its second iteration, then `accelopt run --resume ID`,
# ends as the same run uninterrupted does: every iteration once, every
# slot once, the same kernels per iteration; a finished run resumed gives
# its done messages again; --resume refuses tasks and unknown runs
. tests/cli/helpers.sh
ensure_calibration
M=/usr/bin/python3
export ACCELOPT_BUDGET=0.05 ACCELOPT_WARMUP=0.01 # these runs test flow, not speed
ARGS="--iters 3 --beam 2 --plans 3 --samples 1"

# interrupted NAME [OPTIONS...]: a run of matmul and silu into $T/NAME,
# stopped with SIGINT once its selector reaches iteration 2; sets rc
interrupted() {
    local out=$T/$1 pid
    shift
    # shellcheck disable=SC2086
    ACCELOPT_LOG=info bin/accelopt run matmul silu $ARGS "$@" --json --out "$out" >"$out-1.jsonl" 2>"$out-1.err" &
    pid=$!
    for _ in $(seq 900); do
        grep -q 'iteration 2, ' "$out/logs/selector.log" 2>/dev/null && break
        sleep 0.1
    done
    kill -INT "$pid"
    wait "$pid"
    rc=$?
}
interrupted r
[ $rc = 130 ] && grep -q '"stopped":	"interrupted"' "$T/r/matmul/done.json"
ok $? "interrupted in iteration 2: it stops, its partial results say interrupted (rc $rc)"
id=$(sed -n 's/^# accelopt run \([^:]*\):.*/\1/p' "$T/r/run.conf")
[ -n "$id" ] && grep -qx 'iters = 3' "$T/r/run.conf" && [ "$(wc -l <"$T/r/tasks")" = 2 ]
ok $? "the run's settings and tasks are kept beside its results (run.conf, tasks)"
grep -qF "to go on: accelopt run --resume $id --out $T/r" "$T/r-1.err"
ok $? "an interrupted run says how to go on ($(grep -o 'to go on: .*' "$T/r-1.err" | cut -c1-60))"

ACCELOPT_LOG=info bin/accelopt run --resume "$id" --out "$T/r" --json >"$T/r2.jsonl" 2>"$T/r2.err" &
pid=$!
seen=0 # accelopt status lists the resumed run while it goes on (issue 54)
while kill -0 $pid 2>/dev/null; do
    bin/accelopt status 2>/dev/null | grep -q "^$id-" && { seen=1; break; }
    sleep 0.2
done
wait $pid
run_ended $?; ok $? "accelopt run --resume $id goes on and finishes"
[ $seen = 1 ] && grep -q "run $id: 2 tasks resumed" "$T/r2.err" && grep -q "resuming after iteration 1 " "$T/r2.err"
ok $? "a resumed run says so, and where each task goes on from, and accelopt status lists it meanwhile"
grep -q "the broker lost what was in flight; sending the phase's messages again" "$T/r/logs/selector.log"
ok $? "the selector sends each run's open phase again (the embedded broker is new)"

# the same run, not interrupted
# shellcheck disable=SC2086
bin/accelopt run matmul silu $ARGS --json --out "$T/ref" >"$T/ref.jsonl" 2>"$T/ref.err"
$M - "$T/r2.jsonl" "$T/ref.jsonl" "$T/r" <<'PY'
import json, sys
got = {d["task"]: d for d in map(json.loads, open(sys.argv[1]))}
ref = {d["task"]: d for d in map(json.loads, open(sys.argv[2]))}
assert sorted(got) == ["matmul", "silu"], list(got)
for t, d in got.items():
    r = ref[t]
    assert d["stopped"] == "iterations" and d["iterations"] == 3, d["stopped"]
    assert [h["iter"] for h in d["history"]] == [0, 1, 2, 3], d["history"]
    # the iteration cut in two counts its slots once
    assert [h["kernels"] for h in d["history"]] == [h["kernels"] for h in r["history"]], (d["history"], r["history"])
    assert d["kernels_evaluated"] == r["kernels_evaluated"] == sum(h["kernels"] for h in d["history"])
    rows = [json.loads(l) for l in open("%s/%s/history.jsonl" % (sys.argv[3], t))]
    slots = [(x["iter"], x["slot"]) for x in rows]
    assert len(slots) == len(set(slots)) == d["kernels_evaluated"], slots
PY
ok $? "it ends as the uninterrupted run does: 3 iterations, the same kernels in each, every slot once"

# the same on a real Kafka broker (issue 58), which keeps what was in
# flight when the run stopped: the resumed stages find the stopped run's
# messages there beside the phase sent again, and still count each once
if test_kafka resume; then
    # shellcheck disable=SC2086
    interrupted k $ON_KAFKA
    kid=$(sed -n 's/^# accelopt run \([^:]*\):.*/\1/p' "$T/k/run.conf")
    # shellcheck disable=SC2086
    ACCELOPT_LOG=info bin/accelopt run --resume "$kid" $ON_KAFKA --out "$T/k" --json >"$T/k2.jsonl" 2>"$T/k2.err"
    rc2=$?
    [ "$rc" = 130 ] && run_ended $rc2 && $M - "$T/k2.jsonl" "$T/ref.jsonl" "$T/k" <<'PY'
import json, sys
got = {d["task"]: d for d in map(json.loads, open(sys.argv[1]))}
ref = {d["task"]: d for d in map(json.loads, open(sys.argv[2]))}
assert sorted(got) == ["matmul", "silu"], list(got)
for t, d in got.items():
    assert d["stopped"] == "iterations" and d["iterations"] == 3, d["stopped"]
    assert [h["kernels"] for h in d["history"]] == [h["kernels"] for h in ref[t]["history"]], (d["history"], ref[t]["history"])
    rows = [json.loads(l) for l in open("%s/%s/history.jsonl" % (sys.argv[3], t))]
    slots = [(x["iter"], x["slot"]) for x in rows]
    assert len(slots) == len(set(slots)) == d["kernels_evaluated"], slots
PY
    ok $? "on a real Kafka broker too: interrupted (rc $rc), resumed (rc $rc2), every slot once, the same kernels in each iteration"
else
    skip "interrupted and resumed on a real Kafka broker" "no Kafka here (make kafka)"
fi

ACCELOPT_LOG=warn bin/accelopt run --resume "$id" --out "$T/r" --json >"$T/r3.jsonl" 2>"$T/r3.err"
rc=$?
run_ended $rc && $M - "$T/r2.jsonl" "$T/r3.jsonl" <<'PY'
import json, sys
a = sorted((d["id"], d["kernels_evaluated"], d["speedup"]) for d in map(json.loads, open(sys.argv[1])))
b = sorted((d["id"], d["kernels_evaluated"], d["speedup"]) for d in map(json.loads, open(sys.argv[2])))
assert a == b, (a, b)
PY
ok $? "a finished run resumed gives its done messages again, from its run store (rc $rc)"

bin/accelopt run --resume "$id" --out "$T/r" matmul >/dev/null 2>"$T/u1.err"
[ $? = 2 ] && grep -q 'takes no tasks' "$T/u1.err"
ok $? "--resume with tasks is a usage error"
bin/accelopt run --resume "no-such-run" --out "$T/none" >/dev/null 2>"$T/u2.err"
[ $? = 2 ] && grep -q 'no run to go on with' "$T/u2.err"
ok $? "--resume of a run that is not there says so"
# a task path with a newline would come back from runs/<id>/tasks as two
evil=$T/$(printf 'evil\ntask')
cp -r nkibench/silu "$evil"
bin/accelopt run "$evil" --iters 0 --out "$T/evil" >/dev/null 2>"$T/u3.err"
[ $? = 1 ] && grep -q 'holds a newline: it cannot be kept for --resume' "$T/u3.err"
ok $? "a task path with a newline is refused before anything starts"
