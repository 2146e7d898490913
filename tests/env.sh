# env.sh - sourced by tests/run.sh, and by a test script run alone: the
# environment a test run needs, where the caller has not set it (the tree,
# a scratch directory, a state directory, and sandbox uids of its own so
# that no other run or profiler on the machine counts as ours).
export ACCELOPT_HOME=${ACCELOPT_HOME:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
export ACCELOPT_TEST_TMP=${ACCELOPT_TEST_TMP:-$(mktemp -d /tmp/accelopt-test-XXXXXX)}
export ACCELOPT_STATE_DIR=${ACCELOPT_STATE_DIR:-$ACCELOPT_TEST_TMP/state}
export ACCELOPT_LOG=${ACCELOPT_LOG:-warn}
if [ -z "${ACCELOPT_SANDBOX_UIDS:-}" ]; then
    ao_first=$((1600000000 + (RANDOM % 128) * 16777216))
    export ACCELOPT_SANDBOX_UIDS=$ao_first-$((ao_first + 16777215))
fi
