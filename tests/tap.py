"""tap.py - TAP lines for the Python tests: ok(cond, desc), then done()."""
import sys

n = 0
failed = 0


def ok(cond, desc):
    global n, failed
    n += 1
    if not cond:
        failed += 1
    print("%s %d - %s" % ("ok" if cond else "not ok", n, desc))
    return cond


def skip(desc, why):
    global n
    n += 1
    print("ok %d - %s # SKIP %s" % (n, desc, why))


def done():
    print("1..%d" % n)
    sys.exit(1 if failed else 0)
