# 10-usage.sh - help, version, exit codes for bad usage
. tests/cli/helpers.sh
bin/accelopt --help >/dev/null; ok $? "accelopt --help exits 0"
bin/accelopt >/dev/null 2>&1; [ $? -eq 2 ]; ok $? "no command exits 2"
bin/accelopt frobnicate >/dev/null 2>&1; [ $? -eq 2 ]; ok $? "an unknown command exits 2"
bin/accelopt profile --help | grep -q -- '--task'; ok $? "profile --help lists its options"
bin/accelopt profile --bogus x >/dev/null 2>&1; [ $? -eq 2 ]; ok $? "an unknown option exits 2"
bin/accelopt profile --alone --task nkibench/matmul >/dev/null 2>&1; [ $? -eq 2 ]; ok $? "a missing file exits 2"
bin/accelopt profile --alone --task nkibench/matmul --size huge tests/kernels/honest.c >/dev/null 2>&1
[ $? -eq 2 ]; ok $? "an unknown size class exits 2"
bin/accelopt-profiler --version | grep -q '^accelopt-profiler '; ok $? "accelopt-profiler --version"
bin/accelopt-profiler --timeout abc </dev/null >/dev/null 2>&1; [ $? -eq 2 ]; ok $? "a bad number exits 2"
ACCELOPT_TIMEOUT=-1 bin/accelopt-profiler </dev/null >/dev/null 2>&1; [ $? -eq 2 ]
ok $? "a bad value from the environment exits 2"
bin/accelopt-profiler --help | grep -q 'ACCELOPT_NAME'; ok $? "help explains the layering"
for s in planner executor summarizer; do
    bin/accelopt-$s --version | grep -q "^accelopt-$s "; ok $? "accelopt-$s --version"
    bin/accelopt-$s --help | grep -q -- "--$s-url"; ok $? "accelopt-$s --help lists its role's model options"
    bin/accelopt-$s --bogus </dev/null >/dev/null 2>&1; [ $? -eq 2 ]; ok $? "accelopt-$s: an unknown option exits 2"
    echo '{"type": "nonsense"' | bin/accelopt-$s --dlq "$T/$s.dlq" >"$T/$s.out" 2>/dev/null
    [ $? -eq 0 ] && [ ! -s "$T/$s.out" ] && grep -q '"reason":"not valid JSON' "$T/$s.dlq"
    ok $? "accelopt-$s: malformed input goes to the dead letters, the stage goes on"
done
# --target: every command and the profiler take it; a target this build lacks is refused by name
bin/accelopt profile --alone --target nki --task nkibench/matmul tests/kernels/honest.c >/dev/null 2>"$T/tg.err"
[ $? -eq 2 ] && grep -q "target 'nki' is not built into this accelopt (built in: cpu, cuda, trn)" "$T/tg.err"
ok $? "profile --target nki: exit 2, naming the targets there are"
bin/accelopt calibrate --target trn2 >/dev/null 2>&1; a=$?
bin/accelopt bench --target nki >/dev/null 2>&1; b=$?
bin/accelopt run --target CUDA matmul >/dev/null 2>&1; c=$?
bin/accelopt-profiler --target nki </dev/null >/dev/null 2>&1; d=$?
[ "$a$b$c$d" = 2222 ]; ok $? "calibrate, bench, run and the profiler refuse an unknown target with exit 2 ($a$b$c$d)"
bin/accelopt profile --alone --target cpu --task nkibench/matmul --budget 0.05 tests/kernels/honest.c >"$T/tg.json" 2>/dev/null &&
    [ "$(field "$T/tg.json" "r['target'] + ' ' + r['status']")" = "cpu ok" ]
ok $? "profile --target cpu measures as before, and the result names its target"
# stages started together on a new state dir (a pipe of them) make one
# signing key between them, never read one half written, and leave no
# temporary file behind
pids=
for i in 1 2 3 4 5 6 7 8; do
    ACCELOPT_STATE_DIR=$T/keyrace bin/accelopt-planner </dev/null >/dev/null 2>"$T/keyrace-$i.err" &
    pids="$pids $!"
done
bad=0
for p in $pids; do wait "$p" || bad=$((bad + 1)); done
[ "$bad" -eq 0 ] && [ "$(ls -A "$T/keyrace")" = sign.key ] &&
    [ "$(stat -c %a "$T/keyrace/sign.key")" = 600 ] && grep -Eqx '[0-9a-f]{64}' "$T/keyrace/sign.key"
ok $? "eight stages started at once share one whole signing key (mode 600, no temporary left)"

# the run's config is checked before anything starts: a plan mode that is
# neither distinct nor independent is a usage error, not a silent default
bin/accelopt run matmul --plan-mode greedy >/dev/null 2>"$T/pm.err"
[ $? -eq 2 ] && grep -q "plan-mode is distinct or independent, not 'greedy'" "$T/pm.err"
ok $? "accelopt run --plan-mode greedy exits 2 and says what it takes"

# a state directory another user could write is a setting a restart will
# not fix (issue 56): exit 2, said, and nothing of a run is written
mkdir -p "$T/open-state" && chmod 777 "$T/open-state"
ACCELOPT_STATE_DIR=$T/open-state bin/accelopt run matmul --size tiny --iters 1 --out "$T/open-run" >/dev/null 2>"$T/os1.err"
r1=$?
ACCELOPT_STATE_DIR=$T/open-state bin/accelopt calibrate >/dev/null 2>"$T/os2.err"
r2=$?
echo '{}' | ACCELOPT_STATE_DIR=$T/open-state bin/accelopt-planner >/dev/null 2>"$T/os3.err"
r3=$?
[ $r1 -eq 2 ] && [ $r2 -eq 2 ] && [ $r3 -eq 2 ] && [ ! -e "$T/open-run" ] &&
    grep -q "is not safe" "$T/os1.err" && grep -q "is not safe" "$T/os2.err" && grep -q "is not safe" "$T/os3.err"
ok $? "an unsafe state directory exits 2: run $r1 (nothing written), calibrate $r2, a stage $r3"
# ... and profile, before it measures the machine's peaks (issue 68: it
# measured for many seconds, then could not keep them, exit 1)
t0=$(date +%s%N)
ACCELOPT_STATE_DIR=$T/open-state bin/accelopt profile --task nkibench/silu --size tiny nkibench/silu/baseline.c \
    >/dev/null 2>"$T/os4.err"
r4=$? ms=$((($(date +%s%N) - t0) / 1000000))
[ $r4 -eq 2 ] && grep -q "is not safe" "$T/os4.err" && ! grep -q "measuring" "$T/os4.err" && [ $ms -lt 3000 ]
ok $? "profile with an unsafe state directory exits 2 before measuring anything ($r4, $ms ms)"
for c in 0 2000 99999999999; do bin/accelopt-executor --calls $c </dev/null 2>"$T/calls.err"; echo "$? $(grep -c 'must be 1 to 1024' "$T/calls.err")"; done >"$T/calls.out"
[ "$(sort -u "$T/calls.out")" = "2 1" ]
ok $? "an agent stage's --calls out of 1 to 1024 is a usage error ($(tr '\n' ' ' <"$T/calls.out"))"
# a state or data directory too long for the paths built under it is
# refused at the start (exit 2, issue 70): never cut into another path
long=$T/$(printf 'd%.0s' $(seq 1 420))
ACCELOPT_STATE_DIR=$long bin/accelopt status >/dev/null 2>"$T/ls1.err"
l1=$?
env -u ACCELOPT_STATE_DIR XDG_STATE_HOME=$long bin/accelopt-selector </dev/null >/dev/null 2>"$T/ls2.err"
l2=$?
ACCELOPT_HOME=$long bin/accelopt bench >/dev/null 2>"$T/ls3.err"
l3=$?
[ $l1 -eq 2 ] && [ $l2 -eq 2 ] && [ $l3 -eq 2 ] && [ ! -e "$long" ] &&
    grep -q "state directory .* bytes: at most 400" "$T/ls1.err" &&
    grep -q "state directory .* bytes: at most 400" "$T/ls2.err" && grep -q "at most 400" "$T/ls3.err"
ok $? "a state or data directory over 400 bytes exits 2, nothing made: status $l1, a stage $l2, bench $l3"
# one just under the limit works, its paths whole; and TMPDIR is not ours
# (jobs go under --work-dir), so a long one changes nothing
mid=$T/$(printf 'm%.0s' $(seq 1 $((390 - ${#T}))))
ACCELOPT_STATE_DIR=$mid bin/accelopt status >"$T/ls4.out" 2>"$T/ls4.err"
l4=$?
TMPDIR=$long bin/accelopt profile --build-only --task nkibench/silu nkibench/silu/baseline.c \
    >"$T/ls5.out" 2>"$T/ls5.err"
l5=$?
[ ${#mid} -le 400 ] && [ $l4 -eq 0 ] && [ $l5 -eq 0 ] && grep -q '"status":"ok"' "$T/ls5.out"
ok $? "a ${#mid}-byte state directory works (status $l4), and a ${#long}-byte TMPDIR leaves a build alone ($l5)"

# the front's commands are one table: every one in the usage dispatches
# (its --help exits 0), and a name not there is a usage error
bin/accelopt --help | sed -n '/^commands:/,/^$/p' | awk 'NF && !/commands:/ {print $1}' >"$T/cmds"
bad=0
while read -r c; do bin/accelopt "$c" --help >/dev/null 2>&1 || bad=$((bad + 1)); done <"$T/cmds"
bin/accelopt nonesuch >/dev/null 2>"$T/none.err"
r=$?
[ "$(wc -l <"$T/cmds")" -eq 13 ] && [ $bad -eq 0 ] && [ $r -eq 2 ] && grep -q "unknown command 'nonesuch'" "$T/none.err"
ok $? "the usage lists $(wc -l <"$T/cmds") commands, each answers --help ($bad did not); an unknown one exits $r"
echo "1..$n"
