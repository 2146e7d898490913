#!/usr/bin/env bash
# loop-model.sh - issue 66's run against a model that takes its time: all
# fourteen tasks at the cpu size, T=4 iterations (beam 1, 2 plans, 1
# sample, as loop-all.sh), the planner, executor and summarizer answered by
# a scripted server (tests/llm_server.py) after LATENCY seconds each.  The
# executor's replies are the task's own baseline with one knob moved to
# another of its allowed values, a different one each call.  Prints the
# wall time and where it went: the model's calls (in flight over the run,
# and when none was), the profiler's profiles (busy time, from its log),
# and per task the iterations closed.
#   tests/bench/loop-model.sh [LATENCY [WALL-TIME [OUT-DIR]]]   (default: 20 3000)
set -euo pipefail
cd "$(dirname "$0")/../.."
LAT=${1:-20} WALL=${2:-3000}
T=$(mktemp -d)
OUT=${3:-$T/out}
trap 'kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; rm -rf "$T"' EXIT
tasks=$(ls nkibench | while read -r t; do [ -f "nkibench/$t/task.json" ] && echo "$t"; done)
python3 - "$LAT" $tasks >"$T/script.json" <<'PY'
import json, re, sys
lat, tasks = float(sys.argv[1]), sys.argv[2:]
pick = {}
for t in tasks:
    src = open("nkibench/%s/baseline.c" % t).read()
    head = src.splitlines()[0]          # "/* baseline.c - TASK: ..." names the task in every prompt
    key = head[:head.index(":") + 1]
    variants = []
    for m in re.finditer(r"^#define (\w+) (\S+) /\* knob: ([^*]+)\*/", src, re.M):
        for v in m.group(3).split():
            if v != m.group(2):
                line = m.group(0).replace("#define %s %s " % (m.group(1), m.group(2)),
                                          "#define %s %s " % (m.group(1), v), 1)
                variants.append("```c\n" + src.replace(m.group(0), line, 1) + "```")
    pick[key] = variants or ["```c\n" + src + "```"]
plans = ["Plan %02d: move one knob of the kernel to another of its allowed values." % i for i in range(64)]
summary = open("tests/replies/summary-01-format.md").read()
print(json.dumps({"plan-m": [{"choose": plans, "delay": lat}],
                  "exec-m": [{"pick": pick, "delay": lat}],
                  "sum-m": [{"content": summary, "delay": lat}]}))
PY
LLM_SPANS=$T/spans.jsonl python3 tests/llm_server.py "$T/script.json" "$T/port" "$T/llm.log" 2>/dev/null &
for _ in $(seq 100); do [ -s "$T/port" ] && break; sleep 0.05; done
export ACCELOPT_HOME=$PWD ACCELOPT_LLM_URL=http://127.0.0.1:$(cat "$T/port")/v1 ACCELOPT_LLM_KEY=sk-bench
export ACCELOPT_PLANNER_MODEL=plan-m ACCELOPT_EXECUTOR_MODEL=exec-m ACCELOPT_SUMMARIZER_MODEL=sum-m
echo "machine: $(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg); commit $(git rev-parse --short HEAD); model answers in $LAT s"
start=$(date +%s.%N)
# shellcheck disable=SC2086
bin/accelopt run $tasks --size cpu --iters 4 --beam 1 --plans 2 --samples 1 --topk 4 --seed 1 \
    --fix-attempts 0 --wall-time "$WALL" --out "$OUT" >/dev/null 2>"$T/run.err" || true
end=$(date +%s.%N)
python3 - "$T/llm.log" "$T/spans.jsonl" "$OUT" "$OUT/logs/profiler.log" "$start" "$end" $tasks <<'PY'
import json, os, re, sys
reqs = [json.loads(l) for l in open(sys.argv[1])]
spans = [json.loads(l) for l in open(sys.argv[2])]
done = [json.load(open(os.path.join(sys.argv[3], t, "done.json"))) for t in sys.argv[7:]
        if os.path.exists(os.path.join(sys.argv[3], t, "done.json"))]
log = open(sys.argv[4]).read()
start, end = float(sys.argv[5]), float(sys.argv[6])
wall = end - start
by = {}
for r in reqs:
    by[r["model"]] = by.get(r["model"], 0) + 1
# the time at least one model call was in flight: the union of the spans
ev = sorted([(s["t0"], 1) for s in spans] + [(s["t1"], -1) for s in spans])
n = 0
busy = 0.0
last = None
for t, d in ev:
    if n > 0:
        busy += t - last
    n += d
    last = t
prof = [float(s) for s in re.findall(r"accelopt-profiler: kernel:\S+: \S+ \(([0-9.]+) s\)", log)]
print("wall %.0f s; model calls %d (plan %d, exec %d, summary %d), some call in flight %.0f s (%.0f%%)" % (
    wall, len(reqs), by.get("plan-m", 0), by.get("exec-m", 0), by.get("sum-m", 0), busy, 100 * busy / wall))
print("profiler: %d profiles, busy %.0f s (%.0f%% of the wall)" % (len(prof), sum(prof), 100 * sum(prof) / wall))
for d in done:
    print("  %-24s stopped by %-10s %s iterations, kernels %s, %s" % (d.get("task"), d.get("stopped"), len(d.get("history") or []) - 1,
          d.get("kernels_evaluated"), "%.3fx (%s)" % (d.get("speedup", float("nan")), d.get("speedup_method", "?"))))
PY
