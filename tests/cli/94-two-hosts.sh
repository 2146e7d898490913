# 94-two-hosts.sh - the two-machine layout: host A (its own install, state
# and signing key) runs the broker, redis and four stages; host B (another
# install, its own state and task roots, the deployment's key) runs the
# profiler in a private mount namespace where A's install and the source
# tree do not exist.  B finds tasks by name in its own roots and measures
# the same task A means, or refuses a different one with a clear dead letter.
. tests/cli/helpers.sh
ensure_calibration
export ACCELOPT_BUDGET=0.1 ACCELOPT_WARMUP=0.02 # flow, not speed
FAST="-X session.timeout.ms=6000 -X heartbeat.interval.ms=500" # quick group rejoins
TREE=$PWD
A=$T/hostA
B=$T/hostB
hidden_ok=0
(cd "$T" && unshare -m --propagation private true) 2>/dev/null || hidden_ok=1
if [ $hidden_ok -ne 0 ]; then
    for d in "host A's stages and host B's profiler optimize a task together" \
        "B measured every kernel against the same task as A" \
        "a task that differs on B is a dead letter saying how" \
        "the run with a task B measures differently still ends with one done"; do
        skip "$d" "no private mount namespace here (unshare -m needs root)"
    done
    exit 0
fi

make -s install PREFIX="$A" >/dev/null 2>&1 && make -s install PREFIX="$B" >/dev/null 2>&1
ok $? "two installs: host A and host B"

# host A: the broker, redis, and every stage but the profiler
mkdir -p "$T/stateA" "$T/stateB" "$T/logs2"
start_redis two
# (env execs the command, so $! is the stage itself: stop_services reaches it)
ON_A="env -u ACCELOPT_HOME -u ACCELOPT_TASK_ROOTS ACCELOPT_STATE_DIR=$T/stateA"
on_a() { $ON_A "$@"; }
$ON_A "$A/bin/accelopt" broker --partitions 2 >"$T/broker2.out" 2>"$T/logs2/broker.log" &
SERVICE_PIDS="$SERVICE_PIDS $!"
for _ in $(seq 100); do [ -s "$T/broker2.out" ] && break; sleep 0.05; done
BR=$(head -1 "$T/broker2.out")
for s in selector planner executor summarizer; do
    $ON_A "$A/bin/accelopt-$s" --brokers "$BR" --redis "$REDIS_URL" $FAST --log info 2>"$T/logs2/$s.log" &
    SERVICE_PIDS="$SERVICE_PIDS $!"
done
for _ in $(seq 100); do [ -s "$T/stateA/sign.key" ] && break; sleep 0.05; done
# the deployment's signing key, copied to B as OPERATING.md says
install -m 600 "$T/stateA/sign.key" "$T/stateB/sign.key"
cp "$ACCELOPT_STATE_DIR"/calibration-cpu.json "$T/stateA/" # measured once: one machine plays both
cp "$ACCELOPT_STATE_DIR"/calibration-cpu.json "$T/stateB/"

# B's copy of one task differs from A's (its reference was edited there)
echo "/* host B's edit */" >>"$B/share/accelopt/nkibench/silu/reference.c"

# host B: the profiler, where A's files are not
start_b() {
    env -C "$T" -u ACCELOPT_HOME -u ACCELOPT_TASK_ROOTS ACCELOPT_STATE_DIR="$T/stateB" \
        unshare -m --propagation private sh -c \
        'mount -t tmpfs none "$0" && mount -t tmpfs none "$1" && shift && exec "$@"' "$TREE" "$A" \
        "$B/bin/accelopt-profiler" --brokers "$BR" --redis "$REDIS_URL" $FAST --log info 2>"$T/logs2/profiler-$1.log" &
    SERVICE_PIDS="$SERVICE_PIDS $!"
}
start_b 1

on_a "$A/bin/accelopt" submit matmul --brokers "$BR" --redis "$REDIS_URL" --wait --json --iters 1 --beam 1 \
    --plans 2 --samples 1 --slot-deadline 60 --out "$T/two1" >"$T/two1.jsonl" 2>"$T/two1.err"
run_ended $? && [ "$(field "$T/two1.jsonl" "r['stopped']")" = iterations ] &&
    [ "$(field "$T/two1.jsonl" "r['kernels_evaluated']")" = 3 ] && grep -q ': ok (' "$T/logs2/profiler-1.log"
ok $? "host A's stages and host B's profiler optimize a task together"
hashA=$(on_a "$A/bin/accelopt" profile --alone --task matmul --size tiny "$A/share/accelopt/nkibench/matmul/baseline.c" |
    python3 -c "import json,sys; print(json.load(sys.stdin)['task_sha256'])")
python3 - "$REDIS_PORT" "$(field "$T/two1.jsonl" "r['run']")" "$hashA" <<'PY'
import json, subprocess, sys
port, run, want = sys.argv[1:4]
cli = ["redis-cli", "-p", port]
n = 0
for it in (0, 1):
    out = subprocess.run(cli + ["--raw", "hvals", "accelopt:run:%s:iter:%d" % (run, it)],
                         capture_output=True, text=True).stdout
    for line in out.splitlines():
        if line.startswith("{"):
            r = json.loads(line)
            assert r.get("task_sha256") == want, (r.get("task_sha256"), want)
            n += 1
assert n == 3, n
PY
ok $? "B measured every kernel against the same task as A (the task hash in every result)"

# the task whose copy differs on B: B must refuse it, saying how
silu_A=$(on_a "$A/bin/accelopt" profile --alone --task silu --size tiny "$A/share/accelopt/nkibench/silu/baseline.c" |
    python3 -c "import json,sys; print(json.load(sys.stdin)['task_sha256'])")
on_a "$A/bin/accelopt" submit silu --brokers "$BR" --redis "$REDIS_URL" --wait --json --iters 1 --beam 1 \
    --plans 1 --samples 1 --slot-deadline 5 --out "$T/two2" >"$T/two2.jsonl" 2>"$T/two2.err"
rc=$?
grep -q "dead letter.*task silu differs: the sender has $silu_A, this machine has [0-9a-f]\{64\} in $B/share/accelopt/nkibench/silu" \
    "$T/logs2/profiler-1.log"
ok $? "a task that differs on B is a dead letter saying how (both hashes, B's directory)"
[ $rc -eq 1 ] && [ "$(field "$T/two2.jsonl" "r['stopped']")" = baseline_failed ] &&
    [ "$(field "$T/two2.jsonl" "r['slots_lost']")" = 1 ] && grep -q "lost" "$T/two2.jsonl" &&
    grep -q "silu: the baseline did not pass: lost" "$T/two2.err"
ok $? "the run with a task B measures differently still ends with one done (the baseline lost: exit $rc, said)"
stop_services
! pgrep -f "$A/bin/|$B/bin/" >/dev/null
ok $? "every process of both hosts is gone when the test stops them"
