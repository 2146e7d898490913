# 16-install.sh - `make install` gives a tree that works with the sources out
# of reach: binaries in PREFIX/bin find their data in PREFIX/share/accelopt;
# units point at PREFIX; man pages come from --help; `make uninstall`
# removes exactly what was installed.
. tests/cli/helpers.sh
export ACCELOPT_BUDGET=0.1 ACCELOPT_WARMUP=0.02 # an installed tree works: flow, not speed

ensure_calibration
P=$T/prefix
make -s install PREFIX="$P" >"$T/install.out" 2>&1
ok $? "make install PREFIX=... succeeds"
bad=0
for b in accelopt accelopt-profiler accelopt-planner accelopt-executor accelopt-summarizer accelopt-selector; do
    [ -x "$P/bin/$b" ] || { echo "# no $P/bin/$b" >&2; bad=1; }
    head -n 5 "$P/share/man/man1/$b.1" 2>/dev/null | grep -q '^\.TH' || { echo "# no man page for $b" >&2; bad=1; }
done
for f in nkibench/matmul/task.json nkibench/harness/cpu/runner.c prompts/cpu/planner.system.txt \
    schemas/kernel.json lib/runner_proto.h; do
    [ -f "$P/share/accelopt/$f" ] || { echo "# no $f" >&2; bad=1; }
done
ok $bad "binaries, man pages, tasks, harness and runner sources, prompts and schemas installed"
grep -q "^ExecStart=$P/bin/accelopt-profiler " "$P/lib/systemd/system/accelopt-profiler@.service" &&
    ! grep -rq /usr/local "$P/lib/systemd/system"
ok $? "the installed units run the installed binaries"
grep -q '^\.SS run' "$P/share/man/man1/accelopt.1" && grep -q 'wall-time' "$P/share/man/man1/accelopt.1"
ok $? "accelopt(1) carries every command's options"

# the sources out of reach: a private mount namespace hides the tree
TREE=$PWD
hidden() { # hidden COMMAND...: run with the source tree (and ACCELOPT_HOME) gone
    (cd "$T" && env -u ACCELOPT_HOME -u ACCELOPT_TASK_ROOTS \
        unshare -m --propagation private sh -c 'mount -t tmpfs none "$0" && exec "$@"' "$TREE" "$@")
}
if hidden true 2>/dev/null; then
    hidden sh -c '[ -z "$(ls "$0")" ]' "$TREE"; ok $? "the source tree is out of reach"
    hidden "$P/bin/accelopt" profile --alone --task matmul --size tiny "$P/share/accelopt/nkibench/matmul/baseline.c" \
        >"$T/inst-prof.json" 2>"$T/inst-prof.err"
    [ "$(field "$T/inst-prof.json" "r['status']")" = ok ]
    ok $? "installed: accelopt profile --alone measures a kernel by task name"
    hidden "$P/bin/accelopt" bench --size tiny >"$T/inst-bench.out" 2>"$T/inst-bench.err"
    grep -q "(14 of 14 tasks)" "$T/inst-bench.out"
    rc=$?
    [ $rc -eq 0 ] || tail -n 20 "$T/inst-bench.out" "$T/inst-bench.err" >&2
    ok $rc "installed: accelopt bench --size tiny, all 14 tasks"
    hidden "$P/bin/accelopt" run matmul --iters 1 --beam 1 --plans 2 --json --out "$T/inst-run" \
        >"$T/inst-run.jsonl" 2>"$T/inst-run.err"
    [ "$(field "$T/inst-run.jsonl" "r['stopped']")" = iterations ]
    ok $? "installed: a tiny accelopt run ends with its done"
    hidden env ACCELOPT_HOME=$T/nowhere "$P/bin/accelopt" profile --alone --task matmul --size tiny \
        "$P/share/accelopt/nkibench/matmul/baseline.c" >/dev/null 2>"$T/inst-home.err"
    [ $? -ne 0 ] && grep -q "$T/nowhere" "$T/inst-home.err"
    ok $? "ACCELOPT_HOME overrides where the data is found"
else
    for d in "the source tree is out of reach" "installed: accelopt profile" "installed: accelopt bench" \
        "installed: a tiny accelopt run" "ACCELOPT_HOME overrides"; do
        skip "$d" "no private mount namespace here (unshare -m needs root)"
    done
fi

# DESTDIR staging, then uninstall: every installed file goes, nothing else
D=$T/stage
mkdir -p "$D/opt/ao/bin" && echo mine >"$D/opt/ao/bin/users-own-tool"
make -s install DESTDIR="$D" PREFIX=/opt/ao >/dev/null 2>&1 && [ -x "$D/opt/ao/bin/accelopt-profiler" ] &&
    grep -q '^ExecStart=/opt/ao/bin/accelopt-selector ' "$D/opt/ao/lib/systemd/system/accelopt-selector@.service"
ok $? "make install DESTDIR=... PREFIX=/opt/ao stages the tree with /opt/ao paths"
nfiles=$(wc -l <"$D/opt/ao/share/accelopt/installed-files")
make -s uninstall DESTDIR="$D" PREFIX=/opt/ao >"$T/uninstall.out" 2>&1 &&
    [ -z "$(find "$D" -type f ! -name users-own-tool)" ] && [ ! -e "$D/opt/ao/share/accelopt" ] &&
    [ ! -e "$D/opt/ao/share/doc/accelopt" ] && [ -f "$D/opt/ao/bin/users-own-tool" ] &&
    grep -q "removed $nfiles files" "$T/uninstall.out"
ok $? "make uninstall removes exactly the $nfiles installed files and accelopt's own directories"
