#!/usr/bin/env bash
# profile-cost.sh [TASK...] - what a profile costs beside the kernel's own
# calls (issue 53), per task at the cpu size, through one accelopt-profiler
# as a run uses it: per task the baseline twice (the first profile builds
# the task's check sets and references; the second is what every later
# kernel of the run pays), each example of the task's, and, with H2H=1, a
# head-to-head of the first example against the baseline and one of a copy
# of the baseline against it (a child's profile in a run, issue 66).  Per profile:
# its wall time, the compile, all of the kernel's own calls, what the
# profiler spent on references, fresh inputs and checks (whole timed calls
# against the reference, and every call at secret positions: issue 66), and
# the ratio of the wall time to compile + calls (the aim: 1.5; a
# head-to-head's calls are the two sides' together).
# usage: tests/bench/profile-cost.sh [TASK...]   (default: all fourteen)
#        SIZE=tiny tests/bench/profile-cost.sh silu   (another size class)
#        H2H=0 KEEP=out.jsonl tests/bench/profile-cost.sh   (no head-to-heads; keep the results)
set -euo pipefail
cd "$(dirname "$0")/../.."
size=${SIZE:-cpu}
h2h=${H2H:-1}
tasks=${*:-$(ls -d nkibench/*/task.json | cut -d/ -f2 | tr '\n' ' ')}
T=$(mktemp -d /tmp/accelopt-pcost-XXXXXX)
trap 'rm -rf "$T"' EXIT
export ACCELOPT_HOME=$PWD ACCELOPT_LOG=warn
[ -f "${ACCELOPT_STATE_DIR:-$HOME/.local/state/accelopt}/calibration-cpu.json" ] || bin/accelopt calibrate >/dev/null
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg); commit $(git rev-parse --short HEAD 2>/dev/null || echo '?'); size $size"
python3 - "$size" "$h2h" $tasks >"$T/stream.jsonl" <<'PY'
import glob, hashlib, json, sys
size, h2h, tasks = sys.argv[1], sys.argv[2] == "1", sys.argv[3:]
seq = 0
def msg(task, what, src, base=None):
    global seq
    seq += 1
    # a distinct source each time: the profiler caches by source
    src = "/* profile-cost: %s */\n#define PROFILE_COST_SEQ %d\n%s" % (what, seq, src)
    m = {"type": "kernel", "v": 1, "id": "cost:%d:%s:%s" % (seq, task, what), "run": "cost",
         "task": task, "target": "cpu", "iter": 1, "size": size, "source": src,
         "sha256": hashlib.sha256(src.encode()).hexdigest()}
    if base is not None:
        m["baseline_source"] = base
    print(json.dumps(m))
for t in tasks:
    base = open("nkibench/%s/baseline.c" % t).read()
    msg(t, "baseline-first", base)
    msg(t, "baseline", base)
    ex = sorted(glob.glob("nkibench/%s/examples/*.c" % t))
    for e in ex:
        msg(t, "example:" + e.rsplit("/", 1)[1], open(e).read())
    if h2h and ex:
        msg(t, "h2h:" + ex[0].rsplit("/", 1)[1], open(ex[0]).read(), base)
    if h2h:  # a child's profile as a run makes it: head to head with its parent (here a copy of it)
        msg(t, "h2h:copy", base + "/* a copy */\n", base)
PY
bin/accelopt-profiler <"$T/stream.jsonl" >"$T/out.jsonl"
[ -z "${KEEP:-}" ] || cp "$T/out.jsonl" "$KEEP" # the results themselves, for a closer look
python3 - "$T/out.jsonl" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
print()
print("| task | kernel | status | call ms | wall s | compile s | calls s | references s | inputs s | checks s | other s | wall / (compile + calls) |")
print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
warm, h2h = [], []
for r in rows:
    what = r["kernel_id"].split(":", 3)[3]
    t = r.get("timing") or {}
    wall = r["wall_ns"] / 1e9
    g = lambda k: t.get(k, 0) / 1e9
    c, k = g("compile_ns"), g("kernel_ns")
    ratio = wall / (c + k) if c + k > 0 else float("nan")
    chk = g("checks_ns") + g("spots_ns")
    other = wall - c - k - g("references_ns") - g("inputs_ns") - chk
    lat = r.get("latency_ns")
    print("| %s | %s | %s | %s | %.1f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f |" % (
        r["task"], what, r["status"], "%.2f" % (lat / 1e6) if lat else "-", wall, c, k,
        g("references_ns"), g("inputs_ns"), chk, other, ratio))
    if r["status"] == "ok" and ratio == ratio:
        (h2h if what.startswith("h2h:") else warm if what != "baseline-first" else []).append(ratio)
print()
if warm:
    print("profiles after each task's first: median wall / (compile + calls) %.2f (max %.2f) over %d"
          % (statistics.median(warm), max(warm), len(warm)))
if h2h:
    print("head-to-heads: median wall / (compile + calls) %.2f (max %.2f) over %d"
          % (statistics.median(h2h), max(h2h), len(h2h)))
PY
