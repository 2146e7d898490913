# 47-results-asked.sh - a result counts only for the slot it was issued
# for (issue 25, part 2): the run's own baseline measured at another size, a
# result of another task, a child of another parent, a non-canonical slot
# and a run id that names another run's keys all go to the dead letters
# with the reason, every one signed by a genuine profiler, so it is the
# selector's checks that refuse them, not the signature.
. tests/cli/helpers.sh
ensure_calibration
export ACCELOPT_BUDGET=0.05 ACCELOPT_WARMUP=0.01
st=$T/st.json
sel() { bin/accelopt-selector --state "$st" --dlq "$T/sel.dlq" 2>>"$T/sel.err"; }
printf '%s\n' '{"type":"task","v":1,"id":"task:s1","run":"s1","task":"silu","target":"cpu","iter":0,"size":"cpu","config":{"beam":1,"plans":1,"samples":1,"iters":1}}' |
    sel >"$T/sent0.jsonl"
grep '"type":"kernel"' "$T/sent0.jsonl" >"$T/base.jsonl"
[ "$(wc -l <"$T/base.jsonl")" = 1 ]; ok $? "the selector sends the run's baseline at size cpu"

# the attacks, as kernel messages a genuine profiler measures and signs
python3 - "$T/base.jsonl" "$T" <<'PY'
import hashlib, json, sys
b = json.loads(open(sys.argv[1]).read())
t = sys.argv[2]
def put(name, **kw):
    m = dict(b); m.pop("sig", None); m.update(kw)
    open("%s/%s.jsonl" % (t, name), "w").write(json.dumps(m) + "\n")
put("other-size", size="tiny")
mm = open("nkibench/matmul/baseline.c").read()
put("other-task", task="matmul", size="tiny", source=mm, sha256=hashlib.sha256(mm.encode()).hexdigest(),
    task_path=None, task_sha256=None)
put("slot-00", slot="00.0.0")
put("slot-plus", slot="+0.0.0")
put("run-keys", run="s1:iter:1")
put("lying-hash", sha256="0" * 64)
PY
for a in other-size other-task slot-00 slot-plus run-keys lying-hash; do
    bin/accelopt-profiler --dlq "$T/prof-$a.dlq" <"$T/$a.jsonl" >"$T/res-$a.jsonl" 2>/dev/null
done
for a in slot-00 slot-plus run-keys lying-hash; do
    [ ! -s "$T/res-$a.jsonl" ] && [ -s "$T/prof-$a.dlq" ] || break
done
ok $? "the profiler refuses the non-canonical slots, the run id and a hash that is not the source's"
grep -q 'not of the form rank.plan.sample' "$T/prof-slot-00.dlq" && grep -q 'run id' "$T/prof-run-keys.dlq" &&
    grep -q 'not the hash of the kernel' "$T/prof-lying-hash.dlq"
ok $? "with the reason"
grep -q '"status":"ok"' "$T/res-other-size.jsonl" && grep -q '"status":"ok"' "$T/res-other-task.jsonl"
ok $? "the tiny baseline and the matmul kernel are measured (and signed)"
# a signed result whose slot is not canonical, sent straight to the selector
python3 - "$T/res-other-size.jsonl" >"$T/res-slot.jsonl" <<'PY'
import json, sys
r = json.loads(open(sys.argv[1]).read()); r["slot"] = "0.00.0"; print(json.dumps(r))
PY
cat "$T/res-other-size.jsonl" "$T/res-other-task.jsonl" "$T/res-slot.jsonl" | sel >"$T/sent1.jsonl"
[ ! -s "$T/sent1.jsonl" ]; ok $? "none of them fills the baseline's slot (nothing sent)"
grep -q "at size 'tiny' in a run at 'cpu'" "$T/sel.dlq"; ok $? "another size is a dead letter with the reason"
grep -q "for task 'matmul' in a run of 'silu'" "$T/sel.dlq"; ok $? "another task is a dead letter with the reason"
[ "$(grep -c '"stage":"selector"' "$T/sel.dlq")" = 3 ]; ok $? "three dead letters"

# the real baseline fills it; then a child of another parent does not
bin/accelopt-profiler <"$T/base.jsonl" 2>/dev/null | sel >"$T/sent2.jsonl"
grep -q '"type":"candidate"' "$T/sent2.jsonl"; ok $? "the run's own baseline fills iteration 0"
python3 - "$T/base.jsonl" >"$T/child.jsonl" <<'PY'
import json, sys
b = json.loads(open(sys.argv[1]).read())
b.pop("sig", None); b.pop("sha256", None)
b.update(iter=1, id="kernel:s1:1:0.0.0", parent="f" * 64, source=b["source"] + "\n/* a child */\n")
print(json.dumps(b))
PY
bin/accelopt-profiler <"$T/child.jsonl" 2>/dev/null | sel >"$T/sent3.jsonl"
[ ! -s "$T/sent3.jsonl" ] && grep -q 'is for children of candidate' "$T/sel.dlq"
ok $? "a child of a kernel the run never had is a dead letter"

# a state that does not read back (not one the selector wrote): what comes
# for its run is a dead letter saying so; the selector goes on
python3 - "$st" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
s = json.loads(d["run:s1"]["state"]); s["phase"] = "Done"; s["kernels"] = -3
d["run:s1"]["state"] = json.dumps(s)
json.dump(d, open(sys.argv[1], "w"))
PY
bin/accelopt-profiler <"$T/child.jsonl" 2>/dev/null | sel >"$T/sent4.jsonl"; rc=$?
[ $rc = 0 ] && [ ! -s "$T/sent4.jsonl" ] && grep -q "run 's1': its state does not read back (field 'phase' has unknown value 'Done')" "$T/sel.dlq"
ok $? "a run whose state does not decode: its result is a dead letter with the reason, the selector exits 0 (rc $rc)"
