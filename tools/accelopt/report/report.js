/* report.js - draws a run's report from the data accelopt report embedded
 * (#run-data).  Everything from the run (task names, plan titles, model
 * text, kernel sources) is data: it reaches the page only as text nodes or
 * as Vega data values, never as markup or code.  When every chart has
 * drawn, <body> gets data-ready="1" and data-charts / data-kernels, which
 * the browser test reads. */
"use strict";

const DATA = JSON.parse(document.getElementById("run-data").textContent);
const STATUS_ORDER = ["ok", "compile_error", "incorrect", "timeout", "crash", "rejected",
                      "no_code", "duplicate", "lost", "internal_error"];
const STATUS_COLOR = ["#1a7f37", "#e36209", "#b42318", "#8250df", "#6e7781", "#bf8700",
                      "#57606a", "#afb8c1", "#424a53", "#000000"];
const pending = [];
let charts = 0;

/* ---- small DOM helpers: text only ---- */
function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") e.className = v;
    else e.setAttribute(k, v);
  }
  for (const k of kids) e.append(k instanceof Node ? k : document.createTextNode(String(k)));
  return e;
}
const fmt = {
  us: (ns) => (ns == null || !isFinite(ns)) ? "—" :
    ns >= 1e9 ? (ns / 1e9).toPrecision(4) + " s" :
    ns >= 1e6 ? (ns / 1e6).toPrecision(4) + " ms" : (ns / 1e3).toPrecision(4) + " µs",
  x: (v) => (v == null || !isFinite(v)) ? "—" : v.toFixed(v < 10 ? 3 : 1) + "×",
  pct: (v) => (v == null || !isFinite(v)) ? "—" : (100 * v).toFixed(v < 0.1 ? 2 : 1) + "%",
  int: (v) => (v == null || !isFinite(v)) ? "—" : Math.round(v).toLocaleString("en-US"),
  usd: (v) => (v == null || !isFinite(v)) ? "—" : "$" + v.toFixed(v < 1 ? 4 : 2),
};
/* The figures a run quotes, all from one measurement (the final
 * head-to-head where there was one): the done message's, with the search's
 * own figures only as a fallback for a done from before they were there. */
function quoted(d) {
  const h = d.history || [], best = d.best || {};
  return {base: d.baseline_latency_ns,
          best: d.best_latency_ns != null ? d.best_latency_ns : best.latency_ns,
          pct0: d.baseline_pct_of_peak != null ? d.baseline_pct_of_peak : (h.length ? h[0].pct_of_peak : null),
          pct1: d.pct_of_peak != null ? d.pct_of_peak : best.pct_of_peak};
}
/* what the quoted speedup is: a head-to-head with its interval, or why not */
function speedupHow(d) {
  if (d.speedup_method === "head_to_head" && d.speedup_low != null)
    return `speedup, head to head (95%: ${d.speedup_low.toFixed(3)}–${d.speedup_high.toFixed(3)})`;
  if (d.speedup_method === "baseline") return "speedup (nothing beat the baseline)";
  if (d.speedup_method === "no_gain" && d.head_to_head)
    return `speedup (no significant gain: the search's best measured ${fmt.x(d.head_to_head.speedup)} head to head, ` +
      `95%: ${d.head_to_head.speedup_low.toFixed(3)}–${d.head_to_head.speedup_high.toFixed(3)}; the result is the baseline, the search's best is candidate.c)`;
  if (d.speedup_method === "none") return "speedup (none claimed: the best failed its head-to-head; the result is the baseline)";
  return "speedup (search figure: no head-to-head)";
}

function firstLine(s) {
  return (s || "").split("\n").find((l) => l.trim()) || "";
}
/* at most n characters, cut at a word's end, with an ellipsis when cut */
function clip(s, n) {
  if (s.length <= n) return s;
  const cut = s.slice(0, n - 1), sp = cut.lastIndexOf(" ");
  return (sp > n / 2 ? cut.slice(0, sp) : cut).replace(/[\s,.;:]+$/, "") + "…";
}
function table(head, rows, numeric) {
  const t = el("table");
  const hr = el("tr");
  head.forEach((h, i) => hr.append(el("th", numeric && numeric[i] ? {class: "num"} : {}, h)));
  t.append(el("thead", {}, hr));
  const body = el("tbody");
  for (const r of rows) {
    const tr = el("tr");
    r.forEach((c, i) => tr.append(el("td", numeric && numeric[i] ? {class: "num"} : {}, c)));
    body.append(tr);
  }
  t.append(body);
  return t;
}
function card(value, label) {
  return el("div", {class: "card"}, el("b", {}, value), el("span", {}, label));
}

/* ---- charts: Vega-Lite specs, drawn as SVG (prints sharply) ---- */
function chart(parent, spec, caption) {
  const fig = el("figure", {class: "chart"});
  const box = el("div", {class: "vega"});
  fig.append(box);
  if (caption) fig.append(el("figcaption", {}, caption));
  parent.append(fig);
  spec.$schema = "https://vega.github.io/schema/vega-lite/v6.json";
  spec.config = Object.assign({font: "system-ui, DejaVu Sans, sans-serif",
                               axis: {labelFontSize: 11, titleFontSize: 12},
                               legend: {labelFontSize: 11, titleFontSize: 12}}, spec.config || {});
  const view = new vega.View(vega.parse(vegaLite.compile(spec).spec),
                             {renderer: "svg", container: box, hover: true});
  pending.push(view.runAsync().then(() => { charts++; }));
}

function statusScale(statuses) {
  const present = STATUS_ORDER.filter((s) => statuses.has(s));
  for (const s of statuses) if (!present.includes(s)) present.push(s);
  return {domain: present,
          range: present.map((s) => STATUS_COLOR[STATUS_ORDER.indexOf(s)] || "#999999")};
}

/* ---- the run ---- */
function kernelsOf(t) {
  return (t.kernels || []).map((k, i) => Object.assign({index: i}, k));
}
function progress(t) { /* the paper's figure: best so far per iteration */
  const h = (t.done && t.done.history) || [];
  return h.filter((x) => x.best_ns != null).map((x) => ({
    task: t.task, iter: x.iter, speedup: x.speedup, pct: x.pct_of_peak, best_ns: x.best_ns}));
}

function overview(main) {
  const tasks = DATA.tasks || [];
  const allK = tasks.flatMap(kernelsOf);
  /* the table's count (summary.txt): duplicates and a search out of moves failed nothing */
  const fails = tasks.reduce((a, t) => a + ((t.done && t.done.kernels_failed) || 0), 0);
  let tokens = 0, usd = 0;
  for (const t of tasks) {
    const u = (t.usage && t.usage.total) || {};
    tokens += (u.prompt || 0) + (u.completion || 0);
    usd += u.cost_usd || 0;
  }
  const sec = el("section", {id: "overview"});
  sec.append(el("h2", {}, "Run"));
  const speedups = tasks.map((t) => t.done && t.done.speedup).filter((x) => x > 0);
  const geo = speedups.length ?
    Math.exp(speedups.reduce((a, b) => a + Math.log(b), 0) / speedups.length) : null;
  sec.append(el("div", {class: "cards"},
    card(String(tasks.length), "tasks"), card(fmt.int(allK.length), "kernels evaluated"),
    card(fmt.int(fails), "kernels that failed"), card(fmt.x(geo), "geometric-mean speedup"),
    card(fmt.int(tokens), "model tokens"), card(fmt.usd(usd), "model cost")));
  const rows = tasks.map((t) => {
    const d = t.done || {}, h = d.history || [], q = quoted(d);
    return [el("a", {href: "#task-" + tasks.indexOf(t)}, t.task), d.stopped || "—",
            fmt.int(h.length ? h.length - 1 : 0), fmt.int((t.kernels || []).length),
            fmt.us(q.base), fmt.us(q.best),
            fmt.x(d.speedup) + (d.speedup_low != null ? ` (${d.speedup_low.toFixed(3)}–${d.speedup_high.toFixed(3)})` :
                                d.speedup_method === "no_gain" ? " (no significant gain)" : ""),
            fmt.pct(q.pct0), fmt.pct(q.pct1), fmt.x(d.search_speedup)];
  });
  sec.append(table(["task", "stopped", "iterations", "kernels", "baseline", "best", "speedup",
                    "% of peak before", "after", "search's own figure"], rows,
                   [0, 0, 1, 1, 1, 1, 1, 1, 1, 1]));
  const prog = tasks.flatMap(progress);
  if (prog.length) {
    const box = el("div", {class: "charts"});
    sec.append(box);
    const enc = (y, title, scale) => ({
      data: {values: prog}, width: 380, height: 230,
      mark: {type: "line", point: true},
      encoding: {x: {field: "iter", type: "quantitative", title: "iteration",
                     axis: {tickMinStep: 1, format: "d"}},
                 y: {field: y, type: "quantitative", title, scale},
                 color: {field: "task", type: "nominal", title: "task"},
                 tooltip: [{field: "task"}, {field: "iter", title: "iteration"},
                           {field: y, title, format: ".3~f"}]}});
    /* a log axis only where the speedups span a wide range: under 4x a
       log scale pads the axis out to 1-10 and flattens every line */
    const sp = prog.map(p => p.speedup).filter(v => v > 0);
    const wide = sp.length && Math.max(...sp) / Math.min(...sp) > 4;
    chart(box, enc("speedup", "search's best speedup (×, chained head-to-heads)",
                   wide ? {type: "log"} : {zero: false, nice: false,
                                           domain: [Math.min(1, ...sp) * 0.98, Math.max(1, ...sp) * 1.02]}),
          "The search's own figures: its best kernel so far per iteration, each child head to head " +
          "with its parent, the ratios chained back to the baseline" + (wide ? " (log scale)" : "") + ". The speedups quoted above " +
          "come from the final head-to-head, which measures the best and the baseline side by side.");
    chart(box, enc("pct", "search's best, fraction of peak", {zero: true}),
          "The same kernels as a fraction of the machine's roofline peak (the search's figures).");
  }
  main.append(sec);
}

/* ---- one task ---- */
function lineage(t, kernels) {
  const bySha = new Map();
  for (const k of kernels) if (k.sha256 && !bySha.has(k.sha256)) bySha.set(k.sha256, k);
  const best = t.done && t.done.best;
  let k = best && (bySha.get(best.sha256) || kernels.find((x) => x.kernel_id === best.kernel_id));
  const chain = [];
  const seen = new Set();
  while (k && !seen.has(k)) {
    seen.add(k);
    chain.unshift(k);
    k = k.parent ? bySha.get(k.parent) : null;
  }
  return {chain, bySha};
}

function memoryTitles() {
  const m = new Map();
  for (const it of DATA.memory || []) m.set(it.id, it.title);
  for (const t of DATA.tasks || [])
    for (const e of t.experiences || []) if (e.item_id && e.title) m.set(e.item_id, e.title);
  return m;
}

function diffView(parentSrc, src) {
  const pre = el("pre", {class: "diff"});
  if (parentSrc == null) {
    pre.append(el("span", {class: "ctx"}, "(no parent in this run: the full source)"));
    pre.append(el("span", {}, src || ""));
    return pre;
  }
  const parts = Diff.diffLines(parentSrc, src || "");
  if (parts.every((p) => !p.added && !p.removed)) {
    pre.append(el("span", {class: "ctx"}, "(the same source as its parent)"));
    return pre;
  }
  for (const p of parts) {
    const lines = p.value.replace(/\n$/, "").split("\n");
    if (!p.added && !p.removed && lines.length > 6) { /* context: the edges only */
      const shown = [...lines.slice(0, 3), "⋯ " + (lines.length - 6) + " unchanged lines", ...lines.slice(-3)];
      pre.append(el("span", {class: "ctx"}, shown.map((l) => "  " + l).join("\n")));
      continue;
    }
    const mark = p.added ? "+ " : p.removed ? "- " : "  ";
    pre.append(el("span", {class: p.added ? "add" : p.removed ? "del" : "ctx"},
                  lines.map((l) => mark + l).join("\n")));
  }
  return pre;
}

function taskSection(main, t, ti, titles) {
  const kernels = kernelsOf(t);
  const d = t.done || {};
  const sec = el("section", {id: "task-" + ti});
  sec.append(el("h2", {}, t.task));
  const q = quoted(d);
  sec.append(el("p", {class: "muted"},
    `run ${t.run || "?"} · stopped: ${d.stopped || "?"}` +
    (d.reason ? ` (${d.reason})` : "") + ` · ${fmt.int(kernels.length)} kernels`));
  sec.append(el("div", {class: "cards"},
    card(fmt.us(q.base), "baseline"), card(fmt.us(q.best), "best"),
    card(fmt.x(d.speedup), speedupHow(d)),
    card(fmt.pct(q.pct0) + " → " + fmt.pct(q.pct1), "% of peak, before → after"),
    card(fmt.x(d.search_speedup), "the search's own figure (each kernel alone)")));

  /* every kernel: latency by iteration (log), and outcomes per iteration */
  const statuses = new Set(kernels.map((k) => k.status || "?"));
  const sc = statusScale(statuses);
  const pts = kernels.filter((k) => k.latency_ns > 0).map((k) => ({
    iter: k.iter, latency_us: k.latency_ns / 1e3, status: k.status,
    plan: clip(firstLine(k.plan_text), 120), slot: k.slot || "",
    speedup: k.speedup_vs_baseline != null ? k.speedup_vs_baseline : null}));
  const outcomes = [];
  for (const k of kernels) {
    const o = outcomes.find((x) => x.iter === k.iter && x.status === k.status);
    if (o) o.count++;
    else outcomes.push({iter: k.iter, status: k.status || "?", count: 1});
  }
  const box = el("div", {class: "charts"});
  sec.append(box);
  if (pts.length)
    chart(box, {
      data: {values: pts}, width: 380, height: 250,
      mark: {type: "point", filled: true, size: 70, opacity: 0.8},
      encoding: {
        x: {field: "iter", type: "quantitative", title: "iteration",
            axis: {tickMinStep: 1, format: "d"}, scale: {padding: 12}},
        xOffset: {field: "slot", type: "nominal"},
        y: {field: "latency_us", type: "quantitative", title: "latency (µs, log scale)",
            scale: {type: "log"}},
        color: {field: "status", type: "nominal", title: "outcome", scale: sc},
        tooltip: [{field: "iter", title: "iteration"}, {field: "slot"},
                  {field: "latency_us", title: "latency (µs)", format: ".4~r"},
                  {field: "speedup", title: "vs baseline", format: ".3~f"},
                  {field: "status"}, {field: "plan"}]}},
      "Every measured kernel by iteration and latency (log scale); lower is faster.");
  if (outcomes.length)
    chart(box, {
      data: {values: outcomes}, width: 260, height: 250,
      mark: "bar",
      encoding: {
        x: {field: "iter", type: "ordinal", title: "iteration", axis: {labelAngle: 0}},
        y: {field: "count", type: "quantitative", title: "kernels", stack: true,
            axis: {tickMinStep: 1, format: "d"}},
        color: {field: "status", type: "nominal", title: "outcome", scale: sc},
        tooltip: [{field: "iter", title: "iteration"}, {field: "status"}, {field: "count"}]}},
      "What became of each iteration's kernels: measured (ok) or the class of failure.");

  /* from the baseline to the best */
  const {chain, bySha} = lineage(t, kernels);
  sec.append(el("h3", {}, "From the baseline to the best"));
  if (!chain.length) {
    sec.append(el("p", {class: "note"}, "No kernel was measured."));
  } else {
    /* each step as the search ranked it (its comparison with its parent
       applied), against the baseline's measurement: the last row is the
       table's "search" figure; the quoted speedup is the final head-to-head's */
    const d = t.done || {}, base = d.search_baseline_latency_ns;
    const rows = chain.map((k, i) => {
      const seen = (k.memory_seen || []).map((id) => titles.get(id) ? `${titles.get(id)} (${id})` : id);
      const ranked = i === 0 ? base : k.search_latency_ns;
      return [fmt.int(k.iter), i === 0 ? "the baseline" : firstLine(k.plan_text),
              fmt.us(k.latency_ns), fmt.us(ranked),
              i === 0 ? "—" : k.against_parent ?
                `${fmt.x(k.against_parent.speedup)} (${k.against_parent.verdict})` : "not compared",
              fmt.x(base && ranked ? base / ranked : null),
              seen.length ? seen.join("; ") : "—"];
    });
    if (d.speedup != null)
      rows.push(["final", "head to head against the baseline", fmt.us(d.best_latency_ns), "—", "—",
                 fmt.x(d.speedup) + (d.speedup_low != null ?
                   ` (${d.speedup_low.toFixed(3)}–${d.speedup_high.toFixed(3)})` :
                   d.speedup_method === "no_gain" ? " (no significant gain)" : ""), "—"]);
    sec.append(table(["iteration", "plan", "measured alone", "as the search ranked it", "vs parent, head to head",
                      "vs baseline", "memory items the plan saw"], rows, [1, 0, 1, 1, 1, 1, 0]));
  }

  /* every kernel, with its diff against its parent */
  sec.append(el("h3", {}, `Kernels (${kernels.length})`));
  for (const k of kernels) {
    const det = el("details", {class: "kernel"});
    const bad = k.status !== "ok";
    det.append(el("summary", {},
      `iteration ${k.iter} · ${k.slot || "?"} · `,
      el("span", {class: "status" + (bad ? " bad" : "")}, k.status || "?"),
      ` · ${fmt.us(k.latency_ns)}` + (k.speedup != null ? ` · ${fmt.x(k.speedup)} vs parent` : "") +
      ` · ${k.iter === 0 ? "the baseline" : clip(firstLine(k.plan_text), 110)}`));
    if (k.reason) det.append(el("pre", {class: "reason"}, k.reason));
    for (const f of k.fixes || []) /* earlier attempts of this slot, sent back to the model */
      det.append(el("p", {class: "muted"}, `attempt ${f.attempt}: `,
                    el("span", {class: "status bad"}, f.status || "?"),
                    f.reason ? ` — ${f.reason}` : "", " (sent back to the model with why)"));
    if (k.plan_text && k.iter > 0) det.append(el("pre", {class: "plan"}, k.plan_text));
    if (k.source != null) {
      const parent = k.parent ? bySha.get(k.parent) : null;
      det.append(diffView(parent ? parent.source : null, k.source));
    }
    sec.append(det);
  }

  /* what the run learned */
  const ex = t.experiences || [];
  sec.append(el("h3", {}, `Experiences written (${ex.filter((e) => e.stored).length} stored)`));
  if (ex.length)
    sec.append(table(["iteration", "title", "effect", "stored"], ex.map((e) => [
      fmt.int(e.iter), e.title || e.reason || "—",
      e.speedup != null ? `${fmt.x(e.speedup)} ${e.direction === "-" ? "slower" : "faster"}` : "—",
      e.stored ? "yes" : "no"]), [1, 0, 1, 0]));
  else
    sec.append(el("p", {class: "note"}, "None in this run."));

  /* what the models cost */
  const by = (t.usage && t.usage.by) || [];
  sec.append(el("h3", {}, "Tokens and cost"));
  if (!by.length) {
    sec.append(el("p", {class: "note"}, "No model tokens were counted (the builtin model, or none used)."));
  } else {
    by.sort((a, b) => a.iter - b.iter || a.role.localeCompare(b.role));
    sec.append(table(["iteration", "role", "prompt tokens", "completion tokens", "cost"],
      by.map((u) => [fmt.int(u.iter), u.role, fmt.int(u.prompt), fmt.int(u.completion),
                     fmt.usd(u.cost_usd)]), [1, 0, 1, 1, 1]));
    const cbox = el("div", {class: "charts"});
    sec.append(cbox);
    chart(cbox, {
      data: {values: by.map((u) => ({iter: u.iter, role: u.role, tokens: u.prompt + u.completion}))},
      width: 360, height: 200, mark: "bar",
      encoding: {x: {field: "iter", type: "ordinal", title: "iteration", axis: {labelAngle: 0}},
                 y: {field: "tokens", type: "quantitative", title: "tokens"},
                 color: {field: "role", type: "nominal", title: "role"},
                 tooltip: [{field: "iter"}, {field: "role"}, {field: "tokens"}]}},
      "Model tokens per iteration, by role.");
  }
  main.append(sec);
  return kernels.length;
}

function draw() {
  const main = document.getElementById("report");
  main.textContent = "";
  const run = DATA.run || {};
  const cfg = run.config || {};
  document.getElementById("subtitle").textContent =
    [run.target && `target ${run.target}`, run.size && `size ${run.size}`,
     cfg.iters != null && `T=${cfg.iters} B=${cfg.beam} N=${cfg.plans} K=${cfg.samples}`,
     cfg.memory_scope && `memory ${cfg.memory_scope}`,
     run.generated_at && `report written ${run.generated_at}`].filter(Boolean).join(" · ");
  if (!(DATA.tasks || []).length) {
    main.append(el("p", {class: "note"}, "This run has no task results yet."));
  } else {
    overview(main);
    const toc = el("p", {class: "toc noprint"}, "Tasks: ");
    DATA.tasks.forEach((t, i) => toc.append(el("a", {href: "#task-" + i}, t.task)));
    main.append(toc);
  }
  const titles = memoryTitles();
  let kernels = 0;
  (DATA.tasks || []).forEach((t, i) => { kernels += taskSection(main, t, i, titles); });
  Promise.all(pending).then(() => {
    document.body.dataset.charts = String(charts);
    document.body.dataset.kernels = String(kernels);
    document.body.dataset.ready = "1";
  }, (e) => {
    document.body.dataset.error = String(e);
  });
}

/* on paper, every kernel's details are shown */
window.addEventListener("beforeprint", () => {
  for (const d of document.querySelectorAll("details")) {
    d.dataset.wasOpen = d.open ? "1" : "";
    d.open = true;
  }
});
window.addEventListener("afterprint", () => {
  for (const d of document.querySelectorAll("details")) d.open = d.dataset.wasOpen === "1";
});

try {
  draw();
} catch (e) {
  document.body.dataset.error = String(e);
  document.getElementById("report").append(el("p", {class: "note"}, "The report could not be drawn: " + e));
}
