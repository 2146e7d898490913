# 11-deps-first.sh - `make deps run` and `make deps test` work as one command
# on a machine without the packages (issue 45, part 1): pkg-config is read
# when the Makefile is, so deps must come before a fresh read of it.  Here a
# stand-in pkg-config knows no package until a stand-in apt-get "installs".
. tests/cli/helpers.sh
stub=$T/stub-bin installed=$T/installed
mkdir -p "$stub"
real_pc=$(command -v pkg-config)
cat >"$stub/pkg-config" <<SH
#!/bin/sh
[ -e "$installed" ] && exec "$real_pc" "\$@"
echo "Package \$2 was not found in the pkg-config search path" >&2
exit 1
SH
# every package installed but one, until apt-get has run
cat >"$stub/dpkg-query" <<SH
#!/bin/sh
pkg=\$(eval echo "\\\${\$#}")
if [ "\$pkg" = libcjson-dev ] && [ ! -e "$installed" ]; then echo "unknown ok not-installed"; else echo "install ok installed"; fi
SH
cat >"$stub/apt-get" <<SH
#!/bin/sh
echo "apt-get \$*" >>"$T/apt.log"
case "\$*" in *install*) touch "$installed" ;; esac
SH
printf '#!/bin/sh\n"$@"\n' >"$stub/sudo"
printf '#!/bin/sh\necho "npm $*" >>"%s/apt.log"\n' "$T" >"$stub/npm"
chmod +x "$stub"/*
obj=$T/build/lib/wire/msg.o # one object that includes cJSON.h by pkg-config's -I
mk() { PATH="$stub:$PATH" make --no-print-directory BUILD="$T/build" BINDIR="$T/bin" "$@"; }

# without deps first: one clear line and exit 2, no compiler error
mk "$obj" >"$T/nodeps.out" 2>&1
rc=$?
[ "$rc" -eq 2 ] && grep -q 'pkg-config knows no rdkafka.*run `make deps` first' "$T/nodeps.out" &&
    ! grep -q 'No such file' "$T/nodeps.out"
ok $? "a build without the packages says to run make deps, in one line (status $rc)"
[ ! -e "$installed" ]; ok $? "the stand-in knows nothing before deps"

# the README's form: deps, then the build, in one make
mk deps "$obj" >"$T/deps.out" 2>&1
rc=$?
[ "$rc" -eq 0 ] && [ -s "$obj" ]
ok $? "make deps GOAL builds GOAL with the flags pkg-config gives once deps installed the packages (status $rc)"
grep -q 'installing: libcjson-dev' "$T/deps.out" && grep -q 'apt-get.*install.*libcjson-dev' "$T/apt.log"
ok $? "deps installed the missing package first"
! grep -q 'was not found\|No such file' "$T/deps.out"
ok $? "no pkg-config or compiler errors on the way"

# the order of the words does not matter, and the same goals in the
# README's form for test: `make deps test` names test after deps
rm -f "$obj"
mk "$obj" deps >"$T/deps2.out" 2>&1
[ $? -eq 0 ] && [ -s "$obj" ]; ok $? "make GOAL deps builds GOAL after deps too"

# CI runs the README's test command exactly as written
readme_test=$(sed -n 's/^\(make deps test\) .*#.*/\1/p' README.md | head -n1)
[ "$readme_test" = "make deps test" ] && grep -qx "$readme_test" .ci/run
ok $? ".ci/run runs the README's test command ('$readme_test') as written"
echo "1..$n"
