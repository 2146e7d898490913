"""msgs.py - wire messages for the tests, one JSON line on stdout.

    msgs.py candidate TASK [SOURCE] [CONFIG-JSON] [LATENCY-NS]
    msgs.py plan TASK TEXT [SOURCE] [CONFIG-JSON]
    msgs.py pair TASK SLOW FAST SPEEDUP DIRECTION ID [CONFIG-JSON]
    msgs.py knob SOURCE NAME VALUE       (the source with one knob set)

ACCELOPT_MSG_TARGET=cuda (trn) makes the messages a cuda (trn) run's (baseline.cu, .py).
"""
import hashlib
import json
import os
import re
import sys

TARGET = os.environ.get("ACCELOPT_MSG_TARGET", "cpu")
EXT = {"cpu": "c", "cuda": "cu", "trn": "py"}[TARGET]


def sha(s):
    return hashlib.sha256(s.encode()).hexdigest()


def env(t, i, task, it=1):
    return {"type": t, "v": 1, "id": i, "run": "run-t", "task": task, "target": TARGET, "iter": it}


def src(task, path=None):
    return open(path or "nkibench/%s/baseline.%s" % (task, EXT)).read()


def arg(i, default=None):
    return sys.argv[i] if len(sys.argv) > i and sys.argv[i] != "-" else default


cmd = sys.argv[1]
if cmd == "candidate":
    task = sys.argv[2]
    s = src(task, arg(3))
    m = env("candidate", "cand:run-t:1:0", task)
    lat = float(arg(5, "2.5e6"))
    m.update(kernel_id="kernel:run-t:0:base", source=s, sha256=sha(s), rank=0, latency_ns=lat,
             pct_of_peak=0.031, baseline_latency_ns=lat, size="tiny",
             profile={"bound": "matmul", "spread": 0.004, "t_min_ns": 77500.0},
             config=json.loads(arg(4, "{}")))
elif cmd == "plan":
    task = sys.argv[2]
    s = src(task, arg(4))
    m = env("plan", "plan:run-t:1:0:0", task)
    m.update(candidate_id="cand:run-t:1:0", candidate_sha256=sha(s), index=0, rank=0,
             text=sys.argv[3], source=s, size="tiny", parent_latency_ns=2.5e6,
             baseline_latency_ns=2.5e6, config=json.loads(arg(5, "{}")))
elif cmd == "fix":  # fix TASK PLAN-TEXT FAILED-FILE DIAGNOSTICS [CONFIG-JSON]
    task = sys.argv[2]
    s = src(task, None)
    m = env("plan", "fix:run-t:1:0.0.0/a2", task)
    m.update(candidate_id="kernel:run-t:0:0.0.0", candidate_sha256=sha(s), index=0, rank=0,
             sample=0, attempt=2, text=sys.argv[3], source=s, size="tiny",
             failed_source=open(sys.argv[4]).read(), diagnostics=sys.argv[5],
             parent_latency_ns=2.5e6, baseline_latency_ns=2.5e6, config=json.loads(arg(6, "{}")))
elif cmd == "pair":
    task, slow, fast = sys.argv[2], open(sys.argv[3]).read(), open(sys.argv[4]).read()
    m = env("pair", sys.argv[7], task)
    m.update(slow_source=slow, fast_source=fast, slow_sha256=sha(slow), fast_sha256=sha(fast),
             speedup=float(sys.argv[5]), direction=sys.argv[6], plan="a plan",
             config=json.loads(arg(8, "{}")), speedup_spread=0.03)
    # as the selector builds them: the slower kernel's latency is speedup x the faster's
    lat = {"slow": 2.6e6 * float(sys.argv[5]), "fast": 2.6e6}
    for k in ("slow", "fast"):
        m[k + "_profile"] = {"latency_ns": lat[k], "pct_of_peak": 1.1e5 / lat[k], "spread": 0.015,
                             "t_min_ns": 1.1e5, "bound": "matmul", "t_memory_ns": 4.2e4,
                             "t_matmul_ns": 1.1e5, "t_elementwise_ns": 0, "repeats": 60}
elif cmd == "knob":
    s = open(sys.argv[2]).read()
    s, n = re.subn(r"(#define %s )\S+" % re.escape(sys.argv[3]), r"\g<1>" + sys.argv[4], s, count=1)
    assert n == 1, "no knob " + sys.argv[3]
    sys.stdout.write(s)
    sys.exit(0)
else:
    sys.exit("unknown message " + cmd)
print(json.dumps(m))
