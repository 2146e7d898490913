# 50-profiler-stage.sh - accelopt-profiler in pipe mode: one result per kernel,
# dead letters for bad input, the stream keeps flowing, identical kernels cached
. tests/cli/helpers.sh
ensure_calibration
in=$T/stage-in.jsonl
python3 - "$in" <<'PY'
import hashlib, json, sys
src = open("nkibench/silu/baseline.c").read()
def k(i, **kw):
    m = {"type": "kernel", "v": 1, "id": "kernel:r1:1:%d" % i, "run": "r1", "task": "silu",
         "target": "cpu", "iter": 1, "size": "tiny", "slot": "0.0.%d" % i}
    m.update(kw)
    return json.dumps(m)
with open(sys.argv[1], "w") as f:
    f.write(k(0, source=src, sha256=hashlib.sha256(src.encode()).hexdigest(), parent_latency_ns=1e6) + "\n")
    f.write("this is not json\n")
    f.write(k(1, error="the reply had no code block") + "\n")
    f.write(json.dumps({"type": "kernel", "v": 1, "id": "x"}) + "\n")
    f.write(k(2, target="cuda", source=src) + "\n")
    f.write(k(3, task="no_such_task", source=src) + "\n")
    f.write(k(4, source=src, parent_latency_ns=2e6) + "\n")
    f.write(k(5, source="void kernel(const float *x, float *out, int M, int N) { syntax error }") + "\n")
PY
out=$RESULTS/stage.jsonl
dlq=$T/stage-dlq.jsonl
bin/accelopt-profiler --log info --dlq "$dlq" <"$in" >"$out" 2>"$T/stage.err"
ok $? "the stage exits 0 at end of input"
[ "$(wc -l <"$out")" -eq 4 ]; ok $? "four results for four usable kernels ($(wc -l <"$out"))"
[ "$(wc -l <"$dlq")" -eq 4 ]; ok $? "four dead letters ($(wc -l <"$dlq"))"
python3 - "$out" "$dlq" <<'PY'
import json, sys
res = {r["kernel_id"]: r for r in map(json.loads, open(sys.argv[1]))}
dead = [json.loads(l) for l in open(sys.argv[2])]
a, b, c, d = (res["kernel:r1:1:%d" % i] for i in (0, 1, 4, 5))
assert a["status"] == "ok" and a["cached"] is False and a["id"] == "result:kernel:r1:1:0"
assert b["status"] == "no_code" and "no code block" in b["reason"]
assert c["status"] == "ok" and c["cached"] is True and c["latency_ns"] == a["latency_ns"]
assert abs(c["speedup"] - 2e6 / c["latency_ns"]) < 1e-6 * c["speedup"]
assert abs(a["speedup"] - 1e6 / a["latency_ns"]) < 1e-6 * a["speedup"]
assert d["status"] == "compile_error" and "error" in d["diagnostics"]
assert "/work/" not in d["diagnostics"] and "/tmp/" not in d["diagnostics"]
reasons = " | ".join(x["reason"] for x in dead)
assert "not valid JSON" in reasons and "lacks field" in reasons, reasons
assert "target 'cuda'" in reasons and "no_such_task" in reasons, reasons
assert all(x["stage"] == "profiler" and x["payload"] for x in dead)
PY
ok $? "statuses, cache hit with its own speedup, trimmed diagnostics, dead-letter reasons"
grep -q "4 dead letters" "$T/stage.err"; ok $? "the stage reports its counts on stderr"
# stdout carries messages only
python3 -c "import json,sys; [json.loads(l) for l in open(sys.argv[1])]" "$out"; ok $? "stdout is JSON Lines only"
# a reader that leaves early: the stage stops with status 1 and says why, no signal, no hang
timeout 120 bin/accelopt-profiler <"$in" 2>"$T/epipe.err" | head -c 10 >/dev/null
status=${PIPESTATUS[0]}
[ "$status" -eq 1 ] && grep -q "the reader left" "$T/epipe.err"
ok $? "EPIPE stops the stage cleanly (status $status)"

# the reference's process for the timed calls' checks is kept between
# profiles of a task (issue 71), and one that died is started again
python3 - "$T/kept.jsonl" <<'PY'
import hashlib, json, sys
src = open("nkibench/silu/baseline.c").read()
with open(sys.argv[1], "w") as f:
    for i in range(3):  # three kernels the cache cannot answer: one constant apart
        s = src + "\n__attribute__((used)) static const int copy_%d = %d;\n" % (i, i)
        f.write(json.dumps({"type": "kernel", "v": 1, "id": "kernel:r2:1:%d" % i, "run": "r2",
                            "task": "silu", "target": "cpu", "iter": 1, "size": "tiny",
                            "slot": "0.0.%d" % i, "source": s,
                            "sha256": hashlib.sha256(s.encode()).hexdigest()}) + "\n")
PY
mkfifo "$T/kept.fifo"
bin/accelopt-profiler --budget 0.05 <"$T/kept.fifo" >"$T/kept.out" 2>"$T/kept.err" &
kept_pid=$!
exec 7>"$T/kept.fifo"
results() { # results N: wait until N results are out
    for _ in $(seq 600); do [ "$(wc -l <"$T/kept.out")" -ge "$1" ] && return 0; sleep 0.1; done
    return 1
}
sed -n 1p "$T/kept.jsonl" >&7 && results 1
sed -n 2p "$T/kept.jsonl" >&7 && results 2
# between profiles the one runner left is the reference's, stopped: kill it
pkill -KILL -P "$kept_pid" -f '^/work/runner'
sleep 0.2
sed -n 3p "$T/kept.jsonl" >&7 && results 3
exec 7>&-
wait "$kept_pid"
python3 - "$T/kept.out" <<'PY'
import json, sys
r = [json.loads(l) for l in open(sys.argv[1])]
starts = [x["timing"].get("reference_starts") for x in r]
print("# statuses %s, reference processes started %s" % ([x["status"] for x in r], starts))
sys.exit(0 if [x["status"] for x in r] == ["ok"] * 3 and starts == [1, 0, 1] else 1)
PY
ok $? "the checks' reference process is kept for the task's next profile, and started again once killed"

# a profiler killed outright leaves its work directory; the next one on the
# machine removes it, and never one of a profiler still running
W=$T/sweep
mkdir -p "$W/accelopt-prof-old"            # no owner file (an older profiler's): left
# (a stage makes its profiler at its first kernel: one, then stdin stays open)
head -1 "$in" >"$T/one.jsonl"
({ cat "$T/one.jsonl"; sleep 60; } | bin/accelopt-profiler --work-dir "$W" >/dev/null 2>&1 &)
for _ in $(seq 200); do [ -n "$(ls "$W"/accelopt-prof-*/owner 2>/dev/null)" ] && break; sleep 0.05; done
killed=$(ls -d "$W"/accelopt-prof-* | grep -v old)
pkill -KILL -f "accelopt-profiler --work-dir $W"
sleep 0.2
[ -n "$killed" ] && [ -d "$killed" ]
ok $? "a profiler killed outright leaves its work directory behind"
({ cat "$T/one.jsonl"; sleep 60; } | ACCELOPT_LOG=info bin/accelopt-profiler --work-dir "$W" >/dev/null 2>"$T/sweep.err" &)
for _ in $(seq 200); do [ -n "$(ls "$W"/accelopt-prof-*/owner 2>/dev/null | grep -v "$killed")" ] && break; sleep 0.05; done
live=$(ls -d "$W"/accelopt-prof-* | grep -v old | grep -v "$killed")
bin/accelopt profile --alone --task matmul --size tiny --work-dir "$W" --budget 0.05 --warmup 0.01 \
    nkibench/matmul/baseline.c >/dev/null 2>&1
[ ! -e "$killed" ] && [ -n "$live" ] && [ -d "$live" ] && [ -d "$W/accelopt-prof-old" ] &&
    grep -q "left in .* by profilers that are gone" "$T/sweep.err"
ok $? "the next profiler removes it, and says so; a running profiler's and an older one's stay"
pkill -f "accelopt-profiler --work-dir $W"
pkill -f "^sleep 60$" 2>/dev/null || true

# a work directory too long for the paths built under it (the job
# directories, each sandbox's root and its mounts) is refused whole at the
# start, nothing made there, where a job's sandbox root was cut to its
# buffer (issue 70); one that fits is used
long=$T/$(printf 'd%.0s' $(seq 60))
for _ in 1 2 3 4 5 6; do long=$long/$(printf 'd%.0s' $(seq 60)); done
bin/accelopt-profiler --work-dir "$long" <"$T/one.jsonl" >"$T/long.out" 2>"$T/long.err"
rc=$?
[ $rc -eq 2 ] && grep -q -- "--work-dir is ${#long} bytes long: at most 400" "$T/long.err" && [ ! -e "$T/dddddddddd" ] &&
    [ ! -s "$T/long.out" ]
ok $? "a --work-dir of ${#long} bytes is refused at the start (exit $rc), nothing made under it"
fits=$T/$(printf 'e%.0s' $(seq 60))
while [ ${#fits} -lt 340 ]; do fits=$fits/$(printf 'e%.0s' $(seq 60)); done
bin/accelopt-profiler --work-dir "$fits" <"$T/one.jsonl" >"$T/fits.out" 2>"$T/fits.err"
[ $? -eq 0 ] && [ "$(field "$T/fits.out" "r['status']")" = ok ]
ok $? "a --work-dir of ${#fits} bytes holds its job directories and their sandboxes whole (ok)"

# the cpu runner.o is the same for every task: built once, kept in the
# state dir under the hash of what it depends on; a kept one that another
# user could write is never used
set -- "$ACCELOPT_STATE_DIR"/cpu-runner-*.o
[ $# -eq 1 ] && [ -f "$1" ] && [ "$(stat -c %a "$1")" = 644 ]
ok $? "the cpu runner.o was built once and kept for every kernel ($# kept)"
kept=$1
printf 'not an object' >"$kept" && chmod 666 "$kept"
bin/accelopt profile --alone --task nkibench/silu --size tiny --budget 0.05 nkibench/silu/baseline.c >"$T/again.json" 2>"$T/again.err"
[ "$(field "$T/again.json" "r['status']")" = ok ] && [ "$(stat -c %a "$kept")" = 644 ] &&
    [ "$(head -c 4 "$kept" | od -An -c | tr -d ' ')" = "177ELF" ]
ok $? "a kept runner.o that another user could write is not used: built again and kept anew"
# the whole way to the state dir counts, as for the signing key: under a
# directory any user may write (not sticky), another user could swap the
# state dir itself, so nothing is kept there nor taken from there
mkdir -p "$T/open/state" && chmod 777 "$T/open" && chmod 700 "$T/open/state"
cp "$ACCELOPT_STATE_DIR/calibration-cpu.json" "$T/open/state/"
ACCELOPT_STATE_DIR=$T/open/state bin/accelopt profile --alone --task nkibench/silu --size tiny --budget 0.05 \
    nkibench/silu/baseline.c >"$T/open.json" 2>"$T/open.err"
[ "$(field "$T/open.json" "r['status']")" = ok ] && ! ls "$T"/open/state/cpu-runner-*.o >/dev/null 2>&1
ok $? "under a directory others may write, the runner.o is built and used, never kept (issue 46)"
