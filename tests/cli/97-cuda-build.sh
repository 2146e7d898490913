# 97-cuda-build.sh - the cuda target where only nvcc is (CI has no GPU):
# every task's cuda baseline and trusted reference (all fourteen) builds
# and passes the target's
# checks of what was built; every cheat of tests/kernels/cuda that the
# build can refuse is refused, with the reason; reference.c, wrapped as a
# cuda kernel (what 98-cuda-gpu.sh checks reference.cu against), and the
# hand-written examples (nkibench/*/examples/*.cu) build;
# and without a GPU, profiling and calibrating say why they cannot.
. tests/cli/helpers.sh
NVCC=/usr/local/cuda/bin/nvcc
TASKS=$(for d in nkibench/*/baseline.cu; do basename "$(dirname "$d")"; done)
build() { # build TASK OUT FILE...: accelopt profile --build-only, one line per file
    local t=$1 o=$2
    shift 2
    timeout 600 bin/accelopt profile --target cuda --build-only --task "nkibench/$t" --size tiny \
        --work-dir "$T/work-$t" "$@" >"$o" 2>"$T/$(basename "$o").err"
}
# each result line of OUT as "STATUS TARGET COMPILED REASON" (COMPILED: a
# compile time was measured), one python for a file, not one per field:
# the ~70 builds' checks were 200 python starts
outcomes() { # outcomes OUT
    python3 -c '
import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    print(r["status"], r["target"], r.get("timing", {}).get("compile_ns", 0) > 0,
          (r.get("reason") or "").replace("\n", " ")[:110])' "$1"
}
if [ ! -x "$NVCC" ]; then
    echo "# nvcc is absent ($NVCC): nothing of the cuda target can be built here"
    for _ in $(seq 42); do skip "cuda build checks" "nvcc is absent ($NVCC)"; done
    exit 0
fi
for t in $TASKS; do mkdir -p "$T/work-$t"; done

# reference.c inside a cuda kernel: copies the inputs to the host, runs the
# cpu reference there, copies its output back (98-cuda-gpu.sh measures it
# against reference.cu's outputs; here it must build and pass the checks)
wrap_reference() { # wrap_reference TASK OUT.cu
    python3 - "nkibench/$1/task.json" "nkibench/$1/reference.c" >"$2" <<'PY'
import json, re, sys
t = json.load(open(sys.argv[1]))
src = open(sys.argv[2]).read()
src = re.sub(r'\bvoid kernel\(', 'static void cpu_reference(', src)
src = re.sub(r'malloc\(sizeof\((\w+)\)', r'(\1 *)malloc(sizeof(\1)', src)  # C++ casts
ins, outs = t["inputs"], t["outputs"]
dims = list(t["dims"])
def count(x):
    return "*".join("(size_t)%s" % d for d in x["shape"])
print(src)
params = ", ".join(["const float *%s" % x["name"] for x in ins] + ["float *%s" % x["name"] for x in outs] + ["int %s" % d for d in dims])
print('extern "C" void kernel(%s)\n{' % params)
for x in ins + outs:
    print("    float *h_%s = (float *)malloc(sizeof(float) * %s);" % (x["name"], count(x)))
for x in ins:
    print("    cudaMemcpy(h_%s, %s, sizeof(float) * %s, cudaMemcpyDeviceToHost);" % (x["name"], x["name"], count(x)))
print("    cpu_reference(%s);" % ", ".join(["h_" + x["name"] for x in ins + outs] + dims))
for x in outs:
    print("    cudaMemcpy(%s, h_%s, sizeof(float) * %s, cudaMemcpyHostToDevice);" % (x["name"], x["name"], count(x)))
for x in ins + outs:
    print("    free(h_%s);" % x["name"])
print("}")
PY
}
cheats=
runtime=
for k in tests/kernels/cuda/*.cu; do
    grep -q '^/\* expect: [a-z_|]* at build' "$k" && cheats="$cheats $k"
    grep -q '^/\* expect: [a-z_|-]* at run' "$k" && runtime="$runtime $k"
done
# two streams at once (nvcc takes seconds a file): the cheats and the
# first tasks' own files, and the other tasks' files
WRAPPED="matmul silu bmm_softmax" # (98-cuda-gpu.sh wraps every task's on a GPU)
examples() { # examples TASK: its hand-written cuda kernels
    ls "nkibench/$1/examples/"*.cu 2>/dev/null
}
own() { # own TASK...: each task's baseline and reference (and wrapped reference.c)
    local t w
    for t in "$@"; do
        w=
        case " $WRAPPED " in *" $t "*)
            wrap_reference "$t" "$T/$t-reference-c.cu"
            w=$T/$t-reference-c.cu ;;
        esac
        # shellcheck disable=SC2086
        build "$t" "$RESULTS/cuda-build-$t.jsonl" "nkibench/$t/baseline.cu" \
            "nkibench/$t/reference.cu" $w $(examples "$t")
    done
}
set -- $TASKS
first="$1 $2 $3 $4"
shift 4 # the rest: ten tasks, with the three wrapped references
# shellcheck disable=SC2086
{ build matmul "$RESULTS/cuda-cheats.jsonl" $cheats $runtime; own $first; } &
pid=$!
own "$@"
wait $pid

nex=0
for t in $TASKS; do
    i=0
    wrapped=
    case " $WRAPPED " in *" $t "*) wrapped="reference.c (wrapped as a cuda kernel)" ;; esac
    outcomes "$RESULTS/cuda-build-$t.jsonl" >"$T/outcomes-$t" 2>/dev/null
    for f in baseline.cu reference.cu ${wrapped:+"$wrapped"} $(examples "$t"); do
        i=$((i + 1))
        case $f in nkibench/*) nex=$((nex + 1)) ;; esac
        read -r status target compiled _ < <(sed -n "${i}p" "$T/outcomes-$t")
        [ "${status:-}" = ok ] && [ "${target:-}" = cuda ] && [ "${compiled:-}" = True ]
        ok $? "$t: $f builds and passes the cuda target's checks of what was built"
    done
done
[ "$(echo $TASKS | wc -w)" -eq 14 ]
ok $? "all fourteen tasks have a baseline.cu and a reference.cu"
[ $nex -ge 3 ]
ok $? "the hand-written cuda examples ($nex) were among what was built"

# every build-time cheat ends with the status its first line expects
bad=
i=0
outcomes "$RESULTS/cuda-cheats.jsonl" >"$T/outcomes-cheats" 2>/dev/null
for k in $cheats; do
    i=$((i + 1))
    name=$(basename "$k" .cu)
    expect=$(sed -n '1s/.*expect: \([a-z_|]*\) at build.*/\1/p' "$k")
    read -r status _ _ reason < <(sed -n "${i}p" "$T/outcomes-cheats")
    case "|$expect|" in
        *"|${status:-}|"*) echo "# $name: $status: $reason" ;;
        *) bad="$bad $name:${status:-}" ;;
    esac
done
[ -z "$bad" ] && [ "$i" -ge 15 ]
ok $? "every build-time cuda cheat in tests/kernels/cuda ($i) is refused as its first line expects${bad:+ (not:$bad)}"

if [ -e /dev/nvidia0 ] && [ -e /dev/nvidiactl ]; then
    skip "without a GPU, profile --target cuda says why it cannot run" "this machine has a GPU"
else
    bin/accelopt profile --alone --target cuda --task nkibench/silu --size tiny nkibench/silu/baseline.cu \
        >"$T/nogpu.out" 2>"$T/nogpu.err"
    rc=$?
    [ $rc -eq 1 ] && grep -q "no NVIDIA GPU on this machine" "$T/nogpu.err" &&
        ! bin/accelopt calibrate --target cuda 2>"$T/nocal.err" >/dev/null &&
        grep -q "no NVIDIA GPU" "$T/nocal.err"
    ok $? "without a GPU, profile and calibrate --target cuda exit 1 saying why (and --build-only still builds)"
fi
# the run-time cheats pass every build check: on a GPU they meet the
# run-time defenses (98-cuda-gpu.sh), not the symbol list
bad=
for k in $runtime; do
    i=$((i + 1))
    read -r status _ < <(sed -n "${i}p" "$T/outcomes-cheats")
    [ "${status:-}" = ok ] || bad="$bad $(basename "$k" .cu)"
done
[ -z "$bad" ] && [ -n "$runtime" ]
ok $? "every run-time cuda cheat in tests/kernels/cuda builds and passes the build checks${bad:+ (not:$bad)}"

# runner.o is the same for every task: built once, kept in the state dir
# under the hash of what it depends on, copied into each task's harness
# (fourteen nvcc runs of runner.cu were a third of this script's time)
set -- "$ACCELOPT_STATE_DIR"/cuda-runner-*.o
[ $# -eq 1 ] && [ -f "$1" ] && [ "$(stat -c %a "$1")" = 644 ]
ok $? "runner.o was built once and kept for every task ($# kept)"
kept=$1
chmod g+w "$kept"
build silu "$T/again.jsonl" nkibench/silu/baseline.cu
[ "$(field "$T/again.jsonl" "r['status']")" = ok ] && [ "$(stat -c %a "$kept")" = 644 ]
ok $? "a kept runner.o that another user could write is not used: built again and kept anew"

# a toolkit reached through links outside /usr, as on the GPU machine of
# issue 26 (/usr/local/cuda -> /etc/alternatives/cuda -> /usr/local/cuda-13.0):
# the compile sandbox has neither /etc/alternatives nor this test's
# directory, so nvcc is called by the path the links resolve to
mkdir -p "$T/alt" "$T/links"
ln -sfn "$(readlink -f "$(dirname "$NVCC")/..")" "$T/alt/cuda"
ln -sfn "$T/alt/cuda" "$T/links/cuda"
ACCELOPT_CUDA_HOME=$T/links/cuda build silu "$T/linked.jsonl" nkibench/silu/baseline.cu
[ "$(field "$T/linked.jsonl" "r['status']")" = ok ]
ok $? "a toolkit whose directory is reached through links outside /usr builds ($(field "$T/linked.jsonl" "r.get('reason', '')" | cut -c1-100))"

# the kernel of known length that tests/bench/gpu-session.sh times both ways
build silu "$T/spin.jsonl" tests/known-speed/cuda/silu_spin.cu
[ "$(field "$T/spin.jsonl" "r['status']")" = ok ]
ok $? "tests/known-speed/cuda/silu_spin.cu (a kernel of a known least length) builds ($(field "$T/spin.jsonl" "r.get('reason', '')" | cut -c1-80))"
