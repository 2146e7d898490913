# 82-report.sh - accelopt report in a real browser: headless Chromium loads
# the report.html of a run with one iteration, of a run with failed kernels
# and model tokens (whose model writes HTML into its plans), of an
# interrupted run, and of a run read back from redis; each page drew its
# charts, shows as many kernels as history.jsonl holds, ran no markup from
# the run, and needs no network.  One screenshot is taken (docs/report.png
# is such a screenshot, of `make run`'s report).
. tests/cli/helpers.sh
ensure_calibration
M=/usr/bin/python3
export ACCELOPT_BUDGET=0.1 ACCELOPT_WARMUP=0.02 # quick timing: these runs test the page, not speed
CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
page() { # page NAME RUN-DIR MIN-CHARTS [shot]: the page drew, in the browser (and a screenshot)
    local name=$1 dir=$2 min=$3 shot=${4:-}
    if [ -z "$CHROMIUM" ]; then
        skip "$name: the report drew in Chromium" "chromium is absent (make deps installs it)"
        return
    fi
    # --virtual-time-budget: the page's timers and promises run to the end
    # before the DOM is taken
    timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --hide-scrollbars \
        --virtual-time-budget=30000 --dump-dom "file://$dir/report.html" >"$T/$name.dom" 2>"$T/$name.chromium.err"
    [ -n "$shot" ] && timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --hide-scrollbars \
        --virtual-time-budget=30000 --window-size=1280,1900 --screenshot="$T/$name.png" \
        "file://$dir/report.html" >/dev/null 2>>"$T/$name.chromium.err"
    $M - "$T/$name.dom" "$dir" "$min" "${shot:+$T/$name.png}" >"$T/$name.why" 2>&1 <<'PY'
import glob, html.parser, json, os, sys
dom, d, least, png = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
class Body(html.parser.HTMLParser):
    body, svgs = None, 0
    def handle_starttag(self, tag, attrs):
        if tag == "body":
            self.body = dict(attrs)
        if tag == "svg":
            self.svgs += 1
p = Body()
p.feed(open(dom).read())
b = p.body or {}
kernels = sum(1 for f in glob.glob(d + "/*/history.jsonl") for l in open(f) if l.strip())
print("body", b, "svgs", p.svgs, "kernels in history.jsonl", kernels)
assert "data-error" not in b, b.get("data-error")
assert b.get("data-ready") == "1", "the page did not finish drawing"
assert int(b["data-kernels"]) == kernels, "kernel count"
assert int(b["data-charts"]) >= least and p.svgs >= least, "charts"
assert "data-pwned" not in b, "markup from the run ran"
assert not png or os.path.getsize(png) > 20000, "the screenshot is blank"
PY
    ok $? "$name: the report drew in Chromium ($(tr '\n' ' ' <"$T/$name.why" | cut -c1-150))"
}
selfcontained() { # selfcontained HTML: nothing to fetch, a policy that forbids fetching
    ! grep -Eiq '<(script|img|iframe)[^>]* src=|<link[^>]* href=' "$1" &&
        grep -q "default-src 'none'" "$1" && ! grep -q 'sourceMappingURL' "$1"
}

# --- one iteration, builtin model --------------------------------------------
bin/accelopt run matmul --iters 1 --beam 1 --plans 2 --samples 1 --out "$T/one" >"$T/one.out" 2>"$T/one.err"
run_ended $? && grep -q "^report: $T/one/report.html" "$T/one.out" && [ -s "$T/one/report.html" ] &&
    [ -s "$T/one/run.json" ] && [ -s "$T/one/matmul/usage.json" ]
ok $? "accelopt run writes report.html at the end and prints its path"
selfcontained "$T/one/report.html"
ok $? "the report is one file: no script, style or image to fetch, and a policy that forbids it"
page one-iteration "$T/one" 4
# the page quotes the done's figures (one measurement: the final
# head-to-head), and shows the search's own only under its own label
if [ -n "$CHROMIUM" ]; then
    $M - "$T/one-iteration.dom" "$T/one/matmul/done.json" <<'PY'
import json, math, re, sys
text = re.sub(r"<[^>]+>", " ", open(sys.argv[1]).read())
d = json.load(open(sys.argv[2]))
def us(ns):  # report.js's fmt.us: toPrecision(4) of µs or ms
    v, unit = (ns / 1e6, " ms") if ns >= 1e6 else (ns / 1e3, " µs")
    return "%.*f%s" % (max(0, 3 - math.floor(math.log10(v))), v, unit)
for want in (us(d["baseline_latency_ns"]), us(d["best_latency_ns"]), "%.3f×" % d["speedup"],
             "search's own figure"):
    assert want in text, (want, d["baseline_latency_ns"], d["best_latency_ns"])
PY
    ok $? "the report quotes the done's latencies and speedup, and labels the search's own figure"
fi

# --- failures, tokens, and a model that writes HTML ---------------------------
# a rewrite far beyond the noise (about 10x slower than the baseline), so
# the run always learns from it (a warning; a win of that size cannot be
# had for sure on a busy 2-core VM)
cp tests/known-speed/matmul_columns.c "$T/model.c"
$M -c 'import sys; s = open(sys.argv[1]).read(); i = s.index("    for ("); print(s[:i] + "    undeclared_acc += 1;\n" + s[i:], end="")' \
    "$T/model.c" >"$T/broken.c"
reply() { $M -c 'import json,sys; print(json.dumps("```c\n" + open(sys.argv[1]).read() + "```"))' "$1"; }
EVIL='Widen the tile </script><img src=x onerror="document.body.dataset.pwned=1"><b>bold</b>'
PLAN=$($M -c 'import json,sys; print(json.dumps(sys.argv[1] + "\nso each row of rhs is reused."))' "$EVIL")
SUMMARY=$($M -c 'import json; print(json.dumps(open("tests/replies/summary-01-format.md").read()))')
start_llm report "{\"plan-m\": [{\"content\": $PLAN, \"usage\": [1000, 50]}], \"exec-m\": [{\"content\": $(reply "$T/broken.c"), \"usage\": [2000, 900]}, {\"content\": $(reply "$T/model.c"), \"usage\": [3000, 800]}], \"sum-m\": [{\"content\": $SUMMARY, \"usage\": [1500, 200]}]}"
ACCELOPT_LLM_URL=$LLM_URL ACCELOPT_PLANNER_MODEL=plan-m ACCELOPT_EXECUTOR_MODEL=exec-m \
    ACCELOPT_SUMMARIZER_MODEL=sum-m ACCELOPT_LLM_KEY=sk-report-secret-0001 \
    bin/accelopt run matmul --iters 2 --beam 1 --plans 1 --samples 2 --fix-attempts 0 \
    --out "$T/fail" >"$T/fail.out" 2>"$T/fail.err"
run_ended $?; ok $? "a run with the scripted model finishes"
$M - "$T/fail" <<'PY'
import json, sys
d = sys.argv[1]
h = [json.loads(l) for l in open(d + "/matmul/history.jsonl")]
assert any(k["status"] == "compile_error" for k in h), "no failed kernel"
assert any(k["status"] == "ok" and k["iter"] > 0 for k in h), "no measured model kernel"
u = json.load(open(d + "/matmul/usage.json"))
roles = {r["role"] for r in u["by"]}
assert {"planner", "executor"} <= roles, roles
assert sum(r["prompt"] for r in u["by"]) == u["total"]["prompt"] > 0, u
assert open(d + "/matmul/experiences.jsonl").read().strip(), "no experience"
PY
ok $? "its results hold a failed kernel, tokens by role and iteration, and the experiences"
grep -q 'sk-report-secret' "$T/fail/report.html"
[ $? -ne 0 ] && ! grep -q '<img src=x' "$T/fail/report.html" && grep -q 'Widen the tile \\u003c/script>' "$T/fail/report.html"
ok $? "the model's HTML is in the page only as escaped data, and the key is not in it"
page failures "$T/fail" 5 shot
$M - "$T/failures.dom" "$EVIL" <<'PY'
import sys
dom = open(sys.argv[1]).read()
# the plan title shows as text: its markup escaped in the DOM, never an element
assert "Widen the tile &lt;/script&gt;&lt;img src=x" in dom, "the title is not shown as text"
assert "<img src=\"x\"" not in dom and "<b>bold</b>" not in dom
assert "compile_error" in dom and "planner" in dom and "executor" in dom
PY
ok $? "the model's markup shows as text; the failure class and the roles' tokens are on the page"
# the page's figures are the table's (issue 54): the failed kernels'
# count, and the steps from the baseline to the best end at the table's
# search figure, then its quoted speedup
agree() { # agree DOM RUN-DIR
    $M - "$1" "$2" <<'PY'
import json, re, sys
dom, d = open(sys.argv[1]).read(), sys.argv[2]
rows = [l.split() for l in open(d + "/summary.txt") if l.startswith(("matmul ", "silu "))]
failed = sum(int(r[4]) for r in rows)
card = re.search(r'<div class="card"><b>([0-9,]+)</b><span>kernels that failed</span>', dom)
assert card and int(card.group(1).replace(",", "")) == failed, (card and card.group(0), failed)
done = json.load(open(d + "/matmul/done.json"))
assert done["kernels_failed"] == int(rows[0][4]), (done["kernels_failed"], rows[0])
# the kernels column counts each source once (issue 69): the distinct
# sources measured, beside the repeats, the empty slots and the duplicates
hist = [json.loads(l) for l in open(d + "/matmul/history.jsonl")]
measured = {h["sha256"] for h in hist if h.get("sha256") and h["status"] not in ("no_code", "lost", "duplicate")}
assert int(rows[0][3]) == done["kernels_distinct"] == len(measured), (rows[0], done["kernels_distinct"], len(measured))
assert done["kernels_distinct"] + done["kernels_repeated"] + done["slots_empty"] + done["kernels_duplicate"] == len(hist), done
sec = dom[dom.index("From the baseline to the best"):]
table = sec[:sec.index("</table>")]
cells = [[re.sub(r"<[^>]+>", "", c).strip() for c in re.findall(r"<td[^>]*>(.*?)</td>", tr)]
         for tr in re.findall(r"<tr>(.*?)</tr>", table)]
cells = [c for c in cells if c]
last, final = cells[-2], cells[-1]
assert last[5] == "%.3f×" % done["search_speedup"] and rows[0][-1] == "%.3fx" % done["search_speedup"], (last, rows[0])
assert final[0] == "final" and final[5].startswith("%.3f×" % done["speedup"]) and rows[0][7] == "%.3fx" % done["speedup"], (final, rows[0])
print("# failed %d; search %s; quoted %s" % (failed, last[5], final[5]))
PY
}
if [ -n "$CHROMIUM" ]; then
    agree "$T/failures.dom" "$T/fail"
    ok $? "the report's failed count and its steps to the best are the table's figures"
fi

# --- an interrupted run --------------------------------------------------------
# (logs at info: the selector says when an iteration closes; full-length
# timing: 50 quick iterations could end before the signal comes)
env -u ACCELOPT_BUDGET -u ACCELOPT_WARMUP ACCELOPT_LOG=info \
    bin/accelopt run matmul silu --iters 50 --out "$T/int" >"$T/int.out" 2>"$T/int.err" &
run=$!
for _ in $(seq 600); do grep -q 'iteration 1 closed' "$T/int/logs/selector.log" 2>/dev/null && break; sleep 0.05; done
kill -INT $run
wait $run
rc=$?
[ $rc -eq 130 ] && grep -q '"stopped":	"interrupted"' "$T/int/matmul/done.json" && [ -s "$T/int/report.html" ]
ok $? "an interrupted run still writes its report (exit $rc; $(grep -o '"stopped":	"[a-z_]*"' "$T/int/matmul/done.json" 2>/dev/null | head -1); report $([ -s "$T/int/report.html" ] && echo written || echo missing))"
page interrupted "$T/int" 4

# --- from redis, and by hand -------------------------------------------------------
start_redis report
bin/accelopt run silu --iters 1 --beam 1 --plans 2 --samples 1 --redis "$REDIS_URL" --out "$T/r" \
    >"$T/r.out" 2>"$T/r.err"
id=$($M -c 'import json,sys; print(json.load(open(sys.argv[1]))["id"])' "$T/r/run.json")
bin/accelopt report "$id" --redis "$REDIS_URL" --dir "$T/fromredis" >"$T/fromredis.out" 2>"$T/fromredis.err"
[ $? -eq 0 ] && [ "$(cat "$T/fromredis.out")" = "$T/fromredis/report.html" ] &&
    cmp -s "$T/r/silu/history.jsonl" "$T/fromredis/silu/history.jsonl"
ok $? "accelopt report RUN-ID --redis writes the run's results and its page from redis"
page from-redis "$T/fromredis" 4
bin/accelopt report "$T/one" --out "$T/again.html" >/dev/null 2>&1 && [ -s "$T/again.html" ]
ok $? "accelopt report RUN-DIR --out FILE writes the page again"
bin/accelopt report "$T/no-such-run" >/dev/null 2>"$T/norun.err"
[ $? -eq 2 ] && grep -q "no run directory '$T/no-such-run'" "$T/norun.err"
ok $? "a missing run directory: a usage error (2), and why (issue 69)"
bin/accelopt report 'x*' --redis "$REDIS_URL" >/dev/null 2>&1
[ $? -eq 2 ]
ok $? "a run id with glob characters is refused (exit 2)"
