#!/usr/bin/python3
"""profile-cost-compare.py BEFORE.jsonl AFTER.jsonl - two runs of
tests/bench/profile-cost.sh (KEEP=FILE keeps their results) side by side:
per profile, the call's figure, the wall time, compile + the kernel's own
calls, what the profiler spent on checks (the references of the sampled
timed calls, and the timed calls at secret positions: issue 66) and inputs, the calls voided, and the ratio of the wall time
to compile + calls (issue 53)."""
import json
import sys


def load(path):
    out = {}
    for line in open(path):
        r = json.loads(line)
        t = r.get("timing") or {}
        s = lambda k: t.get(k, 0) / 1e9
        out[(r["task"], r["kernel_id"].split(":", 3)[3])] = {
            "ms": r.get("latency_ns", 0) / 1e6, "wall": r["wall_ns"] / 1e9,
            "own": s("compile_ns") + s("kernel_ns"), "checks": s("checks_ns") + s("spots_ns"),
            "inputs": s("inputs_ns"), "voided": t.get("calls_voided", 0)}
    return out


def ratio(x):
    return "%.2f" % (x["wall"] / x["own"]) if x["own"] > 0 else "-"


before, after = load(sys.argv[1]), load(sys.argv[2])
print("| task | kernel | call ms | wall s | compile + calls s | checks s | inputs s | calls voided | wall / (compile + calls) |")
print("|---|---|---|---|---|---|---|---|---|")
walls = [0.0, 0.0]
for key, a in after.items():
    b = before.get(key)
    if not b:
        continue
    print("| %s | %s | %.1f → %.1f | %.1f → %.1f | %.2f → %.2f | %.2f → %.2f | %.2f → %.2f | %d → %d | %s → %s |" % (
        key[0], key[1], b["ms"], a["ms"], b["wall"], a["wall"], b["own"], a["own"], b["checks"],
        a["checks"], b["inputs"], a["inputs"], b["voided"], a["voided"], ratio(b), ratio(a)))
    if key[1] != "baseline-first" and not key[1].startswith("h2h:"):
        walls[0] += b["wall"]
        walls[1] += a["wall"]
print()
print("every profile after its task's first (what each later kernel of a run pays): %.0f s → %.0f s"
      % tuple(walls))
