# 14-bad-messages.sh - messages built to stop a stage or eat its memory are
# refused with small dead letters, and the stage goes on (issue 14, part 6)
. tests/cli/helpers.sh
export ACCELOPT_BUDGET=0.1 ACCELOPT_WARMUP=0.02 # these test what is found and refused, not speed
ensure_calibration
good() {
    python3 -c "import json;print(json.dumps(dict(type='kernel',v=1,id='good',run='r',task='matmul',target='cpu',iter=1,size='tiny',source=open('tests/kernels/honest.c').read())))"
}

# 900 KB of \x01 bytes in a string: the dead letter stays small
{ python3 -c "import sys; sys.stdout.write('{\"type\":\"kernel\",\"x\":\"' + '\x01' * 900000 + '\"}\n')"; good; } |
    timeout 120 bin/accelopt-profiler --dlq "$T/dlq1" >"$T/bm1.out" 2>"$T/bm1.err"
rc=$?
size=$(wc -c <"$T/dlq1")
[ $rc -eq 0 ] && [ "$size" -lt 20000 ]; ok $? "a 900 KB message of control bytes makes a dead letter of $size bytes (under 20 KB)"
python3 -c "
import json, sys
d = json.loads(open(sys.argv[1]).readline())
sys.exit(0 if d['payload_bytes'] > 900000 and len(d['payload_sha256']) == 64 and len(d['payload']) <= 2048 else 1)" "$T/dlq1"
ok $? "it carries the full size, the hash and a bounded excerpt"
grep -q '"type":"result"' "$T/bm1.out"; ok $? "and the next message is still profiled"

# a 300 MB line under a 300 MB address-space limit: refused while reading
{ python3 -c "
import sys
sys.stdout.write('{\"type\":\"kernel\",\"x\":\"')
chunk = 'x' * (1 << 20)
for _ in range(300): sys.stdout.write(chunk)
sys.stdout.write('\"}\n')"; good; } |
    (ulimit -v 400000; timeout 120 bin/accelopt-profiler --dlq "$T/dlq2" >"$T/bm2.out" 2>"$T/bm2.err")
rc=$?
[ $rc -eq 0 ] && grep -q 'over the 16777216 byte limit' "$T/dlq2"; ok $? "a 300 MB line is refused without holding it (rc $rc)"
grep -q '"type":"result"' "$T/bm2.out"; ok $? "and the next message is still profiled"

# the malformed messages the decoder used to accept, on a live stage
python3 - >"$T/bm3.in" <<'PY'
import json
base = dict(type='kernel', v=1, id='k', run='r', task='matmul', target='cpu', iter=1, size='tiny', source='x')
def enc(d): return json.dumps(d)
print(enc(base)[:-1] + '} garbage')
print(enc(base)[:-1] + ', "size": "cpu"}')
print(enc(dict(base, v=999)))
print(enc(dict(base, iter=-1)))
print(enc(dict(base, source='void kernel(){}\\u0000rest')).replace('\\\\u0000', '\\u0000'))
PY
printf '{"type":"kernel","v":1,"id":"k","run":"r","task":"matmul","target":"cpu","iter":1,"size":"tiny","source":"\xff\xfe"}\n' >>"$T/bm3.in"
timeout 60 bin/accelopt-profiler --dlq "$T/dlq3" <"$T/bm3.in" >"$T/bm3.out" 2>"$T/bm3.err"
for want in 'trailing bytes' 'appears twice' 'version 999' 'negative' 'u0000' 'invalid UTF-8'; do
    grep -q "$want" "$T/dlq3"; ok $? "dead letter: $want"
done
[ "$(wc -l <"$T/dlq3")" -eq 6 ] && [ ! -s "$T/bm3.out" ]; ok $? "six refused, none profiled"
# a message of 160k keys with a repeat at its end (issue 25): the check is
# linear; comparing every pair held a stage for 32 s
python3 -c "
import json
d = dict(type='kernel', v=1, id='k', run='r', task='matmul', target='cpu', iter=1, size='tiny')
d.update(('k%d' % i, i) for i in range(160000))
print(json.dumps(d)[:-1] + ', \"k159999\": 1}')" >"$T/keys.in"
start=$(date +%s%N)
timeout 60 bin/accelopt-profiler --dlq "$T/dlq4" <"$T/keys.in" >/dev/null 2>&1
took=$((($(date +%s%N) - start) / 1000000))
grep -q "'k159999' appears twice" "$T/dlq4" && [ "$took" -lt 5000 ]
ok $? "a 160k-key message with a repeat at its end is refused in ${took} ms (under 5 s)"

# ids are bounded where they enter (issue 27): a name cut to fit a buffer
# would be another run's key.  A run id over 128 bytes, a message id over
# 512 and another message's id (here the plan's candidate_id) over 512 are
# refused with the reason; nothing reaches a key.
python3 - >"$T/ids.in" <<'PY'
import json
plan = dict(type='plan', v=1, id='p', run='r', task='matmul', target='cpu', iter=1, rank=0, index=0,
            text='x', source='x', candidate_id='c', candidate_sha256='a' * 64)
print(json.dumps(dict(plan, run='r' * 129)))
print(json.dumps(dict(plan, id='p' * 513)))
print(json.dumps(dict(plan, candidate_id='c' * 513)))
PY
timeout 60 bin/accelopt-executor --dlq "$T/dlq5" <"$T/ids.in" >"$T/ids.out" 2>/dev/null
grep -q "run id 'rrr[^']*' is not a name of at most 128" "$T/dlq5" && grep -q "message id of 513 bytes is over 512" "$T/dlq5" &&
    grep -q "candidate_id of 513 bytes is over 512" "$T/dlq5" && [ ! -s "$T/ids.out" ]
ok $? "a run id over 128 bytes, an id over 512 and a candidate_id over 512: three dead letters, no kernel"
