# helpers.sh - sourced by the CLI tests: TAP output and common fixtures
set -u
cd "${ACCELOPT_HOME:?run through tests/run.sh}"
T=${ACCELOPT_TEST_TMP:?}
RESULTS=$T/results            # every result line a test keeps, checked by schemas.py
mkdir -p "$RESULTS"
n=0

ok() { # ok CONDITION-STATUS DESCRIPTION
    n=$((n + 1))
    if [ "$1" -eq 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fi
}

check() { # check DESCRIPTION -- COMMAND...
    local d=$1
    shift
    "$@" >/dev/null 2>&1
    ok $? "$d"
}

# jq-like field access with python (no extra package needed)
field() { # field JSON-FILE EXPR   (EXPR over r, the parsed object)
    python3 -c "import json,sys; r=json.load(open(sys.argv[1])); v=$2; print('' if v is None else v)" "$1"
}

# the calibration every test shares (small arrays keep it quick)
ensure_calibration() {
    [ -f "$ACCELOPT_STATE_DIR/calibration-cpu.json" ] ||
        bin/accelopt calibrate --bw-mib 64 >/dev/null 2>&1
}

# processes of the sandbox user still alive, beyond those there before the test
count_nobody() {
    local c
    c=$(pgrep -u 65534 -c 2>/dev/null)
    echo "${c:-0}"
}
NOBODY_BEFORE=$(count_nobody)
nobody_procs() {
    echo $(($(count_nobody) - NOBODY_BEFORE))
}
