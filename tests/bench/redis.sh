# redis.sh - sourced by the loop benchmarks: a throwaway redis-server on a
# free loopback port, stopped when the script exits.  Sets REDIS_URL.
# private_redis LOGFILE
private_redis() {
    local port
    port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no >"$1" 2>&1 &
    BENCH_REDIS_PID=$!
    trap 'kill $BENCH_REDIS_PID 2>/dev/null; wait $BENCH_REDIS_PID 2>/dev/null || true' EXIT
    for _ in $(seq 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.05; done
    REDIS_URL=redis://127.0.0.1:$port
}
