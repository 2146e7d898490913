#!/usr/bin/env python3
"""knobs.py TASK_DIR REFERENCE.so DIM...: every value of every knob of the
task's baseline.py, one at a time (as the builtin model moves them), on the
NKI host emulation against reference.c.  One line: ok, or bad and which."""
import os
import re
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "..", "nkibench", "harness", "trn"))
import check  # noqa: E402

KNOB = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*) = (\S+)  # knob: ([^(\n]*)", re.M)


def main():
    tdir, ref, dims = sys.argv[1], sys.argv[2], sys.argv[3:]
    src = open(os.path.join(tdir, "baseline.py")).read()
    tried, bad = 0, []
    devnull = open(os.devnull, "w")
    for m in KNOB.finditer(src):
        name, cur, values = m.group(1), m.group(2), m.group(3).split()
        for v in values:
            if v == cur:
                continue
            line = m.group(0).replace("%s = %s" % (name, cur), "%s = %s" % (name, v), 1)
            variant = src[:m.start()] + line + src[m.end():]
            with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
                f.write(variant)
            out, err = sys.stdout, sys.stderr
            sys.stdout = sys.stderr = devnull
            try:
                rc = check.main(["check.py", tdir, f.name, ref, *dims, "--seeds", "1"])
            finally:
                sys.stdout, sys.stderr = out, err
                os.unlink(f.name)
            tried += 1
            if rc != 0:
                bad.append("%s=%s" % (name, v))
    print("%s %d knob values of %s/baseline.py%s" % ("bad" if bad or not tried else "ok", tried,
                                                     os.path.basename(tdir),
                                                     ": wrong with " + " ".join(bad) if bad else ""))


if __name__ == "__main__":
    main()
