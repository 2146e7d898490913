# 10-usage.sh - help, version, exit codes for bad usage
. tests/cli/helpers.sh
bin/accelopt --help >/dev/null; ok $? "accelopt --help exits 0"
bin/accelopt >/dev/null 2>&1; [ $? -eq 2 ]; ok $? "no command exits 2"
bin/accelopt frobnicate >/dev/null 2>&1; [ $? -eq 2 ]; ok $? "an unknown command exits 2"
bin/accelopt profile --help | grep -q -- '--task'; ok $? "profile --help lists its options"
bin/accelopt profile --bogus x >/dev/null 2>&1; [ $? -eq 2 ]; ok $? "an unknown option exits 2"
bin/accelopt profile --task nkibench/matmul >/dev/null 2>&1; [ $? -eq 2 ]; ok $? "a missing file exits 2"
bin/accelopt profile --task nkibench/matmul --size huge tests/kernels/honest.c >/dev/null 2>&1
[ $? -eq 2 ]; ok $? "an unknown size class exits 2"
bin/accelopt-profiler --version | grep -q '^accelopt-profiler '; ok $? "accelopt-profiler --version"
bin/accelopt-profiler --timeout abc </dev/null >/dev/null 2>&1; [ $? -eq 2 ]; ok $? "a bad number exits 2"
ACCELOPT_TIMEOUT=-1 bin/accelopt-profiler </dev/null >/dev/null 2>&1; [ $? -eq 2 ]
ok $? "a bad value from the environment exits 2"
bin/accelopt-profiler --help | grep -q 'ACCELOPT_NAME'; ok $? "help explains the layering"
for s in planner executor summarizer; do
    bin/accelopt-$s --version | grep -q "^accelopt-$s "; ok $? "accelopt-$s --version"
    bin/accelopt-$s --help | grep -q -- "--$s-url"; ok $? "accelopt-$s --help lists its role's model options"
    bin/accelopt-$s --bogus </dev/null >/dev/null 2>&1; [ $? -eq 2 ]; ok $? "accelopt-$s: an unknown option exits 2"
    echo '{"type": "nonsense"' | bin/accelopt-$s --dlq "$T/$s.dlq" >"$T/$s.out" 2>/dev/null
    [ $? -eq 0 ] && [ ! -s "$T/$s.out" ] && grep -q '"reason":"not valid JSON' "$T/$s.dlq"
    ok $? "accelopt-$s: malformed input goes to the dead letters, the stage goes on"
done
