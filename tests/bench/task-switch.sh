#!/usr/bin/env bash
# task-switch.sh [TASK] [OTHER] - what a head-to-head costs right after
# another task's profile (issue 66, round ten): through one
# accelopt-profiler at the cpu size, TASK's baseline, two copies of it
# head to head with it, OTHER's baseline, then two more copies of TASK.
# Per profile: its wall time, the compile, the kernel's calls and the rest
# (timing.overhead_ns), and the whole stream's time.  A run visits the
# tasks in turn; the third copy is where a run's first child of an
# iteration stands.  Run it from two checkouts in turn to compare trees.
set -euo pipefail
cd "$(dirname "$0")/../.."
task=${1:-silu}
other=${2:-rope_single_freq_apply}
T=$(mktemp -d /tmp/accelopt-switch-XXXXXX)
trap 'rm -rf "$T"' EXIT
export ACCELOPT_HOME=$PWD ACCELOPT_LOG=warn
echo "commit $(git rev-parse --short HEAD 2>/dev/null || echo '?'), load $(cut -d' ' -f1 /proc/loadavg), $task after $other"
python3 - "$task" "$other" >"$T/stream.jsonl" <<'PY'
import hashlib, json, sys
task, other = sys.argv[1], sys.argv[2]
seq = 0
def msg(t, what, src, base=None):
    global seq
    seq += 1
    src = "/* task-switch: %s */\n#define TASK_SWITCH_SEQ %d\n%s" % (what, seq, src)
    m = {"type": "kernel", "v": 1, "id": "switch:%d:%s:%s" % (seq, t, what), "run": "switch", "task": t,
         "target": "cpu", "iter": 1, "size": "cpu", "source": src, "sha256": hashlib.sha256(src.encode()).hexdigest()}
    if base is not None:
        m["baseline_source"] = base
    print(json.dumps(m))
a = open("nkibench/%s/baseline.c" % task).read()
msg(task, "baseline", a)
msg(task, "copy", a, a)
msg(task, "copy", a, a)
msg(other, "baseline", open("nkibench/%s/baseline.c" % other).read())
msg(task, "copy-after-" + other, a, a)
msg(task, "copy", a, a)
PY
t0=$(date +%s.%N)
bin/accelopt-profiler <"$T/stream.jsonl" >"$T/out.jsonl"
t1=$(date +%s.%N)
python3 - "$T/out.jsonl" "$t0" "$t1" <<'PY'
import json, sys
print("| profile | wall s | compile s | calls s | rest s |")
print("|---|---:|---:|---:|---:|")
for l in open(sys.argv[1]):
    r = json.loads(l)
    t = r.get("timing") or {}
    print("| %s | %.2f | %.2f | %.2f | %.2f |" % (r["kernel_id"].split(":", 2)[2], r["wall_ns"] / 1e9,
          t.get("compile_ns", 0) / 1e9, t.get("kernel_ns", 0) / 1e9, t.get("overhead_ns", 0) / 1e9))
print("the stream: %.1f s" % (float(sys.argv[3]) - float(sys.argv[2])))
PY
