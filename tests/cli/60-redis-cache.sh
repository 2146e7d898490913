# 60-redis-cache.sh - two profiler processes share the profile cache in redis
. tests/cli/helpers.sh
ensure_calibration
command -v redis-server >/dev/null; ok $? "redis-server is installed"
port=$(free_port)
dir=$T/redis
mkdir -p "$dir"
redis-server --port "$port" --bind 127.0.0.1 --dir "$dir" --appendonly yes --save '' \
    --daemonize yes --pidfile "$dir/pid" --logfile "$dir/log" >/dev/null
for _ in $(seq 50); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
redis-cli -p "$port" ping | grep -q PONG; ok $? "a private redis answers"
url=redis://127.0.0.1:$port
a=$RESULTS/redis-a.json
b=$RESULTS/redis-b.json
bin/accelopt profile --redis "$url" --task nkibench/matmul nkibench/matmul/baseline.c >"$a" 2>/dev/null
ok $? "first profile with --redis"
bin/accelopt profile --redis "$url" --task nkibench/matmul nkibench/matmul/baseline.c >"$b" 2>/dev/null
ok $? "second profile in a new process"
[ "$(field "$a" "r['cached']")" = False ] && [ "$(field "$b" "r['cached']")" = True ]
ok $? "the second process is served from redis"
[ "$(field "$a" "r['latency_ns']")" = "$(field "$b" "r['latency_ns']")" ]; ok $? "with the same measurement"
keys=$(redis-cli -p "$port" --scan --pattern 'accelopt:prof:cpu:*' | wc -l)
[ "$keys" -eq 1 ]; ok $? "one key under accelopt:prof:cpu: ($keys)"
bin/accelopt profile --redis "$url" --task nkibench/matmul \
    tests/kernels/stale_output.c >/dev/null 2>&1
[ "$(redis-cli -p "$port" --scan --pattern 'accelopt:prof:cpu:*' | wc -l)" -eq 2 ]
ok $? "a failing verdict is cached too"
bin/accelopt profile --redis redis://127.0.0.1:1 --task nkibench/matmul nkibench/matmul/baseline.c \
    >/dev/null 2>"$T/redis-down.err"
[ $? -ne 0 ] && grep -q "cannot connect to redis" "$T/redis-down.err"; ok $? "an unreachable redis is a clear error"
kill "$(cat "$dir/pid")" 2>/dev/null
