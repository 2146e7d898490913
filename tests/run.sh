#!/usr/bin/env bash
# run.sh - every test: C unit tests, CLI scripts, fault tests (reduced
# counts; ACCELOPT_KILL_ROUNDS=30 for the full count), reference and schema
# checks.
# Each test prints TAP lines ("ok N - ...", "not ok N - ...", or "ok N - ...
# # SKIP why" for one this machine cannot run); this counts them and ends
# with "N passed, M failed" (", K skipped" when some were: a skipped test
# never counts as passed).  A test that exits non-zero without a "not ok"
# line counts as one failure.
set -u
cd "$(dirname "$0")/.."
unset ACCELOPT_HOME ACCELOPT_TEST_TMP ACCELOPT_STATE_DIR # this tree, and a run's own dirs
. tests/env.sh
# the suite's one real Kafka broker (issue 58), started by the first test
# that asks for it (tests/cli/helpers.sh, test_kafka), each test on topics
# of its own prefix; ACCELOPT_TEST_KAFKA=0: the embedded mock everywhere
export ACCELOPT_TEST_KAFKA_DIR=$ACCELOPT_TEST_TMP/kafka
trap 'pipeline/kafka/broker.sh stop "$ACCELOPT_TEST_KAFKA_DIR"; rm -rf "$ACCELOPT_TEST_TMP"' EXIT

pass=0
fail=0
skipped=0
took= # "SECONDS NAME" lines, for tests/durations
# tally NAME OUT RC SECONDS: count one finished test's TAP lines and print
# its line (with what failed, and its stderr's tail)
tally() {
    local name=$1 out=$2 rc=$3 t=$4 p f k plan ran
    k=$(grep -c '^ok .* # SKIP' "$out")
    p=$(($(grep -c '^ok ' "$out") - k))
    f=$(grep -c '^not ok ' "$out")
    if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
        f=1
        echo "not ok - $name exited with status $rc"
    fi
    # a script that checked nothing, or fewer than it planned, cannot
    # have passed (a glob that matched nothing, an exit halfway)
    plan=$(sed -n 's/^1\.\.\([0-9][0-9]*\)$/\1/p' "$out" | tail -1) ran=$((p + f + k))
    if [ "$ran" -eq 0 ]; then
        f=$((f + 1))
        echo "not ok - $name ran no test"
    elif [ -n "$plan" ] && [ "$plan" -ne "$ran" ]; then
        f=$((f + 1))
        echo "not ok - $name planned $plan tests and ran $ran"
    fi
    grep '^not ok \|^ok .* # SKIP' "$out"
    if [ "$f" -gt 0 ]; then
        sed 's/^/    stderr: /' "$out.err" | tail -n 20
    fi
    printf '%-34s %3d passed, %d failed%-12s %4d s\n' "$name" "$p" "$f" "$([ "$k" -gt 0 ] && echo ", $k skipped")" "$t"
    took+="$t $name"$'\n'
    pass=$((pass + p))
    fail=$((fail + f))
    skipped=$((skipped + k))
}
# ACCELOPT_ONLY="90-loop faults": only the tests whose name holds one of the words
selected() {
    local w
    [ -z "${ACCELOPT_ONLY:-}" ] && return 0
    for w in $ACCELOPT_ONLY; do case $1 in *"$w"*) return 0 ;; esac; done
    return 1
}
run_one() { # run_one NAME COMMAND...: run it here and now
    local name=$1 out rc t0
    shift
    selected "$name" || return 0
    out=$ACCELOPT_TEST_TMP/$(basename "$name").tap
    t0=$(date +%s)
    "$@" >"$out" 2>"$out.err"
    rc=$?
    tally "$name" "$out" "$rc" $(($(date +%s) - t0))
}

# The test scripts run ACCELOPT_JOBS at a time (default 3), and up to
# ACCELOPT_MAX_JOBS (default 8) while the machine is under 3/4 busy:
# much of their time is spent waiting on brokers, deadlines, scripted model
# servers and sandboxes (docs/BENCHMARKS.md, issue 27).  Each runs in a
# scratch directory, state directory and sandbox uid range of its own (a
# 1/64 slice of this run's), so none sees another's files, key or
# processes; results go to one directory for schemas.py.  Each line is
# printed as its script ends.
JOBS=${ACCELOPT_JOBS:-3}
# beyond JOBS, one more at a time while the machine was under IDLE_BUSY %
# busy for a whole second (ACCELOPT_MAX_JOBS equal to ACCELOPT_JOBS: never)
MAX_JOBS=${ACCELOPT_MAX_JOBS:-$((JOBS + 5))}
IDLE_BUSY=75
export ACCELOPT_RESULTS=$ACCELOPT_TEST_TMP/results
mkdir -p "$ACCELOPT_RESULTS"
uid_first=${ACCELOPT_SANDBOX_UIDS%-*}
uid_count=$(((${ACCELOPT_SANDBOX_UIDS#*-} - uid_first + 1) / 64))
slice=0
# Each script's exit status is written beside its output (NAME.rc) by the
# subshell that ran it: the file, not bash's memory of its children, says
# whether and how a script ended
declare -A running=() # pid -> "name out start"
finish_one() { # finish_one [PID]: wait for that script (else any), tally it
    local pid=${1:-} name out t0 rc
    if [ -n "$pid" ]; then
        wait "$pid" 2>/dev/null
    else
        wait -n -p pid
    fi
    [ -z "${running[$pid]+x}" ] && return 0 # the clang build, started before
    read -r name out t0 <<<"${running[$pid]}"
    unset "running[$pid]"
    rc=$(cat "${out%.tap}.rc" 2>/dev/null) || rc=1
    tally "$name" "$out" "${rc:-1}" $(($(date +%s) - t0))
}
finish_ended() { # tally every running script that has ended, without blocking
    local pid out
    for pid in "${!running[@]}"; do
        read -r _ out _ <<<"${running[$pid]}"
        [ -e "${out%.tap}.rc" ] && finish_one "$pid"
    done
}
busy=100 # the machine's busy share (%) between the last two samples
cpu_last=
sample_busy() {
    local u n s i w q sq st b t
    read -r _ u n s i w q sq st _ </proc/stat
    b=$((u + n + s + q + sq + st))
    t=$((b + i + w))
    [ -n "$cpu_last" ] && [ "$t" -gt "${cpu_last#* }" ] &&
        busy=$((100 * (b - ${cpu_last% *}) / (t - ${cpu_last#* })))
    cpu_last="$b $t"
}
extra_at=0 # when a script was last started beyond JOBS
room() { # room: 0 if another script may start now
    local n=${#running[@]}
    [ "$n" -lt "$JOBS" ] && return 0
    # beyond JOBS one at a time: the last one started has had 5 s to show
    # what it takes
    [ "$n" -lt "$MAX_JOBS" ] && [ "$busy" -lt "$IDLE_BUSY" ] && [ $(($(date +%s) - extra_at)) -ge 5 ] &&
        extra_at=$(date +%s)
}
start_script() { # start_script NAME SCRIPT
    local name=$1 dir first
    selected "$name" || return 0
    if [ "$MAX_JOBS" -le "$JOBS" ]; then
        while [ "${#running[@]}" -ge "$JOBS" ]; do finish_one; done
    else
        sample_busy
        until room; do
            sleep 1
            sample_busy
            finish_ended
        done
    fi
    dir=$ACCELOPT_TEST_TMP/$(basename "$name" .sh)
    mkdir -p "$dir/state"
    [ -f "$ACCELOPT_STATE_DIR/calibration-cpu.json" ] && cp "$ACCELOPT_STATE_DIR/calibration-cpu.json" "$dir/state/"
    first=$((uid_first + slice % 64 * uid_count))
    slice=$((slice + 1))
    ACCELOPT_TEST_TMP=$dir ACCELOPT_STATE_DIR=$dir/state \
        ACCELOPT_SANDBOX_UIDS=$first-$((first + uid_count - 1)) \
        bash -c 'bash "$1" >"$2.tap" 2>"$2.tap.err"; echo $? >"$2.rc"' run "$2" "$dir" &
    running[$!]="$name $dir.tap $(date +%s)"
}

# the second compiler's build (make clang-build) runs beside the first tests
# and is counted at the end
clang_pid=
if selected build/clang && command -v clang >/dev/null; then
    { make -s --no-print-directory clang-build >"$ACCELOPT_TEST_TMP/clang.log" 2>&1; echo $? >"$ACCELOPT_TEST_TMP/clang.rc"; } &
    clang_pid=$!
fi
clang_build() {
    if [ -z "$clang_pid" ]; then
        echo "ok 1 - clang build # SKIP no clang on this machine"
        return
    fi
    local rc
    wait "$clang_pid" 2>/dev/null
    rc=$(cat "$ACCELOPT_TEST_TMP/clang.rc" 2>/dev/null)
    if [ "${rc:-1}" = 0 ]; then
        echo "ok 1 - clang builds the library, the stages and the unit tests, warnings as errors"
    else
        echo "not ok 1 - clang build (make clang-build):"
        tail -n 20 "$ACCELOPT_TEST_TMP/clang.log" >&2
    fi
}

for t in build/tests/test_*; do
    run_one "unit/$(basename "$t")" "$t"
done
# the run's calibration, shared by every script (measured once a day per
# machine, kept in build/: tests/cli/helpers.sh)
if [ -n "$(for t in tests/cli/[0-9]*.sh tests/faults/[0-9]*.sh; do selected "${t#tests/}" && echo "$t"; done)" ]; then
    (. tests/cli/helpers.sh && ensure_calibration) >/dev/null 2>&1
fi
# the longest first, so the last to start are the short ones: by the
# seconds each took in a whole run on 2 cores (tests/durations; a script
# not listed there starts first)
for t in $(ls tests/faults/[0-9]*.sh tests/cli/[0-9]*.sh |
    awk 'NR == FNR { s[$2] = $1; next } { n = substr($0, 7); print (n in s ? s[n] : 99999), $0 }' \
        tests/durations - | sort -s -k1,1nr | cut -d' ' -f2); do
    start_script "${t#tests/}" "$t"
done
while [ "${#running[@]}" -gt 0 ]; do finish_one; done
ran_any=$((pass + fail + skipped))
run_one "references" /usr/bin/python3 tests/references.py
run_one "schemas" /usr/bin/python3 tests/schemas.py
run_one "build/clang" clang_build

# a whole run's seconds per script, to refresh tests/durations from
[ -z "${ACCELOPT_ONLY:-}" ] && { sed -n '/^#/p' tests/durations
    printf '%s' "$took" | grep ' [a-z]*/[0-9]' | sort -k1,1nr; } >build/test-durations
if [ "$ran_any" -eq 0 ] && [ -n "${ACCELOPT_ONLY:-}" ] && ! selected references && ! selected schemas &&
    ! selected build/clang; then
    echo "not ok - no test matches '$ACCELOPT_ONLY' (make test T=...: a part of a test's path)"
    fail=$((fail + 1))
fi
echo "$pass passed, $fail failed$([ "$skipped" -gt 0 ] && echo ", $skipped skipped")"
[ "$fail" -eq 0 ]
