# 12-task-paths.sh - a task name or path from a message cannot run a command,
# reach a directory outside the task roots, or hang or exhaust a stage with
# a file that is not a regular one (issue 14, part 1)
. tests/cli/helpers.sh
export ACCELOPT_BUDGET=0.1 ACCELOPT_WARMUP=0.02 # these test what is found and refused, not speed
ensure_calibration
evil=$T/evil
pwned=$T/PWNED
mkdir -p "$evil"
cp nkibench/matmul/reference.c nkibench/matmul/baseline.c "$evil"
python3 - "$evil" "$pwned" <<'PY'
import json, sys
t = json.load(open('nkibench/matmul/task.json'))
t['name'] = "m';id>%s;'" % sys.argv[2]
json.dump(t, open(sys.argv[1] + '/task.json', 'w'))
PY
kernel_msg() { # kernel_msg TASK [TASK_PATH]
    python3 -c "import json,sys;print(json.dumps(dict(type='kernel',v=1,id='k',run='r',task=sys.argv[1],target='cpu',iter=1,size='tiny',source=open('tests/kernels/honest.c').read(),**(dict(task_path=sys.argv[2]) if len(sys.argv) > 2 else {}))))" "$@"
}

# the attack as reported: a task_path outside the roots.  Tasks are found
# by name in the profiler's own roots; the path in a message is never used.
kernel_msg matmul "$evil" | timeout 60 bin/accelopt-profiler >"$T/tp1.out" 2>&1
[ ! -e "$pwned" ]; ok $? "a kernel message naming a task path outside the roots runs nothing"
matmul_hash=$(bin/accelopt profile --alone --task matmul --size tiny tests/kernels/honest.c | python3 -c "import json,sys; print(json.load(sys.stdin)['task_sha256'])")
grep -q "\"type\":\"result\".*\"task_sha256\":\"$matmul_hash\"" "$T/tp1.out"
ok $? "the kernel is measured against the task of that name in the roots, not the path"

# the same task inside a root: refused by its name, still nothing runs
kernel_msg evil | ACCELOPT_TASK_ROOTS="$T" timeout 60 bin/accelopt-profiler >"$T/tp2.out" 2>&1
[ ! -e "$pwned" ]; ok $? "a task in a root whose name is a shell command runs nothing"
grep -q 'is not an identifier' "$T/tp2.out"; ok $? "the name is refused as not an identifier"

# tensor names reach the generated harness: identifiers only
python3 - "$T/evil2" <<'PY'
import json, os, sys, shutil
os.makedirs(sys.argv[1], exist_ok=True)
t = json.load(open('nkibench/matmul/task.json'))
t['inputs'][0]['name'] = 'lhs); }\n#include "/etc/shadow"\nvoid f(float *x'
json.dump(t, open(sys.argv[1] + '/task.json', 'w'))
PY
kernel_msg evil2 | ACCELOPT_TASK_ROOTS="$T" timeout 60 bin/accelopt-profiler >"$T/tp3.out" 2>&1
grep -q 'C identifier' "$T/tp3.out"; ok $? "a tensor name that is not an identifier is refused"

# a task "name" that climbs out of a root
kernel_msg ../../tests | timeout 60 bin/accelopt-profiler >"$T/tp4.out" 2>&1
grep -q '"type":"dlq".*not a task name' "$T/tp4.out"; ok $? "a task that is a path, not a name, is refused"

# files that are not regular: a FIFO, /dev/zero, /dev/stdin as task.json
for f in fifo zero stdin; do
    d=$T/nreg_$f
    mkdir -p "$d"
    cp nkibench/matmul/reference.c nkibench/matmul/baseline.c "$d"
    case $f in
    fifo) mkfifo "$d/task.json" ;;
    zero) ln -s /dev/zero "$d/task.json" ;;
    stdin) ln -s /dev/stdin "$d/task.json" ;;
    esac
    { kernel_msg "nreg_$f"; kernel_msg matmul; } |
        ACCELOPT_TASK_ROOTS="$T:$ACCELOPT_HOME/nkibench" timeout 60 bin/accelopt-profiler \
        >"$T/nreg-$f.out" 2>&1
    rc=$?
    [ $rc -eq 0 ] && grep -q 'not a regular file' "$T/nreg-$f.out" &&
        grep -q '"type":"result"' "$T/nreg-$f.out"
    ok $? "task.json as $f: refused at once, and the next message is still profiled"
done

# the planner and the selector find tasks the same way
python3 -c "import json;print(json.dumps(dict(type='task',v=1,id='t',run='r',task='matmul',target='cpu',iter=0,spec='$evil',size='tiny')))" |
    timeout 30 bin/accelopt-selector >"$T/sel.out" 2>&1
[ ! -e "$pwned" ] && grep -q 'outside the task roots' "$T/sel.out"; ok $? "the selector refuses a task spec outside the roots"

# no shell in the code: system() and popen() are gone from lib/ and tools/
# (every C file under both, found by find: a glob of a layout that changed
# matched nothing, and a check that reads nothing cannot fail)
files=$(find lib tools -name '*.c' -not -path '*/node_modules/*' | sort)
nfiles=$(echo "$files" | grep -c .)
nlib=$(echo "$files" | grep -c '^lib/')
for f in $files; do sed 's|/\*.*||; s|//.*||; s|^ *\*.*||' "$f"; done |
    grep -qE '(^|[^_A-Za-z0-9])(system|popen|execl|execlp)[[:space:]]*\('
[ $? -ne 0 ] && [ "$nlib" -ge 20 ] && [ "$nfiles" -ge 40 ]
ok $? "no system(), popen() or shell exec anywhere in lib/ or tools/ (comments aside; $nfiles files read, $nlib under lib/)"
# and the scan finds one where there is one
printf 'int f(void) { return system("true"); }\n' >"$T/shell.c"
sed 's|/\*.*||; s|//.*||; s|^ *\*.*||' "$T/shell.c" | grep -qE '(^|[^_A-Za-z0-9])(system|popen|execl|execlp)[[:space:]]*\('
ok $? "the scan for a shell finds a call to system()"

# a user's own task directory on the command line still works
mkdir -p "$T/mine/mytask"
cp nkibench/matmul/* "$T/mine/mytask/" 2>/dev/null
python3 -c "import json;t=json.load(open('nkibench/matmul/task.json'));t['name']='mytask';json.dump(t,open('$T/mine/mytask/task.json','w'))"
timeout 120 bin/accelopt profile --alone --task "$T/mine/mytask" --size tiny tests/kernels/honest.c >"$T/mine.out" 2>&1
grep -q '"status":"ok"' "$T/mine.out"; ok $? "accelopt profile --alone --task DIR takes the user's own directory"
