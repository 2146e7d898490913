#!/usr/bin/python3
"""The stand-in runtime's "device" (see README.md): device.py NEFF EMU_ZIP.
Loads the NEFF's kernel on the host emulation, then for each request on
stdin (every input's bytes, in the NEFF's order) writes every output's
bytes to stdout."""
import json
import sys

sys.path.insert(0, sys.argv[2])
import numpy as np  # noqa: E402

neff = json.load(open(sys.argv[1]))
mod = {"__name__": "kernel"}
exec(compile(neff["source"], "kernel.py", "exec"), mod)  # noqa: S102 - the "device" runs it
kernel = mod.get("kernel") or mod.get("optimized_kernel")
inp, out = sys.stdin.buffer, sys.stdout.buffer
while True:
    args = []
    for t in neff["inputs"]:
        n = 4 * int(np.prod(t["shape"]))
        b = inp.read(n)
        if len(b) < n:
            sys.exit(0)
        args.append(np.frombuffer(b, dtype=np.float32).reshape(t["shape"]).copy())
    res = kernel(*args)
    res = list(res) if isinstance(res, (tuple, list)) else [res]
    for r in res:
        out.write(np.ascontiguousarray(r, dtype=np.float32).tobytes())
    out.flush()
