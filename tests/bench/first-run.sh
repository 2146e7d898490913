#!/usr/bin/env bash
# first-run.sh N [OUT] - the README's first command's run (matmul, bmm and
# lora at tiny, T=4, builtin model) N times: per task, the figures quoted
# (method, speedup and interval, baseline_us/best_us), whether the ratio of
# the quoted latencies is the speedup quoted, whether summary.txt's row
# is the done's, the search's own figure, and each run's exit status.
set -u
cd "$(dirname "$0")/../.."
n=${1:-3}
out=${2:-/tmp/bench-first-run}
rm -rf "$out"
mkdir -p "$out"
for i in $(seq "$n"); do
    s=$(date +%s)
    bin/accelopt run matmul bmm lora --size tiny --iters 4 --out "$out/r$i" >"$out/r$i.out" 2>"$out/r$i.err"
    echo "$? $(($(date +%s) - s))" >"$out/r$i.rc"
done
python3 - "$out" "$n" <<'PY'
import json, sys
out, n = sys.argv[1], int(sys.argv[2])
print("| run | exit | s | task | method | speedup (interval) | baseline_us / best_us | = speedup | row = done | search |")
print("|---|---|---|---|---|---|---|---|---|---|")
for i in range(1, n + 1):
    rc, secs = open("%s/r%d.rc" % (out, i)).read().split()
    rows = {l.split()[0]: l.split() for l in open("%s/r%d/summary.txt" % (out, i)) if l[:1].isalpha()}
    for t in ("matmul", "bmm", "lora"):
        d = json.load(open("%s/r%d/%s/done.json" % (out, i, t)))
        ratio = d["baseline_latency_ns"] / d["best_latency_ns"]
        lo, hi = d.get("speedup_low"), d.get("speedup_high")
        inside = "yes" if abs(ratio - d["speedup"]) <= 1e-9 * d["speedup"] else "NO"
        r = rows[t]
        same = abs(float(r[5]) - d["baseline_latency_ns"] / 1e3) <= 0.005001 and \
            abs(float(r[6]) - d["best_latency_ns"] / 1e3) <= 0.005001 and r[7] == "%.3fx" % d["speedup"]
        iv = "" if lo is None else " (%.3f-%.3f)" % (lo, hi)
        print("| %d | %s | %s | %s | %s | %.3fx%s | %.3f | %s | %s | %.3fx |" % (
            i, rc, secs, t, d["speedup_method"], d["speedup"], iv, ratio, inside, "yes" if same else "NO",
            d["search_speedup"]))
PY
