#!/usr/bin/env bash
# profile-ratio.sh TASK [N] - what a lone profile and a head-to-head of one
# task cost beside the kernel's own calls, as medians over N of each (issue
# 66): through one accelopt-profiler at the cpu size, the task's baseline
# once (its first profile builds the check sets), then N times a lone
# profile of the baseline and a copy of it head to head with the baseline,
# alternating, each a distinct source (the profiler caches by source).  Per
# kind: the median of wall / (compile + calls), of the wall time, the calls,
# the fresh inputs, the positions' cost a call, and the calls voided.
# Run it from two checkouts in turn to compare trees.
set -euo pipefail
cd "$(dirname "$0")/../.."
task=${1:?usage: tests/bench/profile-ratio.sh TASK [N]}
n=${2:-5}
T=$(mktemp -d /tmp/accelopt-pratio-XXXXXX)
trap 'rm -rf "$T"' EXIT
export ACCELOPT_HOME=$PWD ACCELOPT_LOG=warn
echo "commit $(git rev-parse --short HEAD 2>/dev/null || echo '?'), load $(cut -d' ' -f1 /proc/loadavg), $task x $n"
python3 - "$task" "$n" >"$T/stream.jsonl" <<'PY'
import hashlib, json, sys
task, n = sys.argv[1], int(sys.argv[2])
base = open("nkibench/%s/baseline.c" % task).read()
def msg(i, what, src, parent=None):
    s = "#define PROFILE_RATIO_SEQ_%d 1\n%s" % (i, src)
    m = {"type": "kernel", "v": 1, "id": "ratio:%d:%s" % (i, what), "run": "ratio", "task": task,
         "target": "cpu", "iter": 1, "size": "cpu", "source": s, "sha256": hashlib.sha256(s.encode()).hexdigest()}
    if parent:
        m["baseline_source"] = parent
    print(json.dumps(m))
msg(0, "first", base)
for i in range(n):
    msg(1 + 2 * i, "alone", base)
    msg(2 + 2 * i, "h2h", base + "/* a copy */\n", base)
PY
bin/accelopt-profiler <"$T/stream.jsonl" >"$T/out.jsonl"
python3 - "$T/out.jsonl" <<'PY'
import json, statistics as st, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
for kind in ("alone", "h2h"):
    rs = [r for r in rows if r["kernel_id"].endswith(kind)]
    t = [r["timing"] for r in rs]
    ratio = [r["wall_ns"] / (x["compile_ns"] + x["kernel_ns"]) for r, x in zip(rs, t)]
    print("%-5s wall/(compile+calls) median %.3f (%s); wall %.2f s, calls %.2f s, inputs %.3f s, "
          "positions %.2f ms a call, voided %s" % (
              kind, st.median(ratio), " ".join("%.2f" % v for v in ratio),
              st.median(r["wall_ns"] / 1e9 for r in rs), st.median(x["kernel_ns"] / 1e9 for x in t),
              st.median(x["inputs_ns"] / 1e9 for x in t),
              st.median(x.get("spots_ns", 0) / 1e6 / max(1, x.get("spots_calls", 1)) for x in t),
              [x.get("calls_voided", 0) for x in t]))
PY
