# 70-model-client.sh - the model client against the scripted server: retries,
# backoff, Retry-After, timeouts, refusals, usage, cost, per-role config, keys
. tests/cli/helpers.sh
KEY=sk-test-S3CRET-0123456789abcdef
export ACCELOPT_LLM_KEY=$KEY ACCELOPT_LLM_MODEL=m

# scenario NAME SCRIPT [planner flags...]: one candidate, one plan; output in
# $T/NAME.out, stderr in $T/NAME.err, the elapsed seconds in ELAPSED
scenario() {
    local name=$1 script=$2 t0
    shift 2
    start_llm "$name" "$script" || return 1
    t0=$(date +%s.%N)
    /usr/bin/python3 tests/msgs.py candidate matmul - '{"plans": 1}' |
        ACCELOPT_LLM_URL=$LLM_URL bin/accelopt-planner --llm-backoff 0.05 --llm-attempts 4 "$@" \
        >"$T/$name.out" 2>"$T/$name.err"
    RC=$?
    ELAPSED=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
    cp "$T/$name.out" "$RESULTS/model-$name.jsonl"
}
plan_field() { field "$T/$1.out" "$2"; }
no_key() { ! grep -q "$KEY" "$T/$1.out" "$T/$1.err"; }

scenario ok '{"*": [{"content": "Tile the k loop by 64.", "usage": [1000, 500]}]}' \
    --llm-price-in 2 --llm-price-out 10
[ $RC -eq 0 ] && [ "$(plan_field ok "r['text']")" = "Tile the k loop by 64." ]
ok $? "a plain reply becomes the plan text"
[ "$(plan_field ok "r['tokens']")" = "{'prompt': 1000, 'completion': 500}" ]; ok $? "tokens recorded"
[ "$(plan_field ok "round(r['cost_usd'], 9)")" = 0.007 ]; ok $? "cost = 1000 x \$2/M + 500 x \$10/M"
field "$LLM_LOG" "r['auth']" | grep -qx "Bearer $KEY"; ok $? "the key goes in the Authorization header"
[ "$(field "$LLM_LOG" "r['model']")" = m ] && [ "$(field "$LLM_LOG" "r['max_tokens']")" = 8192 ]
ok $? "the request names the model and the token limit"
[ "$(field "$LLM_LOG" "r['path']")" = /v1/chat/completions ]; ok $? "POST {base}/chat/completions"
no_key ok; ok $? "the key is in no output or log"

scenario r429 '{"*": [{"status": 429, "headers": {"Retry-After": "1"}}, {"content": "plan B"}]}'
[ $RC -eq 0 ] && [ "$(plan_field r429 "r['text']")" = "plan B" ] && [ "$(llm_requests)" -eq 2 ]
ok $? "429 is retried"
awk -v e="$ELAPSED" 'BEGIN { exit !(e >= 1.0) }'; ok $? "after the Retry-After of 1 s (${ELAPSED}s)"

scenario r500 '{"*": [{"status": 500}, {"status": 503}, {"content": "plan C"}]}'
[ "$(plan_field r500 "r['text']")" = "plan C" ] && [ "$(llm_requests)" -eq 3 ]; ok $? "500 and 503 are retried"
grep -q "attempt 1 of 4 failed (HTTP 500" "$T/r500.err"; ok $? "each retry is logged with its cause"

scenario stall '{"*": [{"delay": 4, "content": "late"}, {"content": "in time"}]}' --llm-timeout 1
[ "$(plan_field stall "r['text']")" = "in time" ] && grep -q "timed out" "$T/stall.err"
ok $? "a stall past the timeout is abandoned and retried"
awk -v e="$ELAPSED" 'BEGIN { exit !(e < 3.5) }'; ok $? "without waiting for the stalled reply (${ELAPSED}s)"

# replies are streamed: a server that sends its headers and then nothing is
# dead in --llm-stall, however long --llm-timeout is; one that streams
# slowly is alive as long as it streams
grep -q '"stream": true' "$LLM_LOG"; ok $? "the request asks for a streamed reply"
scenario hung '{"*": [{"stall": 3600, "content": "never"}, {"content": "second"}]}' --llm-stall 1
[ "$(plan_field hung "r['text']")" = second ] && grep -q "stalled: nothing received for 1 s (--llm-stall)" "$T/hung.err"
ok $? "a server that sends nothing after its headers is given up after --llm-stall, and the call tried again"
# (libcurl averages the speed over its last 5 s: the headers' bytes keep it
# above a byte a second that long; at the default of 120 s that is noise)
awk -v e="$ELAPSED" 'BEGIN { exit !(e < 10) }'; ok $? "soon, not at the timeout's 600 s (${ELAPSED}s)"
scenario slow "{\"*\": [{\"gap\": 0.4, \"content\": \"$(printf 'tile k %.0s' $(seq 30))\", \"usage\": [70, 30]}]}" --llm-stall 1
[ "$(llm_requests)" -eq 1 ] && plan_field slow "r['text']" | grep -q "^tile k tile k" &&
    [ "$(plan_field slow "r['tokens']")" = "{'prompt': 70, 'completion': 30}" ]
ok $? "a reply that streams for longer than --llm-stall, a piece at a time, is taken whole, its usage from the last event"
awk -v e="$ELAPSED" 'BEGIN { exit !(e >= 2.4) }'; ok $? "(it streamed for ${ELAPSED}s)"
scenario whole '{"*": [{"no_stream": true, "content": "in one piece", "usage": [11, 7]}]}'
[ "$(plan_field whole "r['text']")" = "in one piece" ] && [ "$(plan_field whole "r['tokens']")" = "{'prompt': 11, 'completion': 7}" ]
ok $? "a server that ignores the stream flag is read as one reply"
scenario broke '{"*": [{"raw": "data: {\"choices\": [{\"delta\": {\"content\": \"half\"}}]}\n\ndata: {\"error\": {\"message\": \"overloaded\"}}\n\n"}, {"content": "whole"}]}'
[ "$(plan_field broke "r['text']")" = whole ] && grep -q "the server broke off its reply: overloaded" "$T/broke.err"
ok $? "an error event in the stream is a failed attempt, tried again"

scenario cut '{"*": [{"finish": "length", "content": "Tile the", "usage": [900, 8192]}, {"content": "whole plan", "usage": [900, 40]}]}'
[ "$(plan_field cut "r['text']")" = "whole plan" ] && [ "$(llm_requests)" -eq 2 ]
ok $? "a reply cut off at the token limit is a failed attempt"
[ "$(plan_field cut "r['tokens']['completion']")" = 8232 ]; ok $? "whose tokens still count"

scenario junk '{"*": [{"raw": "{\"choices\": [oops"}, {"raw": "{\"choices\": []}"}, {"content": "parsed"}]}'
[ "$(plan_field junk "r['text']")" = parsed ] && [ "$(llm_requests)" -eq 3 ]
ok $? "malformed JSON and an empty choice list are retried"

scenario quota '{"*": [{"status": 429, "error": {"message": "You exceeded your current quota", "code": "insufficient_quota"}}]}'
[ $RC -eq 0 ] && [ "$(llm_requests)" -eq 1 ] && plan_field quota "r['error']" | grep -q "quota is exhausted"
ok $? "a quota error is not retried and fails the slot"

scenario auth '{"*": [{"status": 401, "echo_auth": true}]}'
[ "$(llm_requests)" -eq 1 ] && plan_field auth "r['error']" | grep -q "refused the key (HTTP 401)"
ok $? "an auth error is not retried"
no_key auth && grep -q '\[key\]' "$T/auth.out"; ok $? "a server echoing the key gets it redacted"

scenario down '{"*": [{"status": 502}]}' --llm-attempts 3
[ $RC -eq 0 ] && [ "$(llm_requests)" -eq 3 ] &&
    plan_field down "r['error']" | grep -q "failed after 3 attempts: HTTP 502"
ok $? "bounded attempts, then a failed slot with the reason"
[ -z "$(plan_field down "r.get('text')")" ]; ok $? "with no plan text"

# a Retry-After over 120 s is capped, and a stop cuts the wait short
start_llm long '{"*": [{"status": 429, "headers": {"Retry-After": "900"}}, {"content": "never"}]}'
/usr/bin/python3 tests/msgs.py candidate matmul - '{"plans": 1}' >"$T/long.in"
ACCELOPT_LLM_URL=$LLM_URL bin/accelopt-planner --log info <"$T/long.in" >"$T/long.out" 2>"$T/long.err" &
pid=$!
for _ in $(seq 100); do grep -q "retrying in" "$T/long.err" && break; sleep 0.05; done
kill -TERM $pid
t0=$(date +%s)
wait $pid
rc=$?
grep -q "retrying in 120.00 s" "$T/long.err"; ok $? "Retry-After: 900 waits 120 s at most"
[ $rc -eq 0 ] && [ $(($(date +%s) - t0)) -le 2 ]; ok $? "SIGTERM ends the wait at once (exit $rc)"
[ ! -s "$T/long.out" ] && grep -q "stopped" "$T/long.err"
ok $? "and no failed plan is emitted for a call cut short by a stop"

# every plan slot ends in a plan message, failed or not
start_llm slots '{"*": [{"content": "one"}, {"status": 400}, {"content": "three"}]}'
/usr/bin/python3 tests/msgs.py candidate matmul - '{"plans": 3}' |
    ACCELOPT_LLM_URL=$LLM_URL bin/accelopt-planner --llm-backoff 0.05 >"$T/slots.out" 2>/dev/null
[ "$(wc -l <"$T/slots.out")" -eq 3 ] && [ "$(grep -c '"error"' "$T/slots.out")" -eq 1 ]
ok $? "N plans out, a 400 among them a failed slot"

# per-role settings win over the shared ones
start_llm role '{"*": [{"content": "from the role server"}]}'
/usr/bin/python3 tests/msgs.py candidate matmul - '{"plans": 1}' |
    ACCELOPT_LLM_URL=http://127.0.0.1:1/v1 ACCELOPT_PLANNER_URL=$LLM_URL \
    ACCELOPT_PLANNER_MODEL=planner-m bin/accelopt-planner --llm-attempts 1 >"$T/role.out" 2>/dev/null
[ "$(field "$T/role.out" "r['text']")" = "from the role server" ] &&
    [ "$(field "$LLM_LOG" "r['model']")" = planner-m ]
ok $? "ACCELOPT_PLANNER_URL and _MODEL override ACCELOPT_LLM_*"

# the key from a file
echo "sk-from-file-987654321" >"$T/keyfile"
start_llm keyfile '{"*": [{"content": "k"}]}'
/usr/bin/python3 tests/msgs.py candidate matmul - '{"plans": 1}' |
    env -u ACCELOPT_LLM_KEY ACCELOPT_LLM_URL=$LLM_URL bin/accelopt-planner \
    --planner-key-file "$T/keyfile" >/dev/null 2>&1
[ "$(field "$LLM_LOG" "r['auth']")" = "Bearer sk-from-file-987654321" ]; ok $? "--planner-key-file"

# budgets: refused before the call once spent, in-process and in redis
start_llm budget '{"*": [{"content": "p", "usage": [60, 20]}]}'
/usr/bin/python3 tests/msgs.py candidate matmul - '{"plans": 3, "budget_tokens": 100}' |
    ACCELOPT_LLM_URL=$LLM_URL bin/accelopt-planner >"$T/budget.out" 2>/dev/null
[ "$(llm_requests)" -eq 2 ] && [ "$(grep -c "token budget is spent (160 of 100)" "$T/budget.out")" -eq 1 ]
ok $? "a token budget stops calls once spent"
start_redis budget
start_llm budget2 '{"*": [{"content": "p", "usage": [60, 20]}]}'
/usr/bin/python3 tests/msgs.py candidate matmul - '{"plans": 2, "budget_usd": 0.0005}' |
    ACCELOPT_LLM_URL=$LLM_URL bin/accelopt-planner --redis "$REDIS_URL" --llm-price-in 5 \
    >/dev/null 2>&1
# (the run's next iteration: its own candidate's plans are kept in the
# run's store, and would come from there, asking no model)
/usr/bin/python3 tests/msgs.py candidate matmul - '{"plans": 2, "budget_usd": 0.0005}' |
    sed 's/"iter": 1,/"iter": 2,/; s/"cand:run-t:1:0"/"cand:run-t:2:0"/' |
    ACCELOPT_LLM_URL=$LLM_URL bin/accelopt-planner --redis "$REDIS_URL" --llm-price-in 5 \
    >"$T/budget2.out" 2>/dev/null
[ "$(llm_requests)" -eq 2 ] && [ "$(grep -c "dollar budget is spent" "$T/budget2.out")" -eq 2 ]
ok $? "a dollar budget is shared through redis by separate processes"
[ "$(rcli hget accelopt:run:run-t tokens_prompt)" = 120 ] &&
    [ "$(rcli hget accelopt:run:run-t cost_usd)" = 0.0006 ]
ok $? "redis holds the run's tokens and cost"
! rcli --scan | xargs -r -n1 redis-cli -p "$REDIS_PORT" dump 2>/dev/null | grep -q "$KEY"
ok $? "the key is not in redis"

# usage errors: exit 2 with a clear message
/usr/bin/python3 tests/msgs.py candidate matmul 2>/dev/null | env -u ACCELOPT_LLM_URL ACCELOPT_LLM_MODEL=gpt-x \
    bin/accelopt-planner >/dev/null 2>"$T/nourl.err"
[ $? -eq 2 ] && grep -q "model 'gpt-x' needs a server" "$T/nourl.err"; ok $? "a model without a URL is a usage error"
ACCELOPT_LLM_URL=ftp://x bin/accelopt-planner </dev/null >/dev/null 2>"$T/ftp.err"
[ $? -eq 2 ] && grep -q "must start with http" "$T/ftp.err"; ok $? "a URL that is not http(s) is refused"
ACCELOPT_LLM_URL=$LLM_URL bin/accelopt-planner --planner-key-file /nonexistent </dev/null >/dev/null 2>"$T/kf.err"
[ $? -eq 2 ] && grep -q "cannot read the key file" "$T/kf.err"; ok $? "a missing key file is a usage error"

# one config file serves every stage; role keys override the shared ones
# (a redis of their own: the run's plans above are kept in the other)
start_redis conf
start_llm conf '{"*": [{"content": "```c\nvoid kernel(void) {}\n```"}]}'
export ACCELOPT_LLM_URL=$LLM_URL ACCELOPT_LLM_KEY_FILE=$T/keyfile ACCELOPT_REDIS=$REDIS_URL
unset ACCELOPT_LLM_MODEL ACCELOPT_LLM_KEY
/usr/bin/python3 tests/msgs.py candidate matmul - '{"plans": 1}' |
    bin/accelopt-planner --config docs/accelopt.conf.example >/dev/null 2>"$T/conf.err"
ok $? "the example config loads in the planner"
/usr/bin/python3 tests/msgs.py plan matmul "Tile it." - '{"samples": 1}' |
    bin/accelopt-executor --config docs/accelopt.conf.example >/dev/null 2>>"$T/conf.err"
ok $? "and in the executor"
bin/accelopt-summarizer --config docs/accelopt.conf.example </dev/null >/dev/null 2>>"$T/conf.err"
ok $? "and in the summarizer"
[ "$(jl "$LLM_LOG" 0 "r['model']")" = gpt-oss-120b ] && [ "$(jl "$LLM_LOG" 1 "r['model']")" = qwen3-coder-480b ]
ok $? "the planner uses planner-model, the executor the shared llm-model"
[ "$(jl "$LLM_LOG" 0 "r['temperature']")" = 1 ] && [ "$(jl "$LLM_LOG" 1 "r['temperature']")" = 0.7 ]
ok $? "per-role temperature"
