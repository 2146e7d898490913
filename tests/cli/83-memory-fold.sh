# 83-memory-fold.sh - a memory holds each lesson once (issue 69, item 4):
# ten runs of one task on this machine leave one item per lesson, with
# the evidence counted (the pairs that taught it), not one copy per run;
# accelopt memory list and show say the count; an import of copies folds.
. tests/cli/helpers.sh
ensure_calibration
M=/usr/bin/python3
export ACCELOPT_BUDGET=0.1 ACCELOPT_WARMUP=0.02 # these runs test the memory, not speed
FILE=$ACCELOPT_STATE_DIR/memory/memory.target.cpu.jsonl

for i in $(seq 10); do
    bin/accelopt run matmul --iters 1 --beam 1 --plans 2 --samples 1 --json --out "$T/r$i" \
        >"$T/r$i.json" 2>"$T/r$i.err" || [ $? -eq 3 ] || echo "run $i: $(tail -1 "$T/r$i.err")" >&2
done
$M - "$FILE" >"$T/fold.out" <<'PY'
import collections, json, sys
items = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
key = lambda d: (d["task"], d["target"], d["direction"], json.dumps(d.get("move"), sort_keys=True)
                 if d.get("move") is None else (d["move"]["knob"], d["move"]["from"], d["move"]["to"]))
seen = collections.Counter(key(d) for d in items)
assert all(n == 1 for n in seen.values()), [k for k, n in seen.items() if n > 1]
top = max(items, key=lambda d: d.get("evidence", 1))
ev = top.get("evidence", 1)
ids = top.get("evidence_ids", [top["id"]])
assert ev >= 3 and len(set(ids)) == ev, (ev, ids)
print(len(items), ev, top["title"])
PY
ok $? "ten runs leave each lesson once, the most learnt with its evidence counted ($(cat "$T/fold.out"))"
n=$(cut -d' ' -f1 <"$T/fold.out") ev=$(cut -d' ' -f2 <"$T/fold.out")
[ "${n:-99}" -le 6 ]; ok $? "a handful of items, not one per run and lesson ($n)"

bin/accelopt memory list >"$T/list.out" 2>&1
head -1 "$T/list.out" | grep -q ' SEEN ' && grep -Eq "faster +$ev " "$T/list.out"
ok $? "accelopt memory list: a SEEN column with the count"
id=$($M -c "import json,sys; print(max((json.loads(l) for l in open(sys.argv[1])), key=lambda d: d.get('evidence', 1))['id'])" "$FILE")
bin/accelopt memory show "$id" | grep -q "^evidence: *$ev pairs of kernels taught it"
ok $? "accelopt memory show: how many pairs taught it"

# copies imported into a memory are folded there too
$M - "$FILE" "$T/copies.jsonl" <<'PY'
import json, sys
d = json.loads(open(sys.argv[1]).readline())
d = {k: v for k, v in d.items() if k not in ("evidence", "evidence_ids")}
with open(sys.argv[2], "w") as f:
    for i in range(3):
        f.write(json.dumps(dict(d, id="copy-%d" % i)) + "\n")
PY
start_redis copies
bin/accelopt memory import "$T/copies.jsonl" --redis "$REDIS_URL" >"$T/imp.out" 2>&1 &&
    bin/accelopt memory export --redis "$REDIS_URL" >"$T/exp.jsonl" 2>"$T/exp.err"
[ "$(grep -c . "$T/exp.jsonl")" -eq 1 ] && [ "$(field "$T/exp.jsonl" "r['evidence']")" = 3 ]
ok $? "three copies of a lesson imported are one item, evidence 3 ($(grep -c . "$T/exp.jsonl") items)"
