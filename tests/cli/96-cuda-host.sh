# 96-cuda-host.sh - the hand-written cuda examples' index, edge and barrier
# logic, where no GPU is: each example runs on tests/cuda-host/emu.h (every
# CUDA thread a host thread, blocks one at a time) against the task's
# reference.c at its tiny shape, at an uneven shape (every dimension grown
# by 1 to 3, so no tile divides it), and on the stress inputs where the
# task has them.  This is not
# a GPU: 98-cuda-gpu.sh checks the same kernels on one.
. tests/cli/helpers.sh
if ! echo '#include <ucontext.h>' | g++ -std=c++20 -x c++ -fsyntax-only - 2>/dev/null; then
    for f in nkibench/*/examples/*.cu; do skip "$f on the host emulation" "no g++"; done
    exit 0
fi
for f in nkibench/*/examples/*.cu; do
    t=$(basename "$(dirname "$(dirname "$f")")")
    b=$T/$t-$(basename "$f" .cu)
    # the launch syntax is nvcc's: a call of emu_launch instead
    sed -E 's/\b([A-Za-z_][A-Za-z_0-9]*)<<<([^>]*)>>>\(/emu_launch(\1, \2, /' "$f" >"$b.cc"
    python3 tests/cuda-host/driver.py "nkibench/$t/task.json" >"$b-main.cc" &&
        g++ -std=c++20 -O1 -include tests/cuda-host/emu.h -c "$b.cc" -o "$b.o" 2>"$b.err" &&
        gcc -O1 -c "nkibench/$t/reference.c" -o "$b-ref.o" 2>>"$b.err" &&
        objcopy --redefine-sym kernel=ref_kernel "$b-ref.o" &&
        g++ -std=c++20 -O1 "$b-main.cc" "$b.o" "$b-ref.o" -o "$b" -lm 2>>"$b.err"
    built=$?
    read -r -a tiny <<<"$(python3 -c '
import json, sys
t = json.load(open(sys.argv[1]))
print(" ".join(str(t["sizes"]["tiny"][d]) for d in t["dims"]))' "nkibench/$t/task.json")"
    uneven=()
    for i in "${!tiny[@]}"; do uneven+=($((tiny[i] + i % 3 + 1))); done
    shapes=("${tiny[*]}" "${uneven[*]}")
    grep -q '"stress"' "nkibench/$t/task.json" && shapes+=("${tiny[*]} stress")
    res=
    for shape in "${shapes[@]}"; do
        # shellcheck disable=SC2086
        [ $built -eq 0 ] && timeout 300 "$b" $shape >"$b.out" 2>&1
        rc=$?
        res="$res [$shape] $(tr '\n' ' ' <"$b.out" 2>/dev/null)"
        [ $built -eq 0 ] && [ $rc -eq 0 ] || break
    done
    [ $built -eq 0 ] && [ $rc -eq 0 ]
    ok $? "$f on the host emulation agrees with reference.c:$res$([ $built -eq 0 ] || head -c 300 "$b.err")"
done
