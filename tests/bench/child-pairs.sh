#!/usr/bin/env bash
# child-pairs.sh [N] [TASK...] - what a child's head-to-head with its parent
# costs, as a run makes them (issue 66): through one accelopt-profiler at
# the cpu size with the loop's budget (0.5 s), N A/A children of each task
# (a copy of the baseline against another copy as its parent, each a
# distinct source, so nothing is answered from the cache), the tasks
# interleaved.  Per task: the median wall time, kernel calls' time and
# rounds, and how the pairs ended (U: undecidable, T: a Student-t answer,
# -: every round; 2: measured twice).  Run it from two checkouts in turn to
# compare trees.  Default: the four slowest tasks, 3 each.
set -euo pipefail
cd "$(dirname "$0")/../.."
n=${1:-3}
shift || true
tasks=${*:-lora gqa_full add_rmsnorm_matmul rmsnorm_matmul}
T=$(mktemp -d /tmp/accelopt-pairs-XXXXXX)
trap 'rm -rf "$T"' EXIT
export ACCELOPT_HOME=$PWD ACCELOPT_LOG=warn ACCELOPT_BUDGET=${ACCELOPT_BUDGET:-0.5}
echo "commit $(git rev-parse --short HEAD 2>/dev/null || echo '?'), load $(cut -d' ' -f1 /proc/loadavg), $n a task: $tasks"
# shellcheck disable=SC2086
python3 - "$n" $tasks >"$T/stream.jsonl" <<'PY'
import json, sys
n, tasks = int(sys.argv[1]), sys.argv[2:]
for i in range(n):
    for t in tasks:
        base = open("nkibench/%s/baseline.c" % t).read()
        src = lambda what: "#define CHILD_PAIRS_%s_%d 1\n%s" % (what, i, base)
        print(json.dumps({"type": "kernel", "v": 1, "id": "pairs:%s:%d" % (t, i), "run": "pairs", "task": t,
                          "target": "cpu", "iter": 1, "size": "cpu", "parent": "pairs:%s:p%d" % (t, i),
                          "source": src("CHILD"), "baseline_source": src("PARENT")}))
PY
bin/accelopt-profiler <"$T/stream.jsonl" >"$T/results.jsonl"
python3 - "$T/results.jsonl" <<'PY'
import json, statistics, sys
by = {}
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r.get("type") != "result":
        continue
    h, t = r.get("head_to_head") or {}, r["timing"]
    how = ("U" if h.get("undecidable") else "T" if h.get("interval") else "-") + str(len(h.get("replicates") or [1]))
    by.setdefault(r["task"], []).append((r["wall_ns"] / 1e9, t["kernel_ns"] / 1e9, h.get("rounds", 0), how, r["status"]))
print("| task | pairs | wall s (median) | kernel calls s | rounds | how they ended |")
print("|---|---:|---:|---:|---:|---|")
walls = []
for task, rs in by.items():
    walls += [x[0] for x in rs]
    print("| %s | %d | %.1f | %.1f | %g | %s |" % (task, len(rs), statistics.median(x[0] for x in rs),
          statistics.median(x[1] for x in rs), statistics.median(x[2] for x in rs),
          " ".join(x[3] if x[4] == "ok" else x[4] for x in rs)))
print("all pairs: %d, wall %.1f s in all, median %.1f s" % (len(walls), sum(walls), statistics.median(walls)))
PY
