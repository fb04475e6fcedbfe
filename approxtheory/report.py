"""Rendering: plots drawn from the CSV files only, and the Markdown / HTML reports.

Measurement and reporting are separate: nothing here computes a measurement; it reads the tidy
CSV and the verdict records that ``verify`` wrote.
"""

from __future__ import annotations

import csv
import html
import io
import re
from collections.abc import Sequence
from pathlib import Path

from .io import atomic_write_text
from .mathml import mathml
from .plots import plot_from_csv, slope_plot
from .plots.draw import _plt, _save  # noqa: F401 - drawing helpers kept importable from here
from .report_page import CSS as _CSS
from .report_page import SCRIPT as _SCRIPT
from .report_page import mutant_notes, run_note

__all__ = [
    "write_csv",
    "read_csv",
    "plot_from_csv",
    "slope_plot",
    "render_markdown",
    "render_html",
    "formulas_of",
    "mathml",
    "fmt_number",
    "fmt_value",
    "figures",
    "reason",
    "tidy_numbers",
    "VERDICT_ORDER",
    "FINDINGS",
    "STYLE",
]

STYLE = Path(__file__).with_name("plot.mplstyle")


def write_csv(path: Path, rows: Sequence[dict]) -> Path:
    """Write ``rows`` as a CSV (columns in first-seen order; atomic) and return the path."""
    return atomic_write_text(path, csv_text(rows))


def csv_text(rows: Sequence[dict]) -> str:
    """The text :func:`write_csv` writes for ``rows``."""
    cols: list[str] = []
    for r in rows:
        for k in r:
            if k not in cols:
                cols.append(k)
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=cols, lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow({k: r.get(k, "") for k in cols})
    return buf.getvalue()


def read_csv(path: Path) -> list[dict]:
    """Read a CSV written by :func:`write_csv`; numeric cells come back as floats."""
    with open(path, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    out = []
    for r in rows:
        d: dict[str, float | str] = {}
        for k, v in r.items():
            try:
                d[k] = float(v)
            except (TypeError, ValueError):
                d[k] = v
        out.append(d)
    return out


_BADGE = {
    "verified-symbolic": "#2e7d32",
    "verified-numeric": "#388e3c",
    "consistent-empirical": "#689f38",
    "inconsistent": "#ef6c00",
    "refuted": "#c62828",
    "vacuous-here": "#f9a825",
    "not-checkable": "#757575",
    "error": "#6a1b9a",
}


# line breaks of any kind (a table row is one line) and the other control characters
_MD_BREAKS = re.compile(r"[\x00-\x1f\x7f\x85\u2028\u2029]+")
# markdown's inline syntax: code, emphasis, strikethrough, links and images, table cells
_MD_SPECIAL = re.compile(r"([\\`*_\[\]~|])")


def _md_text(s) -> str:
    """``s`` as literal text in a markdown table cell: on one line, with markdown's inline
    syntax (backticks, emphasis, links, pipes) backslash-escaped and HTML's ``&``, ``<``, ``>``
    as entities, so that text from a record can neither break the table nor inject markup."""
    text = _MD_BREAKS.sub(" ", str(s))
    text = html.escape(text, quote=False)
    return _MD_SPECIAL.sub(r"\\\1", text)


def _md_code(s) -> str:
    """``s`` as a markdown code span in a table cell: one line, a fence longer than any run of
    backticks inside, pipes escaped (GFM splits the cells before it reads code spans)."""
    text = _MD_BREAKS.sub(" ", str(s)).replace("|", "\\|")
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith(("`", " ")) or text.endswith(("`", " ")) else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _md_cell(s) -> str:
    return _md_text(s)


def _md_link(text, target) -> str:
    """A markdown link to a file of the report (the target percent-encoded)."""
    from urllib.parse import quote

    return f"[{_md_text(text)}]({quote(str(target))})"


def _slack(r: dict) -> str:
    s = r.get("slack")
    if s is None:
        return f"no slack: {r['slack_note']}" if r.get("slack_note") else ""
    return f"slack {s:.3g}"


def _scale(r: dict) -> str:
    """A trained verdict's scale in one line: per experiment what was run (T, steps, seeds, best
    NMSE) and, per reference cell, what was reached against the paper's figure."""
    sc = r.get("scale")
    if not isinstance(sc, dict) or not sc:
        return ""
    parts = []
    for name, e in sc.items():
        if not isinstance(e, dict):
            continue
        run = e.get("run") or {}
        here = ", ".join(
            f"{k} {v}" for k, v in run.items() if k in ("T", "steps", "hidden", "seeds")
        )
        best = run.get("best_val_nmse")
        if isinstance(best, (int, float)):
            here += f", best NMSE {best:.3g}"
        papers = [
            f"{label}: {c['reached']:.3g} vs {c['paper']:.3g}"
            for label, c in (e.get("cells") or {}).items()
            if isinstance(c, dict)
            and isinstance(c.get("paper"), (int, float))
            and isinstance(c.get("reached"), (int, float))
        ]
        parts.append(
            f"{name}: here {here}"
            + (
                f"; reached vs paper at {e.get('reference', '')}: " + ", ".join(papers)
                if papers
                else ""
            )
        )
    return "scale: " + " | ".join(parts)


def certified_note(r: dict) -> str:
    """What a record's certified upper bracket says in a few words: "certified"
    when it is verified-numeric and every bracketed grid cell's certified bound is at or below
    the claimed bound, "certified in k of n cells (the rest search-based only)" when only some
    are, "search-based only" when a bracket was computed but certified none; "" when the
    record has no bracketed cell."""
    c = r.get("certified")
    if not isinstance(c, dict) or not isinstance(c.get("of"), int):
        return ""
    k, n = c.get("cells"), c["of"]
    if c.get("all") is True and r.get("verdict") == "verified-numeric":
        return "certified"
    if isinstance(k, int) and k > 0:
        return f"certified in {k} of {n} cells (the rest search-based only)"
    return "search-based only"


def certified_counts(records: Sequence[dict]) -> dict[str, int]:
    """Of the ``verified-numeric`` records: of those resting on a construction's sup error
    (a ``certified`` record: bracketed, or searched only), how many are certified in every
    cell (``certified``), in some (``partly``), and how many rest on the search alone
    (``search``); ``other``: decided without a sup-error search (exact counts, symbolic
    comparisons, fits)."""
    out = {"certified": 0, "partly": 0, "search": 0, "other": 0}
    for r in records:
        if r.get("verdict") != "verified-numeric":
            continue
        note = certified_note(r)
        out[
            "other"
            if not note
            else "certified"
            if note == "certified"
            else "partly"
            if note[:12] == "certified in"
            else "search"
        ] += 1
    return out


def certified_line(records: Sequence[dict]) -> str:
    """The counts of :func:`certified_counts` in one sentence ("" without verified-numeric)."""
    c = certified_counts(records)
    n = sum(c.values())
    if not n:
        return ""
    m = n - c["other"]
    return (
        f"verified-numeric {n}: {m} rest on a searched error over a domain (the sup error of "
        f"a construction, or the least error over the heads of a floor), certified in every cell "
        f"{c['certified']}, in some cells {c['partly']}, search-based only {c['search']} (a "
        "certified cell: a sound bracket on the claimed side of the bound over the whole input "
        f"domain); {c['other']} are decided without a sup-error search (exact counts, "
        "symbolic comparisons, fits)"
    )


def certified_rows(r: dict) -> list[tuple[str, str, str, str, str]]:
    """The record's cells as (cell, found, certified, claimed, certified yes/no) at 4
    significant digits: found <= sup <= certified per cell (``search only`` where no bracket
    was computed)."""
    c = r.get("certified")
    table = c.get("table") if isinstance(c, dict) else None
    if not isinstance(table, list):
        return []
    out = []
    for t in table:
        if not isinstance(t, dict):
            continue
        up = t.get("certified")
        out.append(
            (
                str(t.get("cell", "")),
                "—" if t.get("found") is None else fmt_number(t["found"]),
                "search only" if up is None else fmt_number(up),
                "—" if t.get("claimed") is None else fmt_number(t["claimed"]),
                "yes" if t.get("ok") is True else "no",
            )
        )
    return out


_CERT_HEAD = ("cell", "found sup_error", "certified sup_error_upper", "claimed bound", "certified")


def _md_certified(records: Sequence[dict]) -> list[str]:
    """The markdown section of per-cell brackets: one small table per record with any."""
    out: list[str] = []
    for _i, r in _ordered(records):
        cells = certified_rows(r)
        if not cells:
            continue
        out += [
            "",
            f"### {_md_text(r['claim'])}: {_md_text(certified_note(r))}",
            "",
            "| " + " | ".join(_CERT_HEAD) + " |",
            "|---|---:|---:|---:|---|",
        ]
        out += ["| " + " | ".join(_md_text(x) for x in row) + " |" for row in cells]
    if out:
        out = [
            "",
            "## Certified brackets (found ≤ sup ≤ certified, per cell)",
            "",
            "found: the largest error the search evaluated (a lower bound on the supremum); "
            "certified: a sound upper bound over the whole input box; a cell is certified when "
            "it is at or below the claimed bound.",
            *out,
        ]
    return out


def _falsified(r: dict, meta: dict) -> str:
    """The "falsified by" cell, saying exactly what ran: the declared mutants that flip the
    verdict and the claim mutants flipped k of n (``verify --mutants``), else the declared ones
    marked "not run"; then the slack (claimed bound / worst case found) where the check has one.
    """
    parts = []
    declared = [x for x in r.get("falsified_by", []) if not x.startswith("claim ")]
    if meta.get("mutants") and "mutant_results" in r:
        ran = r["mutant_results"]
        if declared:
            parts.append("declared mutants: " + ", ".join(declared))
        elif ran:
            parts.append(
                "declared mutants: none of "
                + ", ".join(f"{m['name']} ({m.get('verdict', '?')})" for m in ran)
            )
    elif r.get("mutants"):
        parts.append("declared (not run): " + ", ".join(r["mutants"]))
    cms = r.get("claim_mutants")
    if meta.get("mutants") and cms is not None:
        if cms:
            k = sum(m["flips"] for m in cms)
            parts.append(
                f"claim mutants flipped {k}/{len(cms)} ("
                + ", ".join(
                    f"{m['name']} -> {m.get('verdict', '?')}"
                    + (" (required)" if m.get("required") and not m["flips"] else "")
                    for m in cms
                )
                + ")"
            )
        if r.get("claim_mutant_note"):
            parts.append(r["claim_mutant_note"])
    elif not meta.get("mutants") and r.get("verdict") in (
        "verified-symbolic",
        "verified-numeric",
        "consistent-empirical",
    ):
        parts.append("claim mutants not run (verify --mutants)")
    parts += mutant_notes(r)
    if _slack(r):
        parts.append(_slack(r))
    return "; ".join(parts)


#: the order the report lists verdicts in: the findings (what a reader acts on) first
VERDICT_ORDER = (
    "refuted",
    "inconsistent",
    "not-checkable",
    "error",
    "vacuous-here",
    "consistent-empirical",
    "verified-numeric",
    "verified-symbolic",
)
#: the verdicts listed under "Findings", each with a one-line reason
FINDINGS = ("refuted", "inconsistent", "not-checkable", "error")


def _rank(verdict) -> int:
    """Where a verdict sorts: :data:`VERDICT_ORDER`'s index, an unknown one after the findings."""
    v = str(verdict)
    return VERDICT_ORDER.index(v) if v in VERDICT_ORDER else len(FINDINGS)


def _ordered(records: Sequence[dict]) -> list[tuple[int, dict]]:
    """``(catalogue index, record)`` with the findings first, catalogue order within a verdict."""
    return sorted(enumerate(records), key=lambda ir: (_rank(ir[1].get("verdict")), ir[0]))


def _papers(records: Sequence[dict]) -> list[str]:
    seen: list[str] = []
    for r in records:
        p = str(r.get("paper", ""))
        if p not in seen:
            seen.append(p)
    return seen


def _verdicts(records: Sequence[dict]) -> list[str]:
    present = {str(r.get("verdict", "")) for r in records}
    return sorted(present, key=lambda v: (_rank(v), v))


def _paper_label(records: Sequence[dict], paper: str) -> str:
    """A paper's arXiv id with the prefixes of its claim ids (``2510.06662 (HC)``)."""
    prefixes: list[str] = []
    for r in records:
        if str(r.get("paper", "")) == paper:
            pre = str(r.get("claim", "")).split("-")[0]
            if pre and pre not in prefixes:
                prefixes.append(pre)
    return f"{paper} ({', '.join(prefixes)})" if prefixes else paper


def _scope_kind(r: dict) -> str:
    """The scope's kind, the words before its colon (``full``, ``partial``, ``surrogate``)."""
    s = _MD_BREAKS.sub(" ", str(r.get("scope") or "")).strip()
    kind = s.split(":", 1)[0].strip().lower()
    return kind[:40] if kind else "unstated"


def _one_line(s, limit: int = 220) -> str:
    """Text on one line, cut at a word boundary with an ellipsis past ``limit`` characters."""
    text = " ".join(_MD_BREAKS.sub(" ", str(s)).split())
    if len(text) <= limit:
        return text
    cut = text[:limit].rsplit(" ", 1)[0] if " " in text[:limit] else text[:limit]
    return cut.rstrip(",;:") + " …"


# a decimal number standing alone (not part of a version, a hash or a word)
_DECIMAL = re.compile(r"(?<![\w.])-?\d+\.\d+(?:[eE][+-]?\d+)?(?!\w|\.\w)")


def tidy_numbers(text: str) -> str:
    """``text`` with the full-precision floats a check wrote into its prose (``repr``'s 15 to 17
    significant figures: ``0.011500472207502712``) shortened to 6; a number written to a
    chosen precision (``1.000008683``, ``1.000000000000``) is left as it is."""

    def short(m: re.Match) -> str:
        s = m.group(0)
        mantissa = re.split(r"[eE]", s)[0].lstrip("-").replace(".", "").lstrip("0")
        noise = len(mantissa) >= 15 and not mantissa.endswith("0")  # repr's, not a format's
        return f"{float(s):.6g}" if noise else s

    return _DECIMAL.sub(short, text)


def reason(r: dict, limit: int = 220) -> str:
    """A verdict's reason in one line: the evidence's first sentence (its first clause when the
    sentence is long and the clause is not short), cut at a word past ``limit`` characters."""
    text = tidy_numbers(" ".join(_MD_BREAKS.sub(" ", str(r.get("evidence") or "")).split()))
    m = re.search(r"(?<!\.)[.!?](?=\s+[A-Z]|$)", text)  # "s.d. of", "... 99 %": no end
    first = text[: m.start() + 1] if m else text
    if len(first) > limit:  # its first clause (up to a "; " outside brackets) when not short
        depth = 0
        for k, ch in enumerate(first):
            depth += ch in "([{"
            depth -= ch in ")]}" and depth > 0
            if ch == ";" and depth == 0 and first[k + 1 : k + 2] == " ":
                if 40 <= k <= limit:
                    first = first[:k]
                break
    return _one_line(first, limit) or "(no evidence recorded)"


# ------------------------------------------------------------------- figures at sensible precision


def _float(v):
    """A number of a record, with verdicts.json's ``{"$float": "nan"}`` markers decoded; else
    None."""
    if isinstance(v, bool):
        return None
    if isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, dict) and set(v) == {"$float"}:
        try:
            return float(str(v["$float"]))
        except ValueError:
            return None
    return None


def fmt_number(v, digits: int = 4) -> str:
    """A figure for a reader: integers as written, floats to ``digits`` significant figures,
    the non-finite ones as ``nan``, ``∞`` and ``−∞``."""
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, int):
        return str(v)
    x = _float(v)
    if x is None:
        return str(v)
    if x != x:
        return "nan"
    if x in (float("inf"), float("-inf")):
        return "∞" if x > 0 else "−∞"
    return f"{x:.{digits}g}"


def _is_scalar(v) -> bool:
    return v is None or isinstance(v, (str, int, float, bool)) or _float(v) is not None


def fmt_value(v, limit: int = 12) -> str:
    """A record's value as plain text: numbers by :func:`fmt_number`, lists as ``[a, b, …]``
    (at most ``limit`` items shown), mappings as ``k = v; …``. Never a Python repr."""
    if v is None:
        return "—"
    if isinstance(v, str):
        return _one_line(v, 400)
    if _float(v) is not None or isinstance(v, (int, float, bool)):
        return fmt_number(v)
    if isinstance(v, dict):
        return "; ".join(f"{_one_line(k, 80)} = {fmt_value(x, limit)}" for k, x in v.items())
    if isinstance(v, (list, tuple)):
        shown = [fmt_value(x, limit) for x in list(v)[:limit]]
        more = f", … ({len(v)} in all)" if len(v) > limit else ""
        return "[" + ", ".join(shown) + more + "]"
    return _one_line(v, 400)


def _named(prefix: str, v) -> list[tuple[str, str]]:
    """``(name, text)`` rows for a value: a mapping of scalars gives one row per key."""
    if isinstance(v, dict) and v and _float(v) is None and all(_is_scalar(x) for x in v.values()):
        return [(f"{prefix}: {_one_line(k, 80)}", fmt_value(x)) for k, x in v.items()]
    return [(prefix, fmt_value(v))]


def figures(r: dict) -> list[tuple[str, str]]:
    """The named figures of a record, as ``(name, text)`` at sensible precision: measured,
    claimed, slack, the witness of a refutation, this run's volatile figures and the scale."""
    rows: list[tuple[str, str]] = []
    if r.get("measured") is not None:
        rows += _named("measured", r["measured"])
    if r.get("claimed") is not None:
        rows += _named("claimed", r["claimed"])
    if r.get("slack") is not None:
        rows.append(("slack (claimed / worst case)", fmt_value(r["slack"])))
    elif r.get("slack_note"):
        rows.append(("slack", "none: " + _one_line(r["slack_note"], 300)))
    if r.get("witness") is not None and r.get("verdict") in ("refuted", "inconsistent"):
        rows += _named("witness", r["witness"])
    for k, v in (r.get("volatile") or {}).items():
        rows += _named(f"this run: {_one_line(k, 80)}", v)
    if isinstance(r.get("computed_s"), (int, float)):
        cached = " (read from the cache)" if r.get("cached") else ""
        rows.append(("computed in", f"{r['computed_s']:.1f} s{cached}"))
    sc = r.get("scale")
    if isinstance(sc, dict):
        for name, e in sc.items():
            if not isinstance(e, dict):
                continue
            run = e.get("run") or {}
            if isinstance(run, dict) and run:
                rows.append((f"scale {_one_line(name, 80)}: run", fmt_value(run)))
            for label, c in (e.get("cells") or {}).items():
                if isinstance(c, dict):
                    rows.append(
                        (
                            f"scale {_one_line(name, 80)}: {_one_line(label, 80)}",
                            f"reached {fmt_value(c.get('reached'))} vs paper "
                            f"{fmt_value(c.get('paper'))}",
                        )
                    )
    return rows


def _digits(values, start: int = 4, most: int = 12) -> int:
    """The fewest significant figures (``start`` or more) that keep apart the numbers of
    ``values`` that differ: a fitted slope, its interval's ends and the predicted exponent
    all printed as ``-1`` would hide whether the prediction lies inside."""
    xs = [x for x in (_float(v) for v in values) if x is not None and x == x]
    for d in range(start, most + 1):
        shown: dict[str, float] = {}
        if all(shown.setdefault(fmt_number(x, d), x) == x for x in xs):
            return d
    return most


def _slope_rows(r: dict) -> list[tuple[str, str, str, str, str]]:
    out = []
    for s in r.get("slopes") or []:
        if not isinstance(s, dict):
            continue
        d = _digits([s.get(k) for k in ("lo", "fitted", "hi", "predicted")])
        ci = f"[{fmt_number(s.get('lo'), d)}, {fmt_number(s.get('hi'), d)}]"
        within = s.get("within_ci")
        out.append(
            (
                _one_line(s.get("label", ""), 120),
                fmt_number(s.get("fitted"), d),
                ci,
                "—" if s.get("predicted") is None else fmt_number(s.get("predicted"), d),
                "—" if within is None else ("yes" if within else "no"),
            )
        )
    return out


# ----------------------------------------------------------------------------------- formulas


def formulas_of(claims) -> dict[str, dict]:
    """The formulas :func:`render_html` shows, from catalogue claims (anything with ``id``,
    ``expressions`` and optionally ``regime`` and ``vacuous_if``): claim id ->
    ``{"expressions": {name: expr}, "regime": [expr, ...], "vacuous_if": expr or None}``."""
    out: dict[str, dict] = {}
    for c in claims:
        out[str(c.id)] = {
            "expressions": dict(getattr(c, "expressions", {}) or {}),
            "regime": [getattr(x, "expr", x) for x in (getattr(c, "regime", ()) or ())],
            "vacuous_if": getattr(c, "vacuous_if", None),
        }
    return out


def _formula_html(f) -> str:
    """A claim's formulas as MathML (escaped sympy text where MathML cannot be had)."""
    if not isinstance(f, dict):
        return ""
    e = html.escape

    def one(expr, name=None) -> str:
        m = mathml(expr, name)
        if m is not None:
            return f"<div class=f>{m}</div>"
        text = str(expr) if name is None else f"{name} = {expr}"
        return f"<div class=f><code>{e(_one_line(text, 400))}</code></div>"

    parts = [one(x, str(n)) for n, x in (f.get("expressions") or {}).items()]
    regime = [one(x) for x in f.get("regime") or []]
    if regime:
        parts.append("<div class=lbl>regime</div>" + "".join(regime))
    if f.get("vacuous_if") is not None:
        parts.append("<div class=lbl>vacuous where</div>" + one(f["vacuous_if"]))
    if not parts:
        return ""
    return (
        "<details class=formulas open><summary>formulas</summary>" + "".join(parts) + "</details>"
    )


# ------------------------------------------------------------------------------------ markdown


def _anchor(claim, taken: set[str]) -> str:
    """A claim's permalink id: ``claim-`` and its id with anything but ``A-Za-z0-9._-`` as
    ``_`` (unique within the page)."""
    base = "claim-" + re.sub(r"[^A-Za-z0-9._-]", "_", str(claim))[:80]
    aid, k = base, 2
    while aid in taken:
        aid, k = f"{base}-{k}", k + 1
    taken.add(aid)
    return aid


def _md_figures(r: dict) -> str:
    figs = [(n, v) for n, v in figures(r) if not n.startswith(("witness", "this run", "slack"))]
    slopes = [f"{s[0]}: {s[1]} {s[2]} vs {s[3]}" for s in _slope_rows(r)]
    out = ""
    if figs:
        out += " *Figures:* " + _md_text("; ".join(f"{n} {v}" for n, v in figs))
    if slopes:
        out += " *Slopes (fitted [95% CI] vs predicted):* " + _md_text("; ".join(slopes))
    return out


def render_markdown(records: Sequence[dict], meta: dict) -> str:
    """The ``verify`` report as markdown: counts per paper and verdict, the findings (refuted,
    inconsistent, not-checkable) with a one-line reason each, then one row per claim, the
    findings first."""
    counts: dict[str, int] = {}
    for r in records:
        counts[r["verdict"]] = counts.get(r["verdict"], 0) + 1
    lines = [
        "# approxtheory verify report",
        "",
        f"Profile {_md_code(meta['profile'])}, seed {meta['seed']}, {len(records)} claims, "
        f"approxtheory {_md_text(meta['version'])}, git {_md_text(meta.get('git') or 'unknown')}"
        + _md_text(run_note(meta))
        + ".",
        "",
        "Verdicts: "
        + _md_text(
            ", ".join(f"{k} {counts[k]}" for k in sorted(counts, key=lambda v: (_rank(v), v)))
        )
        + ".",
        "",
        *([_md_text(certified_line(records)) + ".", ""] if certified_line(records) else []),
        "## Summary",
        "",
    ]
    verdicts, papers = _verdicts(records), _papers(records)
    lines.append("| paper | " + " | ".join(_md_text(v) for v in verdicts) + " | total |")
    lines.append("|---|" + "---:|" * (len(verdicts) + 1))
    for p in papers:
        mine = [r for r in records if str(r.get("paper", "")) == p]
        cells = [str(sum(1 for r in mine if r["verdict"] == v) or "") for v in verdicts]
        lines.append(
            f"| {_md_text(_paper_label(records, p))} | " + " | ".join(cells) + f" | {len(mine)} |"
        )
    lines.append(
        "| **all** | "
        + " | ".join(f"**{counts.get(v, 0)}**" for v in verdicts)
        + f" | **{len(records)}** |"
    )
    lines += ["", "## Findings", ""]
    taken: set[str] = set()
    anchors = {i: _anchor(r["claim"], taken) for i, r in enumerate(records)}
    found = [(i, r) for i, r in _ordered(records) if r["verdict"] in FINDINGS]
    for i, r in found:
        lines.append(
            f"- **{_md_text(r['verdict'])}** [{_md_text(r['claim'])}](report.html#{anchors[i]}) "
            f"({_md_text(r.get('paper', ''))}): {_md_text(reason(r))}"
        )
    if not found:
        lines.append("No claim is refuted, inconsistent or not checkable.")
    lines += [
        "",
        "## Claims (findings first)",
        "",
        "| claim | statement | provenance | verdict | scope | falsified by | evidence | plot |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for _i, r in _ordered(records):
        plots = " ".join(_md_link(Path(p).stem, p) for p in r.get("plots", []))
        ev = _md_text(tidy_numbers(str(r["evidence"])))
        ev += _md_figures(r)
        if r.get("covered"):
            ev += f" *Covered:* {_md_text(tidy_numbers(str(r['covered'])))}"
        if r.get("volatile"):
            ev += " *This run:* " + _md_text(
                "; ".join(f"{k}: {fmt_value(v)}" for k, v in r["volatile"].items())
            )
        if r.get("witness") is not None and r["verdict"] in ("refuted", "inconsistent"):
            ev += f" *Witness:* {_md_code(r['witness'])}"
        lines.append(
            f"| {_md_text(r['claim'])} | {_md_text(r['statement'])} | "
            f"{_md_text(r['provenance'])} | **{_md_text(r['verdict'])}**"
            + (f" ({_md_text(certified_note(r))})" if certified_note(r) else "")
            + (f" ({_md_text(_scale(r))})" if _scale(r) else "")
            + " | "
            f"{_md_text(r.get('scope', ''))} | {_md_text(_falsified(r, meta))} | {ev} | {plots} |"
        )
    lines += _md_certified(records)
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------------- HTML


def _csp() -> str:
    import base64
    import hashlib

    digest = base64.b64encode(hashlib.sha256(_SCRIPT.encode("utf-8")).digest()).decode("ascii")
    return (
        "default-src 'none'; img-src 'self' file: data:; style-src 'unsafe-inline'; "
        f"script-src 'sha256-{digest}'; base-uri 'none'; form-action 'none'"
    )


def _js_number(x: float | None) -> str:
    """``x`` as text JavaScript's ``Number()`` reads back (``""`` for none or nan: sorted last)."""
    if x is None or x != x:
        return ""
    if x in (float("inf"), float("-inf")):
        return "Infinity" if x > 0 else "-Infinity"
    return repr(x)


def _badge(verdict) -> str:
    v = str(verdict)
    return f'<span class=badge style="background:{_BADGE.get(v, "#555")}">{html.escape(v)}</span>'


def _figures_html(r: dict) -> str:
    e = html.escape
    out = ""
    figs = figures(r)
    if figs:
        out += (
            "<table class=figs>"
            + "".join(f"<tr><td>{e(n)}</td><td class=v>{e(v)}</td></tr>" for n, v in figs)
            + "</table>"
        )
    cells = certified_rows(r)
    if cells:
        out += (
            '<table class="figs cert"><tr>'
            + "".join(f"<td>{e(h)}</td>" for h in _CERT_HEAD)
            + "</tr>"
            + "".join(
                "<tr>" + "".join(f"<td class=v>{e(c)}</td>" for c in row) + "</tr>" for row in cells
            )
            + "</table>"
        )
    slopes = _slope_rows(r)
    if slopes:
        out += (
            "<table class=figs><tr><td>slope</td><td>fitted</td><td>95% CI</td>"
            "<td>predicted</td><td>in CI</td></tr>"
            + "".join(
                "<tr>" + "".join(f"<td class=v>{e(c)}</td>" for c in s) + "</tr>" for s in slopes
            )
            + "</table>"
        )
    return out


def render_html(records: Sequence[dict], meta: dict, formulas: dict | None = None) -> str:
    """The ``verify`` report as one self-contained HTML page (no network, no external asset):
    counts per paper and verdict, the findings with a one-line reason each, then one row per
    claim, the findings first, with filters by paper, verdict and scope, a search, a sort and a
    permalink per claim (``#claim-ID``); evidence as a table of named figures; plots linked at
    full size; ``formulas`` (claim id -> :func:`formulas_of`'s entry) rendered as MathML.

    Every text of a record is escaped; the page's one script is static (it reads the rows'
    data-attributes) and the only one the page's Content-Security-Policy lets run."""
    formulas = formulas or {}
    taken: set[str] = set()
    anchors = {i: _anchor(r["claim"], taken) for i, r in enumerate(records)}
    rows = [_html_row(i, r, anchors[i], meta, formulas) for i, r in _ordered(records)]
    verdicts, papers = _verdicts(records), _papers(records)
    summary = _html_summary(records, verdicts, papers)
    findings = _html_findings(records, anchors)
    controls = _html_controls(records, verdicts, papers)
    head = _html_head(records, meta)
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{_csp()}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>approxtheory verify report</title>
<style>{_CSS}</style></head><body>
<h1>approxtheory verify report</h1><p>{head}</p>
<h2 id=summary-h>Summary</h2>
{chr(10).join(summary)}
<h2 id=findings-h>Findings</h2>
{findings}
<h2 id=claims-h>Claims</h2>
{controls}
<table id=claims><thead><tr><th>claim</th><th>statement</th><th>prov&shy;enance</th><th>verdict</th>
<th>scope</th><th>falsified by</th><th>evidence</th><th>plot</th></tr></thead>
<tbody>
{chr(10).join(rows)}
</tbody></table>
<script type="module">{_SCRIPT}</script>
</body></html>
"""


def _html_row(i: int, r: dict, aid: str, meta: dict, formulas: dict) -> str:
    """One claim's row of the HTML report (``aid``: its anchor)."""
    e = html.escape
    verdict = str(r["verdict"])
    plots = "".join(
        f'<a href="{e(p)}" target="_blank" title="full size">'
        f'<img src="{e(p)}" alt="{e(Path(p).stem)}" loading="lazy"></a>'
        for p in r.get("plots", [])
    )
    csvs = " ".join(f'<a href="{e(p)}">{e(Path(p).name)}</a>' for p in r.get("csv", []))
    cov = (
        f"<details><summary>covered</summary>{e(tidy_numbers(str(r['covered'])))}</details>"
        if r.get("covered")
        else ""
    )
    slack = _float(r.get("slack"))
    return (
        f'<tr id="{aid}" data-claim="{e(str(r["claim"]))}" data-paper="{e(str(r["paper"]))}"'
        f' data-verdict="{e(verdict)}" data-scope="{e(_scope_kind(r))}" data-order="{i}"'
        f' data-rank="{_rank(verdict)}"'
        f' data-slack="{_js_number(slack)}">'
        f'<td><b>{e(str(r["claim"]))}</b><a class=perma href="#{aid}" title="permalink">#</a>'
        f"<br><small>{e(str(r['paper']))}</small></td>"
        f"<td>{e(str(r['statement']))}{_formula_html(formulas.get(str(r['claim'])))}</td>"
        f"<td>{e(str(r['provenance']))}</td>"
        f"<td>{_badge(verdict)}"
        + (f"<br><small>{e(certified_note(r))}</small>" if certified_note(r) else "")
        + (f"<br><small>{e(_scale(r))}</small>" if _scale(r) else "")
        + f"</td><td>{e(str(r.get('scope', '')))}</td>"
        f"<td>{e(_falsified(r, meta))}</td>"
        f"<td>{e(tidy_numbers(str(r['evidence'])))}{_figures_html(r)}{cov}"
        + (f"<div class=lbl>data: {csvs}</div>" if csvs else "")
        + f"</td><td class=plots>{plots}</td></tr>"
    )


def _html_summary(records: Sequence[dict], verdicts: list[str], papers: list[str]) -> list[str]:
    """The summary table's lines: counts per paper and verdict, as filter buttons."""
    e = html.escape
    summary = [
        "<table id=summary><tr><th>paper</th>"
        + "".join(f"<th class=n>{_badge(v)}</th>" for v in verdicts)
        + "<th class=n>total</th></tr>"
    ]
    for p in papers:
        mine = [r for r in records if str(r.get("paper", "")) == p]
        cells = []
        for v in verdicts:
            n = sum(1 for r in mine if str(r["verdict"]) == v)
            cells.append(
                f'<td class=n><button type=button class=cnt data-paper="{e(p)}" '
                f'data-verdict="{e(v)}">{n}</button></td>'
                if n
                else "<td class=n></td>"
            )
        summary.append(
            f'<tr data-paper="{e(p)}"><td>{e(_paper_label(records, p))}</td>'
            + "".join(cells)
            + f'<td class=n><button type=button class=cnt data-paper="{e(p)}">{len(mine)}'
            "</button></td></tr>"
        )
    tot = "".join(
        f'<td class=n><button type=button class=cnt data-verdict="{e(v)}">'
        f"{sum(1 for r in records if str(r['verdict']) == v)}</button></td>"
        for v in verdicts
    )
    summary.append(f"<tr class=all><td>all</td>{tot}<td class=n>{len(records)}</td></tr></table>")
    if certified_line(records):
        summary.append(f"<p id=certified>{e(certified_line(records))}.</p>")
    return summary


def _html_findings(records: Sequence[dict], anchors: dict[int, str]) -> str:
    """The findings list, a one-line reason each (or the line saying there are none)."""
    e = html.escape
    found = [(i, r) for i, r in _ordered(records) if r["verdict"] in FINDINGS]
    findings = (
        "<ol id=findings>"
        + "".join(
            f'<li>{_badge(r["verdict"])} <a href="#{anchors[i]}"><b>{e(str(r["claim"]))}</b></a> '
            f"<small>({e(str(r['paper']))})</small>: {e(reason(r))}</li>"
            for i, r in found
        )
        + "</ol>"
        if found
        else "<p id=findings>No claim is refuted, inconsistent or not checkable.</p>"
    )

    return findings


def _html_controls(records: Sequence[dict], verdicts: list[str], papers: list[str]) -> str:
    """The filter, search and sort controls above the claims table."""
    e = html.escape

    def options(name: str, values: list[str], labels: list[str]) -> str:
        return f'<option value="">every {name}</option>' + "".join(
            f'<option value="{e(v)}">{e(lab)}</option>' for v, lab in zip(values, labels)
        )

    scopes = sorted({_scope_kind(r) for r in records})
    controls = (
        "<div id=controls>"
        "<label>paper <select id=f-paper>"
        + options("paper", papers, [_paper_label(records, p) for p in papers])
        + "</select></label>"
        + f"<label>verdict <select id=f-verdict>{options('verdict', verdicts, verdicts)}"
        "</select></label>"
        f"<label>scope <select id=f-scope>{options('scope', scopes, scopes)}</select></label>"
        '<label>search <input id=f-q type=search placeholder="id, words, figures"></label>'
        "<label>sort <select id=f-sort>"
        '<option value="findings">findings first</option>'
        '<option value="catalogue">catalogue order</option>'
        '<option value="claim">claim id</option>'
        '<option value="paper">paper</option>'
        '<option value="slack">slack (smallest first)</option>'
        "</select></label>"
        "<button type=button id=f-reset>show all</button>"
        "<span id=shown></span></div>"
    )
    return controls


def _html_head(records: Sequence[dict], meta: dict) -> str:
    """The line under the title: profile, seed, claim count, version, git, wall time."""
    e = html.escape
    head = (
        f"Profile <code>{e(str(meta['profile']))}</code>, seed {e(str(meta['seed']))}, "
        f"{len(records)} claims, approxtheory {e(str(meta['version']))}, "
        f"git {e(str(meta.get('git') or 'unknown'))}" + e(run_note(meta))
    )
    return head
