# 73-terminal.sh - what a person at a terminal reads (issue 29): accelopt
# profile's short verdict (JSON when piped or with --json), a noisy timing
# said as such, a failure with the compiler's words
. tests/cli/helpers.sh
ensure_calibration
export ACCELOPT_BUDGET=0.05 ACCELOPT_WARMUP=0.01
on_tty() { script -qec "$*" /dev/null | tr -d '\r'; } # stdout a terminal, as a person's is

on_tty bin/accelopt profile --task nkibench/matmul nkibench/matmul/baseline.c >"$T/tty.out"
head -1 "$T/tty.out" | grep -q '^matmul at tiny: ok$' &&
    grep -Eq '^  latency  [0-9.]+ (ns|us|ms) \+- [0-9.]+% \(median of [0-9]+ calls; fastest ' "$T/tty.out" &&
    grep -Eq '^  peak     [0-9.]+% of this machine.s, bound by (memory|matmul|elementwise)' "$T/tty.out" &&
    ! grep -q '{' "$T/tty.out"
ok $? "profile on a terminal: the verdict, latency +- spread, % of peak and bound ($(sed -n 2p "$T/tty.out"))"
bin/accelopt profile --task nkibench/matmul nkibench/matmul/baseline.c >"$T/pipe.out" 2>/dev/null
on_tty bin/accelopt profile --json --task nkibench/matmul nkibench/matmul/baseline.c >"$T/json.out"
python3 -c 'import json,sys; [json.loads(open(f).read()) for f in sys.argv[1:]]' "$T/pipe.out" "$T/json.out"
ok $? "piped, or with --json: the result message"
on_tty bin/accelopt profile --spread 0.0000001 --max-calls 5 --task nkibench/matmul nkibench/matmul/baseline.c \
    >"$T/noisy.out"
grep -q '^  noisy    the spread' "$T/noisy.out"
ok $? "a timing whose spread stayed over the one asked is flagged as noisy"
sed 's/for (/for ((/' nkibench/matmul/baseline.c >"$T/broken.c"
on_tty bin/accelopt profile --task nkibench/matmul "$T/broken.c" >"$T/broken.out"
head -1 "$T/broken.out" | grep -q '^matmul at tiny: compile_error' && grep -q 'error' "$T/broken.out"
ok $? "a kernel that does not build: the status and the compiler's words"
