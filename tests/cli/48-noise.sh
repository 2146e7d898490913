# 48-noise.sh - noise is not sold as a speedup (issue 25, part 3): a model
# that returns the matmul baseline itself, each time with another comment,
# used to make a run report 1.33x (the fastest of 25 noisy measurements of
# one kernel against one of the baseline).  Now every copy is a duplicate
# of its parent, the baseline stays the best, and the run quotes 1.00x.
# Then a real rewrite: the speedup quoted is the final head-to-head's,
# inside its own interval, with the search's figure beside it.
. tests/cli/helpers.sh
ensure_calibration
M=/usr/bin/python3
export ACCELOPT_BUDGET=0.1 ACCELOPT_WARMUP=0.02
start_llm copies "$($M - <<'PY'
import json
src = open("nkibench/matmul/baseline.c").read()
copies = [{"content": "```c\n/* variant %d: tuned */\n%s// same kernel %d\n```" % (i, src, i), "usage": [10, 5]}
          for i in range(24)]
print(json.dumps({"plan-m": [{"content": "Tune the loops (plan %d)." % i, "usage": [10, 5]} for i in range(8)],
                  "exec-m": copies,
                  "sum-m": [{"content": open("tests/replies/summary-01-format.md").read(), "usage": [10, 5]}]}))
PY
)"
ACCELOPT_LLM_URL=$LLM_URL ACCELOPT_PLANNER_MODEL=plan-m ACCELOPT_EXECUTOR_MODEL=exec-m \
ACCELOPT_SUMMARIZER_MODEL=sum-m bin/accelopt run matmul --size tiny --iters 2 --beam 2 --plans 4 --samples 2 --json --out "$T/aa" \
    >"$T/aa.jsonl" 2>"$T/aa.err"
rc=$?
# every candidate a duplicate: no kernel was written, so no gain (exit 3),
# and not "not one kernel the model wrote worked" (issue 45, part 3)
[ $rc -eq 3 ] && grep -q "no gain found: no kernel was written" "$T/aa.err" &&
    ! grep -q "not one kernel the model wrote worked" "$T/aa.err"
ok $? "the run of baseline copies finishes with no gain found, every candidate a duplicate (exit $rc)"
$M - "$T/aa.jsonl" "$T/aa/matmul/history.jsonl" <<'PY'
import json, sys
d = json.loads(open(sys.argv[1]).readline())
hist = [json.loads(l) for l in open(sys.argv[2])]
kids = [h for h in hist if h["iter"] > 0]
assert kids and all(h["status"] == "duplicate" for h in kids), sorted(set(h["status"] for h in kids))
assert d["speedup"] == 1 and d["speedup_method"] == "baseline", (d["speedup"], d["speedup_method"])
assert d["best"]["sha256"] == hist[0]["sha256"]
PY
ok $? "every copy is a duplicate of the baseline, and the run quotes 1.00x (nothing beat it)"
grep -q '1.000x' "$T/aa/summary.txt"; ok $? "summary.txt says 1.000x"

# a real rewrite (4x16 blocks of out held in registers): at tiny it is
# usually 1.3-2x the baseline on these VMs, but not always beyond their
# noise, so the search may keep the baseline; either way the quoted figure
# must be the one its method measured
cat >"$T/blocks.c" <<'EOF'
#include <string.h>
typedef float v4 __attribute__((vector_size(16)));

static void block(const float *lhs, const float *rhs, float *out, int i, int j, int K, int N)
{
    v4 c[4][4] = {{{0}}};
    for (int k = 0; k < K; k++) {
        v4 b[4];
        memcpy(b, rhs + (long)k * N + j, sizeof b);
        for (int r = 0; r < 4; r++) {
            float a = lhs[(long)(i + r) * K + k];
            for (int q = 0; q < 4; q++)
                c[r][q] += a * b[q];
        }
    }
    for (int r = 0; r < 4; r++)
        memcpy(out + (long)(i + r) * N + j, c[r], sizeof c[r]);
}

void kernel(const float *lhs, const float *rhs, float *out, int M, int K, int N)
{
    int mi = M / 4 * 4, nj = N / 16 * 16;
    for (int i = 0; i < mi; i += 4)
        for (int j = 0; j < nj; j += 16)
            block(lhs, rhs, out, i, j, K, N);
    for (int i = 0; i < M; i++)
        for (int j = i < mi ? nj : 0; j < N; j++) {
            float acc = 0;
            for (int k = 0; k < K; k++)
                acc += lhs[(long)i * K + k] * rhs[(long)k * N + j];
            out[(long)i * N + j] = acc;
        }
}
EOF
start_llm blocks "$($M - "$T/blocks.c" <<'PY'
import json, sys
print(json.dumps({"plan-m": [{"content": "Hold 4x16 blocks of out in registers.", "usage": [10, 5]}],
                  "exec-m": [{"content": "```c\n" + open(sys.argv[1]).read() + "```", "usage": [10, 5]}],
                  "sum-m": [{"content": open("tests/replies/summary-01-format.md").read(), "usage": [10, 5]}]}))
PY
)"
ACCELOPT_LLM_URL=$LLM_URL ACCELOPT_PLANNER_MODEL=plan-m ACCELOPT_EXECUTOR_MODEL=exec-m \
ACCELOPT_SUMMARIZER_MODEL=sum-m ACCELOPT_LOG=info bin/accelopt run matmul --size tiny --iters 1 \
    --beam 1 --plans 1 --samples 1 --json --out "$T/h2h" >"$T/h2h.jsonl" 2>"$T/h2h.err"
run_ended $?; ok $? "a run with a real rewrite finishes"
$M - "$T/h2h.jsonl" "$T/h2h/matmul/history.jsonl" <<'PY'
import json, sys
d = json.loads(open(sys.argv[1]).readline())
hist = [json.loads(l) for l in open(sys.argv[2])]
assert "search_speedup" in d, {k: v for k, v in d.items() if k not in ("best", "history")}
if d["speedup_method"] not in ("no_gain", "none"):  # else the result is the baseline, not the search's best
    assert abs(d["search_speedup"] - d["search_baseline_latency_ns"] / d["best"]["search_latency_ns"]) < 1e-9
if d["best"]["sha256"] != hist[0]["sha256"]:  # the search kept the rewrite (on a quiet machine it does)
    assert d["speedup_method"] == "head_to_head", d["speedup_method"]
    assert d["speedup_low"] <= d["speedup"] <= d["speedup_high"] and d["speedup"] > 1, d
    # something to say, even beside another test (its noise widens it;
    # the checks at secret positions now run between rounds, on the same
    # core, and a busy suite made it 3x wide once)
    assert d["speedup_high"] / d["speedup_low"] < 4, ("an interval that says something", d["speedup_low"], d["speedup_high"])
else:  # noise kept the baseline, or the head-to-head found no gain
    assert d["speedup_method"] in ("baseline", "no_gain") and d["speedup"] == 1
print("# matmul 4x16 blocks: %.3fx (%s, %s-%s), the search said %.3fx" % (d["speedup"], d["speedup_method"],
      d.get("speedup_low"), d.get("speedup_high"), d["search_speedup"]))
PY
ok $? "its speedup is the head-to-head's, inside its interval (or 1 when noise kept the baseline)"
grep -q 'goes head to head with the baseline' "$T/h2h/logs/selector.log" ||
    grep -q '(baseline)' "$T/h2h/logs/selector.log"
ok $? "the selector's log says what it did"
grep -q 'head to head\|baseline' "$T/h2h/summary.txt"; ok $? "summary.txt says how the speedup was measured"
# the head-to-head holds its kernel to the same source limit as any measurement
python3 - >"$T/big-h2h.jsonl" <<'PY'
import json
b = open("nkibench/matmul/baseline.c").read()
print(json.dumps(dict(type="kernel", v=1, id="k-big", run="h", task="matmul", target="cpu", iter=1, size="tiny",
                      source=b + "//" + "x" * 300000 + "\n", baseline_source=b)))
PY
bin/accelopt-profiler <"$T/big-h2h.jsonl" 2>/dev/null | grep -q '"status":"rejected","reason":"source is'
ok $? "a head-to-head kernel over the source limit is rejected before it is built"
# the head-to-head itself, where the answer is known: a kernel ~10x slower
# than the baseline (tests/known-speed/matmul_columns.c) is found slower, with
# an interval wholly under 1, and the baseline with a comment added is not
# found faster by more than the noise allows
$M - tests/known-speed/matmul_columns.c >"$T/known-h2h.jsonl" <<'PY'
import json, sys
b = open("nkibench/matmul/baseline.c").read()
for i, src in (("slow", open(sys.argv[1]).read()), ("same", b + "/* the same */\n")):
    print(json.dumps(dict(type="kernel", v=1, id="k-" + i, run="h", task="matmul", target="cpu", iter=1,
                          size="tiny", source=src, baseline_source=b)))
PY
bin/accelopt-profiler <"$T/known-h2h.jsonl" >"$T/known-h2h.out" 2>"$T/known-h2h.err"
$M - "$T/known-h2h.out" <<'PY'
import json, sys
r = {m["kernel_id"]: m for m in map(json.loads, open(sys.argv[1]))}
slow, same = r["k-slow"]["head_to_head"], r["k-same"]["head_to_head"]
# (the interval widens on a loaded machine, 0.16-0.40 beside another test,
# but never reaches 1)
assert slow["speedup_high"] < 1 and slow["speedup"] < 0.5 and \
    slow["speedup_low"] <= slow["speedup"] <= slow["speedup_high"], slow
assert same["speedup_low"] < 1.25 and same["speedup_high"] > 0.8, same
print("# slow: %.3f (%.3f-%.3f); same: %.3f (%.3f-%.3f)" % tuple(
    x[k] for x in (slow, same) for k in ("speedup", "speedup_low", "speedup_high")))
PY
ok $? "the head-to-head finds a 10x slower kernel slower, and a copy of the baseline not far off"

# --- A/A in the final head-to-head (issue 46, part 1) ------------------------
# adamw's baseline against copies that differ by an unused static constant
# (the same machine code): one wake-up estimate comes off both sides, so
# the interval holds 1.00 (each side taking off its own process's made
# identical kernels differ by up to 18% on a busy machine)
$M - >"$T/aa-in.jsonl" <<'PY'
import json
src = open("nkibench/adamw/baseline.c").read()
for i in range(8):
    print(json.dumps(dict(type="kernel", v=1, id="aa-%d" % i, run="aa", task="adamw", target="cpu", iter=1,
                          size="tiny", source=src + "\nstatic const int aa_unused_%d = %d;\n" % (i, i),
                          baseline_source=src)))
PY
bin/accelopt-profiler <"$T/aa-in.jsonl" >"$T/aa-out.jsonl" 2>"$T/aa-prof.err"
$M - "$T/aa-out.jsonl" <<'PY'
import json, statistics, sys
h = [json.loads(l)["head_to_head"] for l in open(sys.argv[1]) if json.loads(l).get("status") == "ok"]
inside = sum(1 for x in h if x["speedup_low"] <= 1 <= x["speedup_high"])
med = statistics.median(x["speedup"] for x in h)
print("# A/A adamw tiny: %d of %d intervals hold 1.00; speedups %s" % (inside, len(h),
      " ".join("%.3f" % x["speedup"] for x in h)))
assert len(h) == 8 and inside >= 7, (inside, med)
PY
ok $? "A/A at tiny: adamw against a token-different copy, 1.00 inside the interval (7 of 8 at least)"

# --- the head-to-head holds every rule of a measurement (issue 46, part 3) ---
# A kernel honest whenever it sees the normal measurement's warm-up repeats
# (and skipping most calls where it sees none) finds them in a head-to-head
# too, since both warm up alike: it does its work there, and no round gives
# it a gain (the naive loops are slower than the blocked baseline).  Before,
# the head-to-head drew fresh inputs from its first call: it skipped, and
# passed about once in 40, quoted at 3.14x.
bin/accelopt profile --alone --task matmul --size tiny --json tests/h2h/skip_when_no_repeats.c >"$T/skip-alone.json" 2>/dev/null
$M - tests/h2h/skip_when_no_repeats.c tests/h2h/skip_rounds.c >"$T/skip-in.jsonl" <<'PY'
import json, sys
base = open("nkibench/matmul/baseline.c").read()
for path in sys.argv[1:]:
    src = open(path).read()
    name = path.split("/")[-1][:-2]
    for i in range(3):
        print(json.dumps(dict(type="kernel", v=1, id="%s-%d" % (name, i), run="h", task="matmul", target="cpu",
                              iter=1, size="tiny", source=src + "\n/* %d */\n" % i, baseline_source=base)))
PY
bin/accelopt-profiler <"$T/skip-in.jsonl" >"$T/skip-out.jsonl" 2>"$T/skip.err"
$M - "$T/skip-out.jsonl" <<'PY'
import json, sys
rs = [json.loads(l) for l in open(sys.argv[1]) if '"type":"result"' in l]
quiet = [r for r in rs if r["kernel_id"].startswith("skip_when")]
assert len(rs) == 6 and len(quiet) == 3, len(rs)
bad = [(r["kernel_id"], r.get("speedup")) for r in quiet if r["status"] == "ok" and r.get("speedup", 0) >= 1]
assert not bad, bad
print("# skip_when_no_repeats head to head:", [(r["status"], r.get("speedup")) for r in quiet])
PY
ok $? "a kernel that skips where no input repeats gets no gain head to head: it sees the repeats there too (alone: $(field "$T/skip-alone.json" "r['status']"))"
# --- both sides of a comparison are untrusted (issue 56, part 1) -----------
# a parent the model wrote takes the head-to-head's other side: one that
# skips its work on most calls (and so made its children look 0.71x) is
# checked and held to the roofline there too, and the comparison is refused
# with why; an honest parent (the baseline with a comment) compares as ever
$M - >"$T/par-in.jsonl" <<'PY'
import json
base = open("nkibench/matmul/baseline.c").read()
cheat = open("tests/h2h/skip_rounds.c").read()
for i, (par, name) in enumerate([(cheat, "cheat"), (cheat, "cheat"), (base + "\n/* a comment */\n", "honest")]):
    print(json.dumps(dict(type="kernel", v=1, id="par-%s-%d" % (name, i), run="p", task="matmul", target="cpu",
                          iter=1, size="tiny", source=base + "\n/* child %d */\n" % i, baseline_source=par)))
PY
bin/accelopt-profiler <"$T/par-in.jsonl" >"$T/par-out.jsonl" 2>"$T/par.err"
$M - "$T/par-out.jsonl" <<'PY'
import json, sys
rs = {r["kernel_id"]: r for r in (json.loads(l) for l in open(sys.argv[1])) if r.get("type") == "result"}
assert len(rs) == 3, list(rs)
for k in ("par-cheat-0", "par-cheat-1"):
    assert rs[k]["status"] == "rejected" and "the kernel it was measured against" in rs[k]["reason"], rs[k].get("reason")
assert rs["par-honest-2"]["status"] == "ok" and "head_to_head" in rs["par-honest-2"], rs["par-honest-2"].get("reason")
print("# parent cheats:", [rs[k]["reason"][-60:] for k in ("par-cheat-0", "par-cheat-1")])
PY
ok $? "a parent that skips its work on its side of a comparison is caught there: the comparison refused, an honest parent's compared"
# --- a kernel that tells a lone measurement from a head-to-head (issue 56,
# part 2; issue 66) counts the gaps before its first timed calls longer
# than 2/5 of its own call (another kernel's call between two of theirs):
# one writes nothing once it finds none (alone, it thinks), the other once
# it finds some (head to head).  A kernel a model wrote is measured only
# head to head with its parent now, so the first does its work where it is
# measured (alone, where only a task's baseline is timed, it is refused
# where it finds no gap), and the second is refused head to head.  A third writes nothing past a
# pause before its warm-up: alone there is none, and it passes; head to
# head the other side's calls come between its opening call and its
# warm-up where it is the second side, and it is refused there, as the
# second is (the one kind a model's kernel is measured in: a tell of it
# tells nothing).
$M - tests/h2h/wrong_when_alone.c tests/h2h/wrong_head_to_head.c tests/h2h/wrong_after_a_pause.c >"$T/tell-in.jsonl" <<'PY'
import json, sys
par = ("void kernel(const float *lhs, const float *rhs, float *out, int M, int K, int N)\n{\n"
       "    for (int i = 0; i < M; i++)\n        for (int j = 0; j < N; j++) {\n            float acc = 0;\n"
       "            for (int k = 0; k < K; k++)\n                acc += lhs[(long)i * K + k] * rhs[(long)k * N + j];\n"
       "            out[(long)i * N + j] = acc;\n        }\n}\n")
for path in sys.argv[1:]:
    name = path.split("/")[-1][:-2]
    for i in range(3):
        print(json.dumps(dict(type="kernel", v=1, id="%s-%d" % (name, i), run="t", task="matmul", target="cpu",
                              iter=1, size="tiny", source=open(path).read() + "\n/* %d */\n" % i,
                              baseline_source=par + "/* parent %d */\n" % i)))
PY
for k in wrong_when_alone wrong_head_to_head wrong_after_a_pause; do
    for i in 1 2 3; do
        ACCELOPT_WARMUP=0.1 bin/accelopt profile --alone --task matmul --size tiny --json tests/h2h/$k.c 2>/dev/null |
            head -1 >>"$T/tell-alone.jsonl"
    done
done
# the default warm-up (0.1 s): the pause the third looks for is another
# side's warm-up, well above a busy machine's preemptions
ACCELOPT_WARMUP=0.1 bin/accelopt-profiler <"$T/tell-in.jsonl" >"$T/tell-out.jsonl" 2>"$T/tell.err"
$M - "$T/tell-alone.jsonl" "$T/tell-out.jsonl" <<'PY'
import json, sys
alone = [json.loads(l)["status"] for l in open(sys.argv[1])]
h2h = {r["kernel_id"]: r for r in (json.loads(l) for l in open(sys.argv[2])) if r.get("type") == "result"}
names = ("wrong_when_alone", "wrong_head_to_head", "wrong_after_a_pause")
assert len(alone) == 9 and len(h2h) == 9, (alone, list(h2h))
seen = {k: (alone[3 * n:3 * n + 3], [h2h["%s-%d" % (k, i)]["status"] for i in range(3)]) for n, k in enumerate(names)}
print("# alone, head to head:", seen)
# (alone, wrong_when_alone now finds gaps too: the checks at secret
# positions run between its calls, so it does its work; either is right)
for k, passes in zip(names, ((None, True), (None, False), (True, None))):
    for kind, p in zip(seen[k], passes):  # refused: by the sampled rounds, or by check sets run after them
        assert p is None or sum((s == "ok") == p for s in kind) >= 2, (k, passes, seen[k])
PY
ok $? "a kernel that counts the gaps between its calls: refused where it skips, honest head to head where it is measured"
# every timed call's inputs are drawn where the kernel runs, a sampled
# call's as any other's (issue 56, part 3: a sampled call's were drawn
# elsewhere and copied in): only the check sets are copied, the four calls
# of correctness (three nominal sets, the other shape with another poison,
# or the first again with it), per side and head-to-head, of every kernel that passed,
# where that side's source had not passed them in this profiler before;
# but the first set is each side's opening call whether or not it had
$M - "$T/tell-alone.jsonl" "$T/tell-out.jsonl" <<'PY'
import json, sys
alone = [r["timing"]["inputs_copied_calls"] for r in (json.loads(l) for l in open(sys.argv[1])) if r["status"] == "ok"]
rs = [r for r in (json.loads(l) for l in open(sys.argv[2])) if r.get("type") == "result" and r["status"] == "ok"]
h2h = [r["timing"]["inputs_copied_calls"] for r in rs]
print("# calls whose inputs were copied in: alone", alone, "head to head", h2h)
assert alone and set(alone) == {4}, alone
# four a side and measurement, but for a side whose source passed the same
# check sets in this profiler before (timing.checks_known: not run again,
# but for the first set, its opening call)
assert rs and all(r["timing"]["inputs_copied_calls"] ==
                  2 * len(r["head_to_head"].get("replicates", [0])) +
                  3 * (2 * len(r["head_to_head"].get("replicates", [0])) - r["timing"].get("checks_known", 0))
                  for r in rs), [(r["timing"], r["head_to_head"].get("replicates")) for r in rs]
PY
ok $? "only the check sets' inputs are copied in: every timed call's, sampled or not, drawn where the kernel runs"
# A kernel that skips its work on 55% of calls everywhere, given straight
# to a head-to-head: refused every time, by the roofline or by the sampled
# rounds (CHECKED_H2H of them, however busy the machine: the reference's
# fastest call sizes them).  How many the roofline took is printed: on a
# busy machine the wake-up's uncertainty can outgrow a skipped round's
# margin and leave it to the sampled rounds.
roof=$(grep '"kernel_id":"skip_rounds' "$T/skip-out.jsonl" | grep -c '"status":"rejected","reason":"in its head-to-head: a call took [0-9]* ns.*under the roofline')
[ "$(grep '"type":"result"' "$T/skip-out.jsonl" | grep -c '"kernel_id":"skip_rounds')" -eq 3 ] &&
    ! grep '"kernel_id":"skip_rounds' "$T/skip-out.jsonl" | grep -q '"status":"ok"'
ok $? "a kernel that skips 55% of its rounds never passes head to head ($roof of 3 by the roofline)"
