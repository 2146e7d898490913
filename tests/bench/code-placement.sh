#!/usr/bin/env bash
# code-placement.sh N [COMMIT] [TASK:SIZE] - does a cpu kernel's figure
# depend on the size of the trusted runner's code? (issue 46)  Copies of
# COMMIT's tree (default f66b5d9, where the runner's main was placed before
# the kernel) and of this tree, each built with 0, 48, 96 and 144 bytes of
# extra code in the runner's main (jumped over: nothing else changes), the
# task's baseline profiled N times by each, round robin.  Per build: the
# kernel's address in the runner, the median of the N medians, their range.
set -eu
here=$(cd "$(dirname "$0")/../.." && pwd)
n=${1:-5} commit=${2:-f66b5d9} spec=${3:-matmul:tiny}
task=${spec%%:*} size=${spec#*:}
T=$(mktemp -d /tmp/accelopt-placement-XXXXXX)
builds=
trap 'for b in $builds; do git -C "$here" worktree remove --force "$T/$b" 2>/dev/null; done; rm -rf "$T"' EXIT
for rev in "$commit" HEAD; do
    for pad in 0 48 96 144; do
        b=$([ "$rev" = HEAD ] && echo this || echo "$commit")-$pad
        git -C "$here" worktree add -q --detach "$T/$b" "$rev"
        builds="$builds $b"
        python3 - "$T/$b/nkibench/harness/cpu/runner.c" "$pad" <<'PY'
import sys
p, pad = sys.argv[1], int(sys.argv[2])
s = open(p).read()
at = s.index("{", s.index("int main(")) + 1
if pad:
    s = s[:at] + '\n    __asm__ volatile("jmp 1f\\n.skip %d, 0x90\\n1:");\n' % pad + s[at:]
open(p, "w").write(s)
PY
        make -s -C "$T/$b" >/dev/null
        # where the kernel lands: the runner compiled as that tree's cpu target does
        flags="-O2 -std=gnu11"
        grep -q fno-reorder-functions "$T/$b/lib/targets/cpu.c" && flags="-O2 -fno-reorder-functions -std=gnu11"
        gcc $flags -I"$T/$b/lib" -c "$T/$b/nkibench/harness/cpu/runner.c" -o "$T/$b.runner.o"
        echo 'void ao_call(float *const *p, const int *dims) { (void)p; (void)dims; }' >"$T/stub.c"
        gcc -O2 -c "$T/stub.c" -o "$T/stub.o"
        gcc -O3 -march=native -std=gnu11 -ffp-contract=fast -c "$here/nkibench/$task/baseline.c" -o "$T/k.o"
        gcc -Wl,-z,noexecstack "$T/k.o" "$T/$b.runner.o" "$T/stub.o" -o "$T/$b.runner" -lm
        nm "$T/$b.runner" | awk '$3 == "kernel" {print "0x" $1}' | sed 's/0x0*/0x/' >"$T/$b.at"
    done
done
st=$T/state
mkdir -p "$st"
(cd "$here" && ACCELOPT_STATE_DIR=$st bin/accelopt calibrate --bw-mib 256 >/dev/null 2>&1)
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg); $task $size baseline"
echo
echo "| build | extra code in main | kernel at | profiles | latency us: median of medians | range |"
echo "|---|---|---|---|---|---|"
for i in $(seq "$n"); do
    for b in $builds; do
        f=$T/kernel-$i.c
        { cat "$here/nkibench/$task/baseline.c"; echo "/* copy $i */"; } >"$f"
        (cd "$T/$b" && ACCELOPT_STATE_DIR=$st ACCELOPT_HOME=$T/$b bin/accelopt profile --alone --task "nkibench/$task" \
            --size "$size" --json "$f" 2>/dev/null) | python3 -c "import json,sys; print(json.load(sys.stdin)['latency_ns'])" >>"$T/$b.txt"
    done
done
for b in $builds; do
    python3 - "$T/$b.txt" "${b%-*}" "${b##*-}" "$(cat "$T/$b.at")" <<'PY'
import statistics as s, sys
x = [float(l) / 1e3 for l in open(sys.argv[1]) if l.strip()]
print("| %s | %s | %s | %d | %.1f | %.1f-%.1f |" % (sys.argv[2], sys.argv[3], sys.argv[4], len(x), s.median(x),
                                                   min(x), max(x)))
PY
done
