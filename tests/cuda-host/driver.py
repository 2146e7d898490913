#!/usr/bin/env python3
"""driver.py TASK.json: a C++ main for emu.h that fills a task's inputs as
its task.json says (normal draws; `stress` takes each input's stress
distribution), runs kernel() and reference.c's kernel (renamed ref_kernel)
on the same inputs, and prints the relative L2 error of each output.
Usage of the built program: PROG DIM... [stress]"""
import json
import sys

t = json.load(open(sys.argv[1]))
ins, outs, dims = t["inputs"], t["outputs"], list(t["dims"])
p = ", ".join(["const float *"] * len(ins) + ["float *"] * len(outs) + ["int"] * len(dims))
print("#include <cmath>\n#include <cstdio>\n#include <cstdlib>\n#include <cstring>\n#include <random>\n#include <vector>")
print('extern "C" void kernel(%s);\nextern "C" void ref_kernel(%s);' % (p, p))
print("int main(int argc, char **argv)\n{")
print("    if (argc < %d) { fprintf(stderr, \"usage: %%s %s [stress]\\n\", argv[0]); return 2; }" % (len(dims) + 1, " ".join(dims)))
for i, d in enumerate(dims):
    print("    long %s = atol(argv[%d]);" % (d, i + 1))
print("    int stress = argc > %d && !strcmp(argv[%d], \"stress\");" % (len(dims) + 1, len(dims) + 1))
print("    std::mt19937 rng(17);")
size = lambda x: "*".join("(size_t)%s" % d for d in x["shape"]) or "1"
def draw(d):
    """the C++ expression that draws one value of a distribution"""
    kind = d.get("kind", "normal")
    if kind == "uniform":
        return "std::uniform_real_distribution<float>(%r, %r)(rng)" % (float(d.get("low", 0)), float(d.get("high", 1)))
    if kind not in ("normal", "abs_normal"):
        sys.exit("driver.py: unknown distribution %r" % kind)
    v = "std::normal_distribution<float>(%r, %r)(rng)" % (float(d.get("mean", 0)), float(d.get("std", 1)))
    return "std::fabs(%s)" % v if kind == "abs_normal" else v


for x in ins:
    d = x.get("dist", {})
    print("    std::vector<float> %s(%s + 16);" % (x["name"], size(x)))
    print("    for (auto &v : %s) v = stress ? %s : %s;" % (x["name"], draw(x.get("stress", d)), draw(d)))
for x in outs:
    print("    std::vector<float> %s(%s, NAN), ref_%s(%s, NAN);" % (x["name"], size(x), x["name"], size(x)))
call = lambda f, pre: "    %s(%s);" % (f, ", ".join(["%s.data()" % x["name"] for x in ins] + ["%s%s.data()" % (pre, x["name"]) for x in outs] + ["(int)%s" % d for d in dims]))
print(call("kernel", ""))
print(call("ref_kernel", "ref_"))
print("    int bad = 0;")
for x in outs:
    n = x["name"]
    print("    { double e = 0, r = 0; for (size_t i = 0; i < %s.size(); i++) { double d = (double)%s[i] - ref_%s[i]; e += d * d; r += (double)ref_%s[i] * ref_%s[i]; }" % (n, n, n, n, n))
    print("      double rel = std::isfinite(e) ? sqrt(e / (r > 0 ? r : 1)) : INFINITY;")
    print("      printf(\"%s: rel. L2 %%.3g\\n\", rel); bad |= !(rel <= %r); }" % (n, float(t["tolerance"])))
print("    return bad;\n}")
