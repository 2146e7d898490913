# 83-machine-memory.sh - the memory outlives the run (issue 47): `accelopt
# run` on its private redis learns from every earlier run on this machine
# for the same target and adds to that memory (<state dir>/memory/, owner
# only); --no-memory and --memory-scope run leave it alone; `accelopt
# memory list` shows it and `forget` takes items out by run, task, id or
# all; an unreadable file is moved aside, a directory others may write is
# not read; two runs ending at once both keep their lessons.
. tests/cli/helpers.sh
ensure_calibration
M=/usr/bin/python3
export ACCELOPT_BUDGET=0.1 ACCELOPT_WARMUP=0.02 # quick timing: these runs test the memory, not speed
MEM=$ACCELOPT_STATE_DIR/memory
FILE=$MEM/memory.target.cpu.jsonl
# seven plans: every knob move of matmul (LOOP_ORDER's ~4x slowdown among
# them), so each run learns something whatever the load beside it
run() { # run NAME [options]: a matmul run of seven plans
    local name=$1
    shift
    bin/accelopt run matmul --iters 2 --beam 1 --plans 7 --samples 1 --topk 2 --json --out "$T/$name" \
        --log info "$@" >"$T/$name.json" 2>"$T/$name.err"
}
runs_in() { $M -c "import json,sys; print(' '.join(sorted({json.loads(l)['run'] for l in open(sys.argv[1]) if l.strip()})))" "$1"; }

run r1
run_ended $?; ok $? "a first run ends"
n1=$(grep -c . "$FILE" 2>/dev/null)
[ "${n1:-0}" -ge 1 ] && [ "$(stat -c %a "$MEM")" = 700 ] && [ "$(stat -c %a "$FILE")" = 600 ] &&
    grep -q "0 memory items from earlier runs on this machine" "$T/r1.err" &&
    grep -q "the machine's memory (memory:target:cpu) now holds $n1 item" "$T/r1.err"
ok $? "it starts from an empty machine memory and leaves its $n1 lessons there (0600 in a 0700 directory)"
r1=$(field "$T/r1.json" "r['run']") # the task's run: <run id>-matmul
bin/accelopt memory list >"$T/list.out" 2>"$T/list.err"
[ $? -eq 0 ] && [ "$(($(wc -l <"$T/list.out") - 1))" -eq "$n1" ] && grep -q " $r1 " "$T/list.out"
ok $? "accelopt memory list, with no redis or file, shows this machine's memory"

run r2
run_ended $? && grep -q "run [0-9a-f-]*: $n1 memory items\? from earlier runs on this machine" "$T/r2.err" &&
    runs_in "$T/r2/memory.jsonl" | grep -q "$r1"
ok $? "a second run starts with the first run's $n1 lessons (they are in its memory.jsonl)"
n2=$(grep -c . "$FILE")
r2=$(field "$T/r2.json" "r['run']")
# an item's id and those of the equal lessons folded into it (memfold.h)
ids() { $M -c "import json,sys; print('\n'.join(sorted({i for l in open(sys.argv[1]) if l.strip() for d in [json.loads(l)] for i in [d['id']] + d.get('evidence_ids', [])})))" "$1"; }
# everything the second run's memory held at its end (the first run's
# lessons and whatever it learnt: a busy machine may teach it nothing new)
[ -z "$(comm -23 <(ids "$T/r2/memory.jsonl") <(ids "$FILE"))" ] && runs_in "$FILE" | grep -q "$r1"
ok $? "the machine's memory now holds all the second run's memory ($n2 items, from $(runs_in "$FILE" | wc -w) runs)"

sum=$(sha256sum "$FILE")
bin/accelopt run matmul --iters 1 --beam 1 --plans 2 --samples 1 --no-memory --log info --json --out "$T/r3" \
    >"$T/r3.json" 2>"$T/r3.err"
run_ended $? && ! grep -q "earlier runs on this machine" "$T/r3.err" && [ "$(sha256sum "$FILE")" = "$sum" ]
ok $? "--no-memory: nothing read from the machine's memory, nothing added"
bin/accelopt run matmul --iters 1 --beam 1 --plans 2 --samples 1 --memory-scope run --log info --json --out "$T/r4" \
    >"$T/r4.json" 2>"$T/r4.err"
run_ended $? && ! grep -q "earlier runs on this machine" "$T/r4.err" && [ "$(sha256sum "$FILE")" = "$sum" ] &&
    $M -c "import json,sys; c=json.load(open(sys.argv[1]))['config']; sys.exit(0 if c['memory_scope'].startswith('run-') else 1)" "$T/r4/run.json"
ok $? "--memory-scope run: a memory of the run's alone, the machine's left as it was"

bin/accelopt memory forget --run "${r1%-matmul}" --dry-run >"$T/f0.out" 2>&1
[ "$(sha256sum "$FILE")" = "$sum" ] && grep -q "would forget" "$T/f0.out"
ok $? "memory forget --dry-run says what would go and changes nothing"
others=$($M -c "import json,sys; print(sum(1 for l in open(sys.argv[1]) if l.strip() and json.loads(l)['run'] != sys.argv[2]))" "$FILE" "$r1")
bin/accelopt memory forget --run "${r1%-matmul}" >"$T/f1.out" 2>&1
[ $? -eq 0 ] && ! runs_in "$FILE" | grep -q "$r1" && [ "$(grep -c . "$FILE")" -eq "$others" ]
ok $? "memory forget --run RUN takes out one run's lessons (its tasks'), and only those"
bin/accelopt memory forget >"$T/f2.out" 2>&1
[ $? -eq 2 ] && grep -q "forget wants what" "$T/f2.out"
ok $? "memory forget with nothing named refuses (exit 2)"
bin/accelopt memory forget --all >"$T/f3.out" 2>&1
[ $? -eq 0 ] && [ "$(grep -c . "$FILE")" -eq 0 ]
ok $? "memory forget --all empties it"

# two runs ending at once: each takes the lock, merges what the other saved
run r5 &
p5=$!
run r6
c6=$?
wait $p5
c5=$?
r5=$(field "$T/r5.json" "r['run']")
r6=$(field "$T/r6.json" "r['run']")
run_ended $c5 && run_ended $c6 &&
    [ -z "$(comm -23 <(sort -u <(ids "$T/r5/memory.jsonl") <(ids "$T/r6/memory.jsonl")) <(ids "$FILE"))" ]
ok $? "two runs at once both keep their lessons (the file holds both runs' memories: $(runs_in "$FILE"))"

# a file that is no memory: moved aside, said, the run goes on
echo 'not a memory' >"$FILE"
run r7
run_ended $? && grep -q "is not one" "$T/r7.err" && ls "$MEM" | grep -q 'unreadable-' &&
    [ -z "$(comm -3 <(ids "$T/r7/memory.jsonl") <(ids "$FILE"))" ]
ok $? "an unreadable machine memory is moved aside and said; the run goes on, and its memory is the new one"
# a directory other users may write: lessons reach the planner's prompts
chmod 0777 "$MEM"
run r8
c8=$?
chmod 0700 "$MEM"
run_ended $c8 && grep -q "the machine's memory not read" "$T/r8.err" && ! grep -q "earlier runs on this machine" "$T/r8.err"
ok $? "a memory directory others may write is not read"
