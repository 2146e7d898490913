# 40-adversarial.sh - every cheat class and containment case in tests/kernels
# ends with the status its first line expects, and leaves nothing running.
. tests/cli/helpers.sh
ensure_calibration
secret=$T/secret-header.h
echo 'int SECRET_TOKEN_7f3a9 = 1; #error SECRET_TOKEN_7f3a9' >"$secret"
target=$T/pwned.txt
# a loopback listener the network case must not reach
port_file=$T/port
conn_file=$T/connections
python3 - "$port_file" "$conn_file" <<'PY' &
import socket, sys
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(8)
open(sys.argv[1], "w").write(str(s.getsockname()[1]))
s.settimeout(120)
try:
    while True:
        c, _ = s.accept(); open(sys.argv[2], "a").write("connected\n"); c.close()
except OSError:
    pass
PY
listener=$!
for _ in $(seq 50); do [ -s "$port_file" ] && break; sleep 0.1; done
port=$(cat "$port_file")

mkdir -p "$T/work"
# the honest kernel first: an ok-nogain kernel is held against its time
for k in tests/kernels/honest.c $(ls tests/kernels/*.c | grep -v '/honest\.c$'); do
    name=$(basename "$k" .c)
    expect=$(sed -n '1s/.*expect: \([a-z_|-]*\).*/\1/p' "$k")
    src=$T/$name.c
    sed -e "s|PORT|$port|; s|TARGET|\"$target\"|; s|SECRET|\"$secret\"|" "$k" >"$src"
    out=$RESULTS/adv-$name.json
    timeout 120 bin/accelopt profile --alone --task nkibench/matmul --size tiny --timeout 3 \
        --work-dir "$T/work" "$src" \
        >"$out" 2>"$T/$name.err"
    status=$(field "$out" "r['status']" 2>/dev/null)
    if echo "$expect" | grep -qE '(^|\|)ok-nogain(\||$)' && [ "$status" = ok ]; then
        # allowed to pass, but not to be faster than the honest kernel: not
        # under 0.6 of its time, where each of these cheats, working, is 3x
        # faster or more (a quarter of the rows; output without the work).
        # Two separate figures of equal kernels on a busy machine (the suite
        # runs three scripts at once) differed by over 15%; when the honest
        # one looks slow it is measured again and its faster figure kept
        # one script's load can also land on the kernel's own figure: where
        # it still looks too fast, it is measured again too and the second
        # figure judged (a cheat that works is 3x faster every time; CI saw
        # memo_by_pointer at 0.6x of two slow honest figures once)
        nogain() { # nogain KERNEL_RESULT HONEST_RESULT...
            python3 -c "import json,sys; a=json.load(open(sys.argv[1])); h=min(json.load(open(f))['latency_ns'] for f in sys.argv[2:]); sys.exit(0 if a['status']=='ok' and a['latency_ns'] > 0.6*h else 1)" "$@"
        }
        # (up to three times each: a busy minute of the suite, brokers
        # starting beside it, once held all three honest figures up)
        if nogain "$out" "$RESULTS/adv-honest.json"; then
            status=ok-nogain
        else
            for again in 1 2 3; do
                bin/accelopt profile --alone --task nkibench/matmul --size tiny --timeout 3 --work-dir "$T/work" \
                    "$T/honest.c" >"$T/honest-again-$again.json" 2>/dev/null
                if nogain "$out" "$RESULTS/adv-honest.json" "$T"/honest-again-*.json; then
                    status=ok-nogain
                    break
                fi
                bin/accelopt profile --alone --task nkibench/matmul --size tiny --timeout 3 --work-dir "$T/work" \
                    "$src" >"$T/$name-again.json" 2>/dev/null
                if nogain "$T/$name-again.json" "$RESULTS/adv-honest.json" "$T"/honest-again-*.json; then
                    status=ok-nogain
                    break
                fi
            done
        fi
    fi
    echo "$status" | grep -qxE "$expect"
    ok $? "$name: $expect (got ${status:-nothing}: $(field "$out" "(r.get('reason') or '')[:90]" 2>/dev/null) $(field "$out" "r.get('latency_ns')" 2>/dev/null))"
    sleep 0.05
    [ "$(nobody_procs)" = 0 ]; ok $? "$name: nothing left running"
done
# a kernel's writes to fds 1 and 2 never reach the stage's own output
! grep -q FORGED_BY_KERNEL "$T/write_stage_fds.err"; ok $? "the kernel's fake log line is not in the stage's stderr"
python3 -c "import json,sys; l=open(sys.argv[1]).read().splitlines(); r=json.loads(l[0]); sys.exit(0 if len(l)==1 and r['type']=='result' and 'FORGED' not in str(r.get('reason')) and r.get('speedup')!=7999 else 1)" "$RESULTS/adv-write_stage_fds.json"
ok $? "the stage's stdout holds one genuine result, not the kernel's forged line"
grep -q 'x32 ABI' "$RESULTS/adv-syscall_x32.json"; ok $? "an x32 system call is named as one"
! grep -q SECRET_TOKEN_7f3a9 "$RESULTS"/adv-*.json "$T"/*.err; ok $? "the secret header never comes back in diagnostics"
[ ! -e "$target" ]; ok $? "the file outside the work dir was not written"
[ ! -s "$conn_file" ]; ok $? "the loopback server saw no connection"
kill $listener 2>/dev/null
wait $listener 2>/dev/null

[ -z "$(ls -A "$T/work")" ]; ok $? "every job directory was removed"
# (a cgroup is accelopt-PID-SLOT; those of profilers still running, in
# tests beside this one, are theirs)
left=
for d in $(ls /sys/fs/cgroup/memory /sys/fs/cgroup/pids 2>/dev/null | grep '^accelopt-'); do
    pid=${d#accelopt-}
    kill -0 "${pid%-*}" 2>/dev/null || left="$left $d"
done
[ -z "$left" ]
ok $? "no cgroup left behind${left:+ (left:$left)}"
