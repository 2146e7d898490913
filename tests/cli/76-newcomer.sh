# 76-newcomer.sh - what a new user meets when something is wrong (issue 45,
# parts 3 and 4): each failure says why in words the user can act on, with
# the README's exit status, and in bounded time.
. tests/cli/helpers.sh
ensure_calibration
export ACCELOPT_BUDGET=0.05 ACCELOPT_WARMUP=0.01
M=/usr/bin/python3
# timed NAME COMMAND...: run it, keep its stderr in $T/NAME.err, its status
# in rc and its seconds in secs (to the tenth)
timed() {
    local name=$1 t0 ms
    shift
    t0=$(date +%s%N)
    "$@" >"$T/$name.out" 2>"$T/$name.err"
    rc=$?
    ms=$((($(date +%s%N) - t0) / 1000000))
    secs=$((ms / 1000)).$((ms % 1000 / 100))
    took_ms=$ms
}
fast() { [ "$took_ms" -lt $(($1 * 1000)) ]; } # fast SECONDS

# --- a target whose device this machine lacks: one line, at once ------------------
if [ -e /dev/nvidia0 ]; then
    skip "run --target cuda without a GPU stops at once" "this machine has a GPU"
else
    timed cuda bin/accelopt run silu --target cuda --out "$T/cuda"
    [ $rc -eq 1 ] && fast 3 && [ "$(wc -l <"$T/cuda.err")" -eq 1 ] &&
        grep -q '^accelopt: error: no NVIDIA GPU on this machine' "$T/cuda.err" && [ ! -e "$T/cuda" ]
    ok $? "run --target cuda without a GPU: one line saying so, exit 1, in ${secs}s, nothing started"
fi
if [ -e /dev/neuron0 ]; then
    skip "run --target trn without a NeuronCore stops at once" "this machine has one"
else
    timed trn env -u ACCELOPT_TRN_DEVICE bin/accelopt run silu --target trn --out "$T/trn"
    [ $rc -eq 1 ] && fast 3 && [ "$(wc -l <"$T/trn.err")" -eq 1 ] &&
        grep -q '^accelopt: error: no NeuronCore on this machine' "$T/trn.err" && [ ! -e "$T/trn" ]
    ok $? "run --target trn without a NeuronCore: one line saying so, exit 1, in ${secs}s, nothing started"
fi

# --- a baseline of the user's own that does not compile ----------------------------
printf 'void kernel(const float *lhs, const float *rhs, float *out, int M, int K, int N)\n{ this is not C; }\n' >"$T/broken.c"
timed broken bin/accelopt run matmul --baseline "$T/broken.c" --iters 1 --out "$T/broken"
# (issue 54) found by a compile before anything starts, the compiler's
# words naming the user's file, and nothing left of the refused run
[ $rc -eq 1 ] && fast 10 && grep -q "$T/broken.c: the baseline does not pass: compile_error" "$T/broken.err" &&
    grep -q "^$T/broken.c:2:.*error: unknown type name 'this'" "$T/broken.err" && ! grep -q "kernel\.c" "$T/broken.err" &&
    [ ! -e "$T/broken" ]
ok $? "run --baseline FILE that does not compile: exit 1 with the compiler's own words on FILE, in ${secs}s, nothing started"

# a baseline that builds but fails its checks: the run's own verdict, and
# the table counts it as the one failed kernel
sed 's/out\[(long)i \* N + j\] += a \* rhs/out[(long)i * N + j] -= a * rhs/' nkibench/matmul/baseline.c >"$T/wrong.c"
bin/accelopt run matmul --size tiny --baseline "$T/wrong.c" --iters 1 --out "$T/wrong" >"$T/wrong.out" 2>"$T/wrong.err"
rc=$?
row=$(grep '^matmul ' "$T/wrong/summary.txt")
[ $rc -eq 1 ] && grep -q "matmul: the baseline did not pass: incorrect" "$T/wrong.err" &&
    [ "$(echo "$row" | awk '{print $2, $4, $5}')" = "baseline_failed 1 1" ]
ok $? "run --baseline FILE that computes the wrong thing: exit 1, and its row says 1 kernel, 1 failed ($row)"

# --- a task directory named like a task: the hint -----------------------------------
mkdir -p "$T/cwd"
cp -r nkibench/silu "$T/cwd/stencil1d"
timed hint sh -c "cd '$T/cwd' && '$ACCELOPT_HOME/bin/accelopt' run stencil1d --out '$T/hint'"
[ $rc -eq 2 ] && fast 3 && grep -q "no task 'stencil1d' in the task roots .*; did you mean ./stencil1d?" "$T/hint.err"
ok $? "run NAME where ./NAME is a task directory: 'did you mean ./NAME?', exit 2, in ${secs}s"

# --- run --help lists no option that run always refuses --------------------------------
bin/accelopt run --help >"$T/help.out" 2>&1
! grep -Eq -- '--(llm|planner|executor|summarizer)-key ' "$T/help.out" && grep -q -- '--llm-key-file' "$T/help.out"
ok $? "run --help lists the key files, not the keys that run refuses on its command line"

# --- the candidates told apart: a search out of moves is not a failure ----------------
# silu's baseline has two knobs; eight plans a kernel leave the builtin
# planner without moves for most of them
timed moves bin/accelopt run silu --iters 2 --beam 1 --plans 8 --samples 1 --out "$T/moves"
run_ended $rc && $M - "$T/moves" <<'PY'
import json, re, sys
d = sys.argv[1]
hist = [json.loads(l) for l in open(d + "/silu/history.jsonl")]
kids = [h for h in hist if h["iter"] > 0]
# told by the result's own field, and said in words for people
exhausted = [h for h in kids if h.get("exhausted") is True]
assert all(h["status"] == "no_code" and "no more knob moves" in h.get("reason", "") for h in exhausted), exhausted
assert not [h for h in kids if h not in exhausted and "no more knob moves" in h.get("reason", "")]
failed = [h for h in kids if h["status"] not in ("ok", "duplicate") and h not in exhausted]
assert exhausted, [h.get("reason") for h in kids]
summary = open(d + "/summary.txt").read()
row = next(l.split() for l in summary.splitlines() if l.startswith("silu "))
assert int(row[4]) == len(failed), ("the table's failed column counts failures only", row, len(failed))
m = re.search(r"^silu: of (\d+) candidates, (\d+) went to the model.*?(\d+) found the search exhausted", summary, re.M)
assert m and int(m.group(1)) == len(kids) and int(m.group(3)) == len(exhausted), summary
assert not re.search(r"\d+ of \d+ kernels failed", summary), "the old wording, which counted duplicates as failures"
PY
ok $? "a search out of knob moves is counted as that, not as failed kernels, in the table and the footer"

# --- the README's own kernel works with the builtin model ------------------------------
$M - README.md "$T/mymatmul.c" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
block = re.search(r"```c\n(/\* mymatmul.c \*/\n.*?)```", text, re.S).group(1)
open(sys.argv[2], "w").write(block)
PY
bin/accelopt profile --alone --task nkibench/matmul --size tiny "$T/mymatmul.c" --json >"$T/mym-profile.json" 2>/dev/null
timed mym bin/accelopt run matmul --baseline "$T/mymatmul.c" --iters 1 --beam 1 --plans 2 --out "$T/mym"
grep -q '"status":"ok"' "$T/mym-profile.json" && run_ended $rc && ! grep -q "declares no knob" "$T/mym.err" &&
    [ "$(grep -c '"iter":1,.*"status":"ok"' "$T/mym/matmul/history.jsonl")" -ge 1 ]
ok $? "the README's mymatmul.c profiles ok, and run --baseline with the builtin model moves its knob (exit $rc)"

# --- accelopt status finds the runs in flight here, with no --redis -------------------
bin/accelopt status >"$T/st0.out" 2>&1
[ $? -eq 0 ] && grep -q "no run of yours is in flight on this machine" "$T/st0.out"
ok $? "status with nothing in flight says so, exit 0"
ACCELOPT_LOG=info bin/accelopt run matmul silu --iters 3 --plans 4 --out "$T/live" >/dev/null 2>"$T/live.err" &
live=$!
seen=
for _ in $(seq 150); do
    bin/accelopt status >"$T/st1.out" 2>&1
    grep -q "matmul" "$T/st1.out" && grep -q "silu" "$T/st1.out" && { seen=1; break; }
    sleep 0.2
done
id=$(sed -n 's/.*: run \([0-9a-f-]*\): redis.*/\1/p' "$T/live.err" | head -1)
bin/accelopt status "$id" --json >"$T/st2.jsonl" 2>&1
[ -n "$seen" ] && [ -n "$id" ] && grep -q "^$id-matmul " "$T/st1.out" && [ "$(grep -c '"run"' "$T/st2.jsonl")" -eq 2 ]
ok $? "status finds this user's run in flight and its tasks, with no --redis (and status ID the one run)"
[ "$(stat -c %a "$ACCELOPT_STATE_DIR/runs")" = 700 ] &&
    [ "$(stat -c %a "$ACCELOPT_STATE_DIR/runs/$id.json")" = 600 ]
ok $? "the run's registration (it holds the private redis's password) is its owner's only"
wait $live
bin/accelopt status >"$T/st3.out" 2>&1
grep -q "no run of yours is in flight" "$T/st3.out" && [ ! -e "$ACCELOPT_STATE_DIR/runs/$id.json" ]
ok $? "once the run has ended, status no longer lists it"

# --- issue 69, items 5, 7, 8, 9: bad input, exit codes, pasted examples, docs -------
timed nofile bin/accelopt profile --task nkibench/matmul "$T/no-such-kernel.c"
[ $rc -eq 2 ] && grep -q "no-such-kernel.c" "$T/nofile.err"
ok $? "profile of a missing file is a usage error (rc $rc)"
timed norun bin/accelopt report no-such-run
[ $rc -eq 2 ] && grep -q "no run directory 'no-such-run'" "$T/norun.err"
ok $? "report of a run that is not there is a usage error (rc $rc)"
head -c 300000 /dev/zero | tr '\0' '/' >"$T/big.c"
timed big bin/accelopt profile --task nkibench/matmul "$T/big.c"
rc1=$rc
timed bigb bin/accelopt run matmul --size tiny --baseline "$T/big.c" --out "$T/bigb"
[ $rc1 -eq 2 ] && [ $rc -eq 2 ] && grep -q "over the 262144 byte limit" "$T/big.err" &&
    grep -q "over the 262144 byte limit" "$T/bigb.err" && [ ! -e "$T/bigb" ]
ok $? "a kernel over the size limit: one limit, 256 KiB, for profile and run --baseline, each a usage error ($rc1, $rc)"
head -c 20000 /dev/urandom >"$T/binary.c"
timed bin bin/accelopt profile --task nkibench/matmul "$T/binary.c"
[ $rc -eq 2 ] && grep -q "is not UTF-8 text" "$T/bin.err" && [ ! -s "$T/bin.out" ] && fast 3 &&
    /usr/bin/python3 -c 'import sys; open(sys.argv[1], encoding="utf-8").read()' "$T/bin.err"
ok $? "a binary file is refused before the compiler sees it: exit 2, in ${secs}s, nothing on stdout, UTF-8 words"
timed twice bin/accelopt run matmul matmul --size tiny --out "$T/twice"
[ $rc -eq 2 ] && grep -q "the task 'matmul' is named twice" "$T/twice.err" && [ ! -e "$T/twice" ]
ok $? "run matmul matmul is a usage error, nothing started (rc $rc)"
timed refused bin/accelopt run matmul --size tiny --brokers 127.0.0.1:1 --out "$T/refused"
[ $rc -ne 0 ] && fast 4 && grep -q "Connection refused" "$T/refused.err"
ok $? "--brokers where nothing listens: said in ${secs}s, not after 10 s (rc $rc)"
# docs/accelopt.conf.example as MODELS.md uses it: its settings but the model server's
grep -vE '^(llm|planner|executor|summarizer)-' docs/accelopt.conf.example >"$T/example.conf"
timed example bin/accelopt run matmul --size tiny --iters 1 --config "$T/example.conf" --out "$T/example"
run_ended $rc
ok $? "accelopt run --config with docs/accelopt.conf.example's settings (the model server's aside) runs (rc $rc)"
# item 2: a run stopped by its wall time ends on the search's figure: never exit 0
timed wall bin/accelopt run matmul --size tiny --iters 200 --wall-time 6 --out "$T/wall"
[ $rc -eq 3 ] && grep -q "wall_time" "$T/wall.out" && { ! grep -q "x search" "$T/wall.out" || grep -q "not compared: 1 task ended above its baseline by the search's own figure only" "$T/wall.err"; }
ok $? "a run its wall time stopped exits 3, its search figure not compared, said ($(grep -o '[0-9.]*x search' "$T/wall.out" | head -1))"
missing=$(grep -ohE "[A-Za-z0-9_./-]+\.md\b" README.md docs/*.md | sort -u | while read -r f; do [ -e "$f" ] || echo "$f"; done | tr '\n' ' ')
[ -z "$missing" ]
ok $? "every document the README and docs cite is in the repository (missing: ${missing:-none})"
echo "1..$n"
