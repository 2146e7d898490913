#!/usr/bin/env python3
"""build.py - the trusted build of a trn kernel, run in the compile sandbox
with the Neuron SDK's Python: compiles kernel.py once per line of
shapes.txt into kernel-<i>.neff (nki.baremetal, which compiles and runs it
once, on zeros), from the neuronxcc.nki namespace of Neuron SDK 2.2x.
Where there is no NeuronCore it checks the kernel with the SDK's CPU
simulator (nki.simulate_kernel), and where there is no SDK either, on
accelopt's NKI host emulation (emu.zip): a check only, no NEFF (built.txt
says which).

The kernel is called as the trn target calls it: kernel(*inputs), each a
float32 array of its task.json shape (task.txt: "in NAME DIM..." lines), in
task order; it returns its output (a tuple if several).

Every failure is printed as `kernel.py:LINE: error: [CODE] message` (the
line is the kernel's own, when the traceback reaches it) so the fixer sees
the compiler's words about the kernel's lines and nothing of this file."""
import os
import re
import sys
import traceback

FLAGS = "--disable-dge --logical-nc-config=1"


def fail(e, code=1):
    """The error as a compiler line about the kernel's own file."""
    line = 0
    for fr in traceback.extract_tb(e.__traceback__):
        if os.path.basename(fr.filename) == "kernel.py":
            line = fr.lineno
    msg = " ".join(str(e).split()) or type(e).__name__
    print("kernel.py:%d: error: %s: %s" % (line, type(e).__name__, msg[:2000]), file=sys.stderr)
    sys.exit(code)


def main():
    src = open("kernel.py").read()
    # NKIBench's rule: no lower precision (bf16 included), comments aside
    code = re.sub(r"#[^\n]*", "", src)
    code = re.sub(r'"""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\'', "", code)
    if "float16" in code:
        print("kernel.py:0: error: rejected: the kernel names float16 (or bfloat16): NKIBench "
              "kernels compute in float32", file=sys.stderr)
        sys.exit(1)
    import numpy as np
    mode = "neff" if os.path.exists(os.environ.get("ACCELOPT_TRN_DEVICE", "/dev/neuron0")) else "simulated"
    try:
        import neuronxcc.nki as nki
    except ImportError:
        sys.path.insert(0, os.path.abspath("emu.zip"))
        import neuronxcc.nki as nki
        mode = "emulated"
    ins = [l.split() for l in open("task.txt") if l.startswith("in ")]
    shapes = [[int(x) for x in l.split()] for l in open("shapes.txt") if l.strip()]
    dimnames = open("task.txt").readline().split()[1:]  # "dims M K N"
    try:
        spec = {"__name__": "kernel", "__file__": os.path.abspath("kernel.py")}
        exec(compile(src, "kernel.py", "exec"), spec)  # noqa: S102 - in the compile sandbox
        kernel = spec.get("kernel") or spec.get("optimized_kernel")
        if kernel is None:
            raise ValueError("No kernel function found (define `kernel`, decorated @nki.jit)")
    except Exception as e:  # noqa: BLE001 - every failure is the kernel's
        fail(e)
    for i, dims in enumerate(shapes):
        env = dict(zip(dimnames, dims))
        args = [np.zeros([env[d] for d in x[2:]], dtype=np.float32) for x in ins]
        try:
            if mode == "neff":
                nki.baremetal(kernel, save_neff_name="kernel-%d.neff" % i,
                              additional_compile_opt=FLAGS)(*args)
            elif mode == "simulated":
                nki.simulate_kernel(kernel, *args)
            else:
                kernel(*args)
        except Exception as e:  # noqa: BLE001
            fail(e)
        if mode == "neff" and not os.path.isfile("kernel-%d.neff" % i):
            print("kernel.py:0: error: the compiler left no NEFF for shape %s" % dims, file=sys.stderr)
            sys.exit(1)
    with open("built.txt", "w") as f:
        f.write("%s %d\n" % (mode, len(shapes)))


if __name__ == "__main__":
    main()
