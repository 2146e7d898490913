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
export ACCELOPT_HOME=$PWD
export ACCELOPT_TEST_TMP=$(mktemp -d /tmp/accelopt-test-XXXXXX)
export ACCELOPT_STATE_DIR=$ACCELOPT_TEST_TMP/state
export ACCELOPT_LOG=${ACCELOPT_LOG:-warn}
# sandboxes of this run get uids of their own: another test run, or any
# profiler on the machine, never counts as ours (nor disturbs ours)
if [ -z "${ACCELOPT_SANDBOX_UIDS:-}" ]; then
    first=$((1600000000 + (RANDOM % 128) * 16777216))
    export ACCELOPT_SANDBOX_UIDS=$first-$((first + 16777215))
fi
trap 'rm -rf "$ACCELOPT_TEST_TMP"' EXIT

pass=0
fail=0
skipped=0
run_one() {
    local name=$1 out rc p f k t0
    shift
    case $name in *${ACCELOPT_ONLY:-}*) ;; *) return ;; esac # ACCELOPT_ONLY=90-loop: just those
    out=$ACCELOPT_TEST_TMP/$(basename "$name").tap
    t0=$(date +%s)
    "$@" >"$out" 2>"$out.err"
    rc=$?
    t0=$(($(date +%s) - t0))
    k=$(grep -c '^ok .* # SKIP' "$out")
    p=$(($(grep -c '^ok ' "$out") - k))
    f=$(grep -c '^not ok ' "$out")
    if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
        f=1
        echo "not ok - $name exited with status $rc"
    fi
    grep '^not ok \|^ok .* # SKIP' "$out"
    if [ "$f" -gt 0 ]; then
        sed 's/^/    stderr: /' "$out.err" | tail -n 20
    fi
    printf '%-34s %3d passed, %d failed%-12s %4d s\n' "$name" "$p" "$f" "$([ "$k" -gt 0 ] && echo ", $k skipped")" "$t0"
    pass=$((pass + p))
    fail=$((fail + f))
    skipped=$((skipped + k))
}

# the second compiler's build (make clang-build) runs beside the first tests
# and is counted at the end
clang_pid=
case build/clang in *${ACCELOPT_ONLY:-}*)
    if command -v clang >/dev/null; then
        make -s --no-print-directory clang-build >"$ACCELOPT_TEST_TMP/clang.log" 2>&1 &
        clang_pid=$!
    fi ;;
esac
clang_build() {
    if [ -z "$clang_pid" ]; then
        echo "ok 1 - clang build # SKIP no clang on this machine"
    elif wait "$clang_pid"; then
        echo "ok 1 - clang builds the library, the stages and the unit tests, warnings as errors"
    else
        echo "not ok 1 - clang build (make clang-build):"
        tail -n 20 "$ACCELOPT_TEST_TMP/clang.log" >&2
    fi
}

for t in build/tests/test_*; do
    run_one "unit/$(basename "$t")" "$t"
done
for t in tests/cli/[0-9]*.sh; do
    run_one "cli/$(basename "$t")" bash "$t"
done
for t in tests/faults/[0-9]*.sh; do
    run_one "faults/$(basename "$t")" bash "$t"
done
run_one "references" /usr/bin/python3 tests/references.py
run_one "schemas" /usr/bin/python3 tests/schemas.py
run_one "build/clang" clang_build

echo "$pass passed, $fail failed$([ "$skipped" -gt 0 ] && echo ", $skipped skipped")"
[ "$fail" -eq 0 ]
