# 97-nki-host.sh - the trn target's NKI kernels where no NeuronCore is:
# every task's baseline.py runs on the NKI host emulation
# (nkibench/harness/trn/emu: NumPy, semantics and the documented rules, not
# speed, and not AWS's simulator) against the task's reference.c, at its
# tiny shape, at an uneven shape (every dimension that is not fixed grown
# by 1 to 3, so no tile divides it) and on the stress inputs where the task
# has them; then the emulation's own corpus: kernels that each break one
# rule (it must raise the compiler's error for it) and kernels written in
# the NKI documentation's style rather than ours (they must run).
. tests/cli/helpers.sh
PY=/usr/bin/python3
TASKS=$(for d in nkibench/*/baseline.py; do basename "$(dirname "$d")"; done)
if ! $PY -c 'import numpy' 2>/dev/null || ! command -v gcc >/dev/null; then
    for t in $TASKS; do skip "$t's baseline.py on the NKI host emulation" "python3-numpy or gcc is absent"; done
    exit 0
fi

check_task() { # check_task TASK: one result line in $T/nki-TASK.txt
    local t=$1 shape res rc=0
    local -a tiny uneven shapes
    gcc -O1 -shared -fPIC "nkibench/$t/reference.c" -o "$T/nki-$t-ref.so" -lm 2>"$T/nki-$t.err" || rc=$?
    { read -r -a tiny; read -r -a uneven; } < <($PY -c '
import json, sys
t = json.load(open(sys.argv[1]))
tiny = t["sizes"]["tiny"]
print(" ".join(str(tiny[d]) for d in t["dims"]))
print(" ".join(str(tiny[d] + (0 if a.get("fixed") else i % 3 + 1)) for i, (d, a) in enumerate(t["dims"].items())))' "nkibench/$t/task.json")
    shapes=("${tiny[*]}" "${uneven[*]}")
    grep -q '"stress"' "nkibench/$t/task.json" && shapes+=("${tiny[*]} stress")
    res=
    for shape in "${shapes[@]}"; do
        [ $rc -eq 0 ] || break
        # shellcheck disable=SC2086
        timeout 300 $PY nkibench/harness/trn/check.py "nkibench/$t" "nkibench/$t/baseline.py" \
            "$T/nki-$t-ref.so" $shape >"$T/nki-$t.out" 2>&1
        rc=$?
        res="$res [$shape] $(tr '\n' ' ' <"$T/nki-$t.out" | head -c 400)"
    done
    [ $rc -eq 0 ] || res="$res $(head -c 300 "$T/nki-$t.err")"
    echo "$([ $rc -eq 0 ] && echo ok || echo bad) nkibench/$t/baseline.py:$res" >"$T/nki-$t.txt"
    # every knob value, one at a time, as the builtin model moves them
    # shellcheck disable=SC2086
    timeout 300 $PY tests/nki-host/knobs.py "nkibench/$t" "$T/nki-$t-ref.so" ${uneven[*]} \
        >"$T/nki-$t-knobs.txt" 2>&1 || echo "bad knobs.py failed" >>"$T/nki-$t-knobs.txt"
}
# two streams (the machine has two cores)
set -- $TASKS
half=$(($# / 2))
{ for t in "${@:1:$half}"; do check_task "$t"; done; } &
pid=$!
for t in "${@:$((half + 1))}"; do check_task "$t"; done
wait $pid

for t in $TASKS; do
    read -r verdict line <"$T/nki-$t.txt"
    [ "$verdict" = ok ]
    ok $? "on the NKI host emulation, agrees with reference.c: $line"
    read -r verdict line <"$T/nki-$t-knobs.txt"
    [ "$verdict" = ok ]
    ok $? "at an uneven shape, every value of every knob agrees too: $line"
done
[ "$(echo "$TASKS" | wc -w)" -eq "$(ls -d nkibench/*/task.json | wc -l)" ]
ok $? "every task has a baseline.py"

for corpus in rules written peak; do
    $PY tests/nki-host/run.py $corpus >"$T/nki-$corpus.txt" 2>&1
    ok $? "the emulation's $corpus corpus ran"
    while read -r verdict line; do
        [ "$verdict" = ok ]
        ok $? "NKI host emulation, $corpus: $line"
    done <"$T/nki-$corpus.txt"
done
