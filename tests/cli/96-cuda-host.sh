# 96-cuda-host.sh - the cuda kernels' index, edge and barrier logic where
# no GPU is: every task's baseline.cu, its trusted reference.cu and the
# hand-written examples run on tests/cuda-host/emu.h (each CUDA thread a
# host coroutine, blocks one at a time, scratch from cudaMalloc NaN-filled;
# tensor-core fragments in tests/cuda-host/mma.h)
# against the task's reference.c, at its tiny shape, at an uneven shape
# (every dimension that is not fixed grown by 1 to 3, so no tile divides it) and on the
# stress inputs where the task has them.  Not a GPU: speed, the memory
# model and the runtime are 98-cuda-gpu.sh's, on one.
. tests/cli/helpers.sh
TASKS=$(for d in nkibench/*/baseline.cu; do basename "$(dirname "$d")"; done)
files() { # files TASK: its cuda kernels
    ls "nkibench/$1/baseline.cu" "nkibench/$1/reference.cu" "nkibench/$1/examples/"*.cu 2>/dev/null
}
if ! command -v g++ >/dev/null || ! command -v perl >/dev/null; then
    for t in $TASKS; do
        for f in $(files "$t"); do skip "$f on the host emulation" "g++ or perl is absent"; done
    done
    exit 0
fi

check_task() { # check_task TASK: one result line per file in $T/host-TASK.txt
    local t=$1 f b shape rc built res
    local m=$T/$t-main
    python3 tests/cuda-host/driver.py "nkibench/$t/task.json" >"$m.cc" &&
        g++ -std=c++20 -O1 -c "$m.cc" -o "$m.o" 2>"$m.err" &&
        gcc -O1 -c "nkibench/$t/reference.c" -o "$m-ref.o" 2>>"$m.err" &&
        objcopy --redefine-sym kernel=ref_kernel "$m-ref.o" 2>>"$m.err"
    local base=$?
    local -a tiny uneven shapes
    # uneven: each dimension that is not fixed grown by 1 to 3
    { read -r -a tiny; read -r -a uneven; } < <(python3 -c '
import json, sys
t = json.load(open(sys.argv[1]))
tiny = t["sizes"]["tiny"]
print(" ".join(str(tiny[d]) for d in t["dims"]))
print(" ".join(str(tiny[d] + (0 if a.get("fixed") else i % 3 + 1)) for i, (d, a) in enumerate(t["dims"].items())))' "nkibench/$t/task.json")
    shapes=("${tiny[*]}" "${uneven[*]}")
    grep -q '"stress"' "nkibench/$t/task.json" && shapes+=("${tiny[*]} stress")
    for f in $(files "$t"); do
        b=$T/$t-$(basename "$f" .cu)
        perl tests/cuda-host/rewrite.pl "$f" >"$b.cc"
        [ $base -eq 0 ] &&
            g++ -std=c++20 -O1 -U_FORTIFY_SOURCE -I tests/cuda-host -include tests/cuda-host/emu.h -c "$b.cc" -o "$b.o" 2>"$b.err" &&
            g++ "$m.o" "$b.o" "$m-ref.o" -o "$b" -lm 2>>"$b.err"
        built=$?
        res=
        for shape in "${shapes[@]}"; do
            # shellcheck disable=SC2086
            [ $built -eq 0 ] && timeout 120 "$b" $shape >"$b.out" 2>&1
            rc=$?
            res="$res [$shape] $(tr '\n' ' ' <"$b.out" 2>/dev/null)"
            [ $built -eq 0 ] && [ $rc -eq 0 ] || break
        done
        [ $built -eq 0 ] || res="$res $(cat "$m.err" "$b.err" 2>/dev/null | head -c 300)"
        echo "$([ $built -eq 0 ] && [ $rc -eq 0 ] && echo ok || echo bad) $f:$res"
    done >"$T/host-$t.txt"
}
# two streams (the machine has two cores)
set -- $TASKS
half=$(($# / 2))
{ for t in "${@:1:$half}"; do check_task "$t"; done; } &
pid=$!
for t in "${@:$((half + 1))}"; do check_task "$t"; done
wait $pid

for t in $TASKS; do
    while read -r verdict line; do
        [ "$verdict" = ok ]
        ok $? "on the host emulation, agrees with reference.c: $line"
    done <"$T/host-$t.txt"
done
