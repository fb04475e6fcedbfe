"""The HTML report's static assets: its one script and its style sheet (text only; nothing of a
record ever goes into them). :func:`approxtheory.report.render_html` inlines both; the page's
Content-Security-Policy allows the script by its hash."""

__all__ = ["SCRIPT", "CSS", "run_note"]

# The page's one script: static text (no record text ever goes into it; it reads the rows'
# data-attributes and text), allowed by the page's Content-Security-Policy through its hash.
SCRIPT = """
const $ = (s) => document.querySelector(s);
document.documentElement.classList.add("js");
const tbody = $("#claims tbody");
const rows = Array.from(tbody.rows);
const ctl = {
  paper: $("#f-paper"), verdict: $("#f-verdict"), scope: $("#f-scope"),
  q: $("#f-q"), sort: $("#f-sort"),
};
const text = new Map(rows.map((r) => [r, r.textContent.toLowerCase()]));
function apply() {
  const terms = ctl.q.value.toLowerCase().split(/\\s+/).filter(Boolean);
  let n = 0;
  for (const r of rows) {
    const ok = (!ctl.paper.value || r.dataset.paper === ctl.paper.value)
      && (!ctl.verdict.value || r.dataset.verdict === ctl.verdict.value)
      && (!ctl.scope.value || r.dataset.scope === ctl.scope.value)
      && terms.every((t) => text.get(r).includes(t));
    r.hidden = !ok;
    if (ok) n += 1;
  }
  $("#shown").textContent = n + " of " + rows.length + " claims shown";
}
const num = (v) => (v === "" || v === undefined ? Infinity : Number(v));
const keys = {
  findings: (r) => [num(r.dataset.rank), num(r.dataset.order)],
  catalogue: (r) => [num(r.dataset.order)],
  claim: (r) => [r.dataset.claim, num(r.dataset.order)],
  paper: (r) => [r.dataset.paper, num(r.dataset.rank), num(r.dataset.order)],
  slack: (r) => [num(r.dataset.slack), num(r.dataset.order)],
};
function cmp(a, b) {
  for (let i = 0; i < a.length; i += 1) {
    if (a[i] < b[i]) return -1;
    if (a[i] > b[i]) return 1;
  }
  return 0;
}
function sort() {
  const key = keys[ctl.sort.value] || keys.findings;
  const sorted = rows.slice().sort((a, b) => cmp(key(a), key(b)));
  for (const r of sorted) tbody.appendChild(r);
}
function reset() {
  for (const k of ["paper", "verdict", "scope", "q"]) ctl[k].value = "";
  apply();
}
function reveal() {
  const id = decodeURIComponent(location.hash.slice(1));
  const r = id ? document.getElementById(id) : null;
  if (r && r.hidden) { reset(); r.scrollIntoView(); }
}
for (const k of ["paper", "verdict", "scope"]) ctl[k].addEventListener("change", apply);
ctl.q.addEventListener("input", apply);
ctl.sort.addEventListener("change", sort);
$("#f-reset").addEventListener("click", reset);
for (const b of document.querySelectorAll("button.cnt")) {
  b.addEventListener("click", () => {
    ctl.paper.value = b.dataset.paper || "";
    ctl.verdict.value = b.dataset.verdict || "";
    apply();
    $("#controls").scrollIntoView();
  });
}
window.addEventListener("hashchange", reveal);
// a formula wider than its cell is drawn smaller until it fits (no scroll bar in the cell);
// hidden rows are fitted when shown
function fit() {
  for (const f of document.querySelectorAll("details.formulas div.f")) {
    f.style.fontSize = "";
    if (!f.clientWidth || f.scrollWidth <= f.clientWidth) continue;
    const px = parseFloat(getComputedStyle(f).fontSize);
    let size = Math.max(6, Math.floor((px * f.clientWidth) / f.scrollWidth));
    f.style.fontSize = size + "px";
    // the parts that do not scale with the font (spacing) may still overflow: a pixel less
    while (size > 6 && f.scrollWidth > f.clientWidth) f.style.fontSize = --size + "px";
  }
}
for (const k of ["paper", "verdict", "scope"]) ctl[k].addEventListener("change", fit);
ctl.q.addEventListener("input", fit);
window.addEventListener("resize", fit);
for (const d of document.querySelectorAll("details.formulas")) d.addEventListener("toggle", fit);
sort();
apply();
reveal();
fit();
"""

CSS = """
body { font-family: system-ui, sans-serif; margin: 1.5em; color: #222; }
table { border-collapse: collapse; }
td, th { border: 1px solid #ddd; padding: 6px; vertical-align: top; font-size: 13px; }
th { background: #f4f4f4; text-align: left; }
#claims { width: 100%; table-layout: fixed; }
#claims > tbody > tr > td { overflow-wrap: anywhere; }
#claims > thead th { overflow-wrap: anywhere; }
#claims > thead th:nth-child(1) { width: 6%; }
#claims > thead th:nth-child(2) { width: 18%; }
#claims > thead th:nth-child(3) { width: 8%; }
#claims > thead th:nth-child(4) { width: 10%; }
#claims > thead th:nth-child(5), #claims > thead th:nth-child(6) { width: 9%; }
#claims > thead th:nth-child(7) { width: 25%; }
#claims > thead th:nth-child(8) { width: 15%; }
#summary td.n, #summary th.n { text-align: right; }
#summary tr.all td { font-weight: bold; }
.badge { color: white; padding: 2px 6px; border-radius: 4px; white-space: nowrap; }
button.cnt { font: inherit; border: 0; background: none; color: #0645ad; cursor: pointer;
  text-decoration: underline; padding: 0; }
#findings li { margin: 0.3em 0; }
#controls { display: none; gap: 0.8em; flex-wrap: wrap; align-items: center; margin: 1em 0;
  position: sticky; top: 0; background: white; padding: 0.5em 0; z-index: 1; }
.js #controls { display: flex; }
table.figs td { border: 0; border-bottom: 1px solid #eee; padding: 1px 6px 1px 0; font-size: 12px;
  overflow-wrap: normal; }
table.figs td.v { font-variant-numeric: tabular-nums; overflow-wrap: break-word; }
table.figs { margin-top: 0.4em; }
a.perma { color: #999; text-decoration: none; margin-left: 0.3em; }
tr:target { outline: 3px solid #f9a825; }
td.plots img { width: 100%; max-width: 480px; display: block; margin-bottom: 4px;
  background: #fff; }
td.plots a:hover img, td.plots a:focus-visible img { transform: scale(3);
  transform-origin: top right; position: relative; z-index: 3;
  box-shadow: 0 2px 14px rgba(0, 0, 0, 0.35); }
.lbl { font-size: 11px; color: #666; margin-top: 0.3em; }
details.formulas div.f { margin: 0.25em 0 0.25em 0.8em; font-size: 15px; overflow-x: auto; }
summary { cursor: pointer; color: #555; }
"""


def run_note(meta: dict) -> str:
    """The report's times: how long the computation behind its verdicts took (``computed_s``,
    from the cache entries for the ``cached`` claims) and when and how fast this run assembled
    the report (``assembled``, ``wall_s``); "" when the meta holds none."""
    parts = []
    if isinstance(meta.get("computed_s"), (int, float)):
        cached = meta.get("cached") or 0
        parts.append(
            f"verdicts computed in {meta['computed_s']:.1f} s of checks"
            + (f" ({cached} read from the cache)" if cached else "")
        )
    wall = meta.get("wall_s")
    if isinstance(wall, (int, float)):
        when = f" at {meta['assembled']}" if meta.get("assembled") else ""
        parts.append(f"this report assembled{when} in {wall:.1f} s")
    return "".join(f", {p}" for p in parts)


def mutant_notes(r: dict) -> list[str]:
    """What a ``verify --mutants`` record adds to its "falsified by" cell: the mutants its check
    raised on (a defect, never a catch), the expressions no run of the check read, the formulas
    it read at one value of a symbol only (its blind spots) and the verdict it was downgraded
    from."""
    out = []
    if r.get("mutant_errors"):
        errors = ", ".join(r["mutant_errors"])
        out.append(f"DEFECT: the check raised on mutant(s) {errors} (an error is not a catch)")
    if r.get("unread_expressions"):
        out.append("expressions no run of the check read: " + ", ".join(r["unread_expressions"]))
    if r.get("blind_spots"):
        out.append(
            "read at one point only (pivot mutants made there): " + "; ".join(r["blind_spots"])
        )
    if r.get("downgraded_from"):
        out.append(f"downgraded from {r['downgraded_from']}")
    return out
