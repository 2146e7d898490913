# 60-redis-cache.sh - two profiler processes share the profile cache in redis
. tests/cli/helpers.sh
ensure_calibration
command -v redis-server >/dev/null; ok $? "redis-server is installed"
start_redis cache
ok $? "a private redis answers"
port=$REDIS_PORT url=$REDIS_URL
a=$RESULTS/redis-a.json
b=$RESULTS/redis-b.json
bin/accelopt profile --alone --redis "$url" --task nkibench/matmul nkibench/matmul/baseline.c >"$a" 2>/dev/null
ok $? "first profile with --redis"
bin/accelopt profile --alone --redis "$url" --task nkibench/matmul nkibench/matmul/baseline.c >"$b" 2>/dev/null
ok $? "second profile in a new process"
[ "$(field "$a" "r['cached']")" = False ] && [ "$(field "$b" "r['cached']")" = True ]
ok $? "the second process is served from redis"
[ "$(field "$a" "r['latency_ns']")" = "$(field "$b" "r['latency_ns']")" ]; ok $? "with the same measurement"
keys=$(redis-cli -p "$port" --scan --pattern 'accelopt:prof:cpu:*' | wc -l)
[ "$keys" -eq 1 ]; ok $? "one key under accelopt:prof:cpu: ($keys)"
bin/accelopt profile --alone --redis "$url" --task nkibench/matmul \
    tests/kernels/stale_output.c >/dev/null 2>&1
[ "$(redis-cli -p "$port" --scan --pattern 'accelopt:prof:cpu:*' | wc -l)" -eq 2 ]
ok $? "a failing verdict is cached too"
ttl=$(redis-cli -p "$port" ttl "$(redis-cli -p "$port" --scan --pattern 'accelopt:prof:cpu:*' | head -1)")
[ "$ttl" -gt 0 ]; ok $? "cache entries expire (ttl $ttl s)"
# a verdict stored under the old key (no checks version, runner or compiler
# in it) is never served: plant an "ok" for a cheat there and ask again
python3 - "$ACCELOPT_STATE_DIR/calibration-cpu.json" tests/kernels/input_tampering.c >"$T/oldkey" <<'PY'
import hashlib, json, sys
calib = hashlib.sha256(open(sys.argv[1], "rb").read()).hexdigest()[:16]
tj = open("nkibench/matmul/task.json", "rb").read()
src = open(sys.argv[2]).read()
head = "cpu\nmatmul\n%s\ntiny\n%s\n" % (hashlib.sha256(tj).hexdigest(), calib)
print(hashlib.sha256((head + src).encode()).hexdigest())
PY
redis-cli -p "$port" set "accelopt:prof:cpu:$(cat "$T/oldkey")" \
    '{"type":"result","v":1,"id":"x","run":"cli","task":"matmul","target":"cpu","iter":0,"kernel_id":"x","size":"tiny","status":"ok","latency_ns":1}' >/dev/null
bin/accelopt profile --alone --redis "$url" --task nkibench/matmul --size tiny tests/kernels/input_tampering.c \
    >"$T/stale.json" 2>/dev/null
[ "$(field "$T/stale.json" "r['status']")" = rejected ] && [ "$(field "$T/stale.json" "r['cached']")" = False ]
ok $? "a verdict cached under older checks is not served"
bin/accelopt profile --alone --redis redis://127.0.0.1:1 --task nkibench/matmul nkibench/matmul/baseline.c \
    >/dev/null 2>"$T/redis-down.err"
[ $? -ne 0 ] && grep -q "cannot connect to redis" "$T/redis-down.err"; ok $? "an unreachable redis is a clear error"
