# 48-undecidable.sh - a child's head-to-head with its parent stops once it
# can decide nothing (issue 66): where the budget is spent and the rounds
# would end at their minimum, more ratios on each side of 1 than the sign
# test lets an interval there exclude mean a tie whatever comes next.  Its
# result says so (head_to_head.undecidable) and its interval holds 1; so
# does a tie whose Student-t interval is inside the systematic floor
# already (head_to_head.interval "student-t", from three rounds).  A
# pair that is not a child and its parent (the final head-to-head, whose
# figure is quoted) runs every round, and a child plainly faster is
# decided as before.
. tests/cli/helpers.sh
ensure_calibration
M=/usr/bin/python3
$M - >"$T/pairs.jsonl" <<'PY'
import hashlib, json
honest = open("tests/kernels/honest.c").read()
def msg(id, src, other, child=True):
    m = dict(type="kernel", v=1, id=id, run="undecidable", task="matmul", target="cpu", iter=2, size="tiny",
             source=src, sha256=hashlib.sha256(src.encode()).hexdigest(), baseline_source=other)
    if child:
        m["parent"] = hashlib.sha256(other.encode()).hexdigest()
    print(json.dumps(m))
# three copies of one kernel against another copy of it: ties
for i in range(3):
    msg("aa-%d" % i, honest + "static int child_%d;\n" % i, honest + "static int parent_%d;\n" % i)
msg("aa-not-a-child", honest + "static int final_side;\n", honest + "static int other_side;\n", child=False)
PY
# a budget spent in the first round: each pair's rounds would end at their minimum
bin/accelopt-profiler --budget 0.001 <"$T/pairs.jsonl" >"$T/out.jsonl" 2>"$T/err"
ok $? "the profiler measured the pairs (exit 0)"
$M - "$T/out.jsonl" <<'PY'
import json, sys
rs = {r["kernel_id"]: r for r in map(json.loads, open(sys.argv[1])) if r.get("type") == "result"}
short = 0
for i in range(3):
    r = rs["aa-%d" % i]
    h = r["head_to_head"]
    print("# aa-%d: %s, %d rounds, %.3f (%.3f-%.3f)%s%s" % (i, r["status"], h["rounds"], h["speedup"],
          h["speedup_low"], h["speedup_high"], " undecidable" if h.get("undecidable") else "",
          " " + h["interval"] if h.get("interval") else ""))
    assert r["status"] == "ok", r.get("reason")
    # stopped short, its interval holds 1 by construction; one that ran its
    # rounds is a tie to the selector (no gain, and no loss past 1/1.15 to
    # learn from), though on a busy machine two processes of one kernel
    # can sit a few percent apart (CI: 0.905-0.9994, 18 rounds voided)
    # a plain answer (the Student-t interval of a few rounds, issue 66)
    # stops short too: for copies, a tie inside the systematic floor
    stopped = h.get("undecidable") is True or h.get("interval") == "student-t"
    if stopped:
        assert h["speedup_low"] <= 1 <= h["speedup_high"], h
    else:
        assert h["speedup_low"] <= 1 and h["speedup_high"] >= 1 / 1.15, h
    # the rounds' minimum: 6 to 21, as the budget and the warm-up's call
    # make it (a busy machine can make it 6); short of 6, only stopped early
    assert stopped or h["rounds"] >= 6, h
    assert h.get("interval") != "student-t" or h["rounds"] >= 3, h
    short += stopped
# each stops short unless its first rounds all fell on one side of 1
assert short >= 1, "no A/A pair stopped short"
PY
ok $? "copies of one kernel as child and parent: a tie, stopped once undecidable or inside the floor (the interval holding 1), or decided nothing"
$M - "$T/out.jsonl" <<'PY'
import json, sys
rs = {r["kernel_id"]: r for r in map(json.loads, open(sys.argv[1])) if r.get("type") == "result"}
h = rs["aa-not-a-child"]["head_to_head"]
print("# not a child: %d rounds" % h["rounds"])
assert h["rounds"] >= 6 and "undecidable" not in h and "interval" not in h, h
PY
ok $? "a pair that is not a child and its parent runs every round"
$M - >"$T/faster.jsonl" <<'PY'
import hashlib, json
base, fast = open("nkibench/matmul/baseline.c").read(), open("nkibench/matmul/examples/packed_avx512.c").read()
print(json.dumps(dict(type="kernel", v=1, id="faster", run="undecidable", task="matmul", target="cpu", iter=2,
                      size="tiny", source=fast, sha256=hashlib.sha256(fast.encode()).hexdigest(),
                      baseline_source=base, parent=hashlib.sha256(base.encode()).hexdigest())))
PY
bin/accelopt-profiler <"$T/faster.jsonl" >"$T/faster-out.jsonl" 2>"$T/faster.err"
$M - "$T/faster-out.jsonl" <<'PY'
import json, sys
rs = {r["kernel_id"]: r for r in map(json.loads, open(sys.argv[1])) if r.get("type") == "result"}
h = rs["faster"]["head_to_head"]
print("# faster: %.2f (%.2f-%.2f), %d rounds" % (h["speedup"], h["speedup_low"], h["speedup_high"], h["rounds"]))
assert rs["faster"]["status"] == "ok" and h["speedup_low"] > 1 and "undecidable" not in h, h
PY
ok $? "a child plainly faster than its parent is decided faster, as before"
# a child far faster than its parent (the packed example against a
# column-order loop about ten times slower than the baseline) with the
# budget spent in the first round: a few rounds are a plain answer, given
# before the minimum on the Student-t interval (issue 66), and the gain is
# measured again in fresh processes as any is.  (The gap is wide so that a
# busy CI's noise cannot hide it in three rounds: with the baseline as the
# parent, 2.5x, a loaded run took all 21.)
$M - >"$T/far.jsonl" <<'PY'
import hashlib, json
slow, fast = open("tests/known-speed/matmul_columns.c").read(), open("nkibench/matmul/examples/packed_avx512.c").read()
print(json.dumps(dict(type="kernel", v=1, id="far", run="undecidable", task="matmul", target="cpu", iter=2,
                      size="tiny", source=fast, sha256=hashlib.sha256(fast.encode()).hexdigest(),
                      baseline_source=slow, parent=hashlib.sha256(slow.encode()).hexdigest())))
PY
bin/accelopt-profiler --budget 0.001 <"$T/far.jsonl" >"$T/far-out.jsonl" 2>"$T/far.err"
$M - "$T/far-out.jsonl" <<'PY'
import json, sys
rs = {r["kernel_id"]: r for r in map(json.loads, open(sys.argv[1])) if r.get("type") == "result"}
h = rs["far"]["head_to_head"]
print("# far faster, budget spent: %.2f (%.2f-%.2f), %d rounds, %s" % (h["speedup"], h["speedup_low"],
      h["speedup_high"], h["rounds"], h.get("interval", "distribution-free")))
assert rs["far"]["status"] == "ok" and h["speedup_low"] > 1 and h.get("interval") == "student-t", h
assert 3 <= h["rounds"] < 21 and len(h.get("replicates", [])) == 2, h
PY
ok $? "a child far faster than its parent, its budget spent, stops on its Student-t interval from three rounds, and is measured twice"
# A pair whose calls are long (a third of a second: tests/known-speed/
# matmul_long_calls.c, copies as child and parent): the opening round,
# both sides' first calls on the first check set, is the rounds' first
# (issue 66), and a tie stops as early as ever counting it: two or three
# rounds in all where the machine is quiet, short of the minimum always,
# its interval holding 1.  Every side's four check-set
# calls are copied in, the opening call the first of them.  (Two pairs: a
# busy machine can void one's opening round, the profiler away at a
# call's done; then it counts as a warm-up.)  A short-call pair (the A/A
# ones above) never counts its opening round.
$M - >"$T/long.jsonl" <<'PY'
import hashlib, json
src = open("tests/known-speed/matmul_long_calls.c").read()
for i in range(2):
    child, parent = src + "static int child_%d;\n" % i, src + "static int parent_%d;\n" % i
    print(json.dumps(dict(type="kernel", v=1, id="long-%d" % i, run="undecidable", task="matmul", target="cpu",
                          iter=2, size="tiny", source=child, sha256=hashlib.sha256(child.encode()).hexdigest(),
                          baseline_source=parent, parent=hashlib.sha256(parent.encode()).hexdigest())))
PY
bin/accelopt-profiler --budget 0.001 <"$T/long.jsonl" >"$T/long-out.jsonl" 2>"$T/long.err"
$M - "$T/long-out.jsonl" "$T/out.jsonl" <<'PY'
import json, sys
rs = {r["kernel_id"]: r for r in map(json.loads, open(sys.argv[1])) if r.get("type") == "result"}
opened = 0
for i in range(2):
    r = rs["long-%d" % i]
    h = r["head_to_head"]
    print("# long calls: %s, %d rounds, %.3f (%.3f-%.3f), opening round %s, kernel calls %.1f s" % (r["status"],
          h["rounds"], h["speedup"], h["speedup_low"], h["speedup_high"], h.get("opening_round"),
          r["timing"]["kernel_ns"] / 1e9))
    assert r["status"] == "ok" and r["timing"]["inputs_copied_calls"] == 8, (r.get("reason"), r["timing"])
    assert h["speedup_low"] <= 1 <= h["speedup_high"], h
    if h.get("opening_round") is True:
        opened += 1
        # two or three on a quiet machine; a busy one's noisy round can
        # keep a tie outside the floor's band and its ratios on one side
        # a round or two longer (CI: 4, three rounds voided), short of the
        # minimum of six all the same
        assert 2 <= h["rounds"] <= 5, h
assert opened >= 1, "no long-call pair counted its opening round"
short = [x["head_to_head"] for x in map(json.loads, open(sys.argv[2])) if x.get("type") == "result"]
assert short and not any(x.get("opening_round") for x in short), short
PY
ok $? "a pair of long calls: the opening round is the first of its rounds, and a tie stops short of the minimum"
# every interval is at least its floor wide: 4%, or a quarter of the
# larger side's spread where the machine moved the calls more (a busy
# CI's A/A child was "faster" at 1.11 twice over, its calls' spread 0.74)
$M - "$T"/out.jsonl "$T"/faster-out.jsonl "$T"/far-out.jsonl "$T"/long-out.jsonl <<'PY'
import json, sys
seen = 0
for f in sys.argv[1:]:
    for r in map(json.loads, open(f)):
        h = r.get("head_to_head") if r.get("type") == "result" else None
        if not h:
            continue
        want = min(0.25, max(0.04, 0.25 * max(h["baseline_spread"], h["kernel_spread"])))
        assert abs(h["floor"] - want) < 1e-9, (want, h)
        assert h["speedup_low"] <= h["speedup"] * (1 - h["floor"]) * (1 + 1e-9), h
        assert h["speedup_high"] >= h["speedup"] * (1 + h["floor"]) * (1 - 1e-9), h
        seen += 1
print("# floors: %d head-to-heads" % seen)
assert seen >= 7, seen
PY
ok $? "every head-to-head's interval is at least its floor wide (4%, or a quarter of the larger spread)"
