"""final_result.py - a profiler's results for a selector run in pipe mode,
step by step, signed with ACCELOPT_SIGN_KEY_FILE as a profiler signs them:

    final_result.py base  SENT     the baseline's result (1000 ns)
    final_result.py child SENT     iteration 1's one child, measured alone at 500 ns
                                   (a run with --no-compare)
    final_result.py child:X SENT   that child head to head with its parent (issue
                                   66), speedup X (child:X:voided: the parent's
                                   side ran outside its own figures)
    final_result.py final:X SENT   the final head-to-head, speedup X (its
                                   medians 1010 ns and 1010/X ns; interval
                                   0.95X-1.05X, or final:X:LOW:HIGH)
    final_result.py failed SENT    the final head-to-head, the best incorrect

SENT: what the selector sent last (JSON Lines).
"""
import hashlib, json, sys
def sha(s): return hashlib.sha256(s.encode()).hexdigest()
step, prev = sys.argv[1], sys.argv[2]
msgs = [json.loads(l) for l in open(prev) if l.strip()]
def res(k, **kw):
    r = {"type": "result", "v": 1, "id": "result:" + k["id"], "run": k["run"], "task": k["task"],
         "target": k["target"], "iter": k["iter"], "kernel_id": k["id"], "sha256": k["sha256"],
         "slot": k.get("slot", "0.0.0"), "size": k["size"], "status": "ok", "source": k["source"],
         "task_sha256": k.get("task_sha256"), "repeats": 50, "spread": 0.01, "steady": True, "t_min_ns": 100.0}
    if k.get("parent"): r["parent"] = k["parent"]
    r.update(kw); r["pct_of_peak"] = r["t_min_ns"] / r["latency_ns"]
    return r
out = []
if step == "base":
    k = next(m for m in msgs if m["type"] == "kernel")
    out.append(res(k, latency_ns=1000.0))
elif step.split(":")[0] == "child":
    c = next(m for m in msgs if m["type"] == "candidate")
    src = c["source"] + "\n/* a rewrite */\n"
    k = {"id": "kernel:%s:1:0.0.0" % c["run"], "run": c["run"], "task": c["task"], "target": c["target"],
         "iter": 1, "sha256": sha(src), "slot": "0.0.0", "size": c["size"], "source": src,
         "task_sha256": c["task_sha256"], "parent": c["sha256"]}
    kw = {}
    if ":" in step:  # head to head with its parent, at another moment than the baseline's 1000 ns
        sp = float(step.split(":")[1])
        kw = dict(speedup=sp, head_to_head={"speedup": sp, "speedup_low": sp * 0.95, "speedup_high": sp * 1.05,
                  "rounds": 50, "baseline_median_ns": 800.0, "baseline_spread": 0.01,
                  "kernel_median_ns": 500.0, "kernel_spread": 0.01})
        if step.endswith(":voided"):
            kw["head_to_head"]["voided"] = "the parent's side ran at 800 ns, 1.60x the 500 ns it showed before"
    out.append(res(k, latency_ns=500.0, plan="plan:%s:1:0:0" % c["run"], plan_text="a rewrite", **kw))
elif step == "failed":
    k = next(m for m in msgs if m["type"] == "kernel" and m["id"].endswith(":final"))
    r = res(k, latency_ns=1.0, status="incorrect", reason="output 'out' on input set 'timed3': over the tolerance")
    for f in ("latency_ns", "pct_of_peak", "repeats", "spread", "steady", "t_min_ns"):
        r.pop(f)
    out.append(r)
elif step.startswith("final"):
    f = [float(x) for x in step.split(":")[1:]]
    sp, lo, hi = (f[0], f[1], f[2]) if len(f) == 3 else (f[0], f[0] * 0.95, f[0] * 1.05)
    k = next(m for m in msgs if m["type"] == "kernel" and m["id"].endswith(":final"))
    out.append(res(k, latency_ns=1000.0 / sp, head_to_head={"speedup": sp, "speedup_low": lo,
              "speedup_high": hi, "rounds": 21, "baseline_median_ns": 1010.0,
              "baseline_spread": 0.01, "kernel_median_ns": 1010.0 / sp, "kernel_spread": 0.01}))
import hmac, os
key = bytes.fromhex(open(os.environ["ACCELOPT_SIGN_KEY_FILE"]).read().strip())
for m in out:  # signed as a profiler signs: the compact text, the signature in before its last brace
    text = json.dumps(m, separators=(",", ":"))
    print(text[:-1] + ',"sig":"hmac-sha256:%s"}' % hmac.new(key, text.encode(), "sha256").hexdigest())
