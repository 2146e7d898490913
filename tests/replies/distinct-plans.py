"""distinct-plans.py KERNEL.c - a script for tests/llm_server.py: every role
answered, plans that differ (a plan call told the earlier titles gets a new
one), KERNEL.c as every kernel, the formatted summary.  The models are
plan-m, exec-m and sum-m; a plan takes 0.2 s, a kernel 0.5 s."""
import json
import os
import sys

kernel = open(sys.argv[1]).read()
summary = open(os.path.join(os.path.dirname(__file__), "summary-01-format.md")).read()
plans = ["Plan %s: widen the j tile to %d columns." % (c, 32 * (i + 1)) for i, c in enumerate("ABCDEFGHIJKL")]
print(json.dumps({"plan-m": [{"choose": plans, "delay": 0.2}],
                  "exec-m": [{"content": "```c\n" + kernel + "```", "delay": 0.5}],
                  "sum-m": [{"content": summary}]}))
