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

from .io import atomic_write_bytes, atomic_write_text

__all__ = [
    "write_csv",
    "read_csv",
    "plot_from_csv",
    "slope_plot",
    "render_markdown",
    "render_html",
    "STYLE",
]

STYLE = Path(__file__).with_name("plot.mplstyle")


def write_csv(path: Path, rows: Sequence[dict]) -> Path:
    """Write ``rows`` as a CSV (columns in first-seen order; atomic) and return the path."""
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
    return atomic_write_text(path, buf.getvalue())


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


def _plt():
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def _save(fig, path: Path):
    buf = io.BytesIO()
    fmt = path.suffix.lstrip(".") or "png"
    meta = (
        {"Software": None}
        if fmt == "png"
        else {"Creator": None, "Producer": None, "CreationDate": None}
    )
    fig.savefig(buf, format=fmt, metadata=meta)
    atomic_write_bytes(path, buf.getvalue())


def plot_from_csv(csv_path: Path, spec: dict, out: Path) -> Path:
    """Measurements as markers joined by lines, the claimed bound as a dashed line, log-log by
    default. ``spec``: x, y (list of columns), optional bound, group, title, xlabel, ylabel,
    logx, logy."""
    plt = _plt()
    rows = read_csv(csv_path)
    x, ys, bound, group = spec["x"], spec["y"], spec.get("bound"), spec.get("group")
    # a numeric x axis when any x is a number (rows without one are left out), else the rows
    # that have the column: never a sort of mixed types or a missing column
    if any(isinstance(r.get(x), float) for r in rows):
        rows = [r for r in rows if isinstance(r.get(x), float)]
    else:
        rows = [r for r in rows if x in r]
    groups = sorted({r.get(group, "") for r in rows}, key=str) if group else [None]
    with plt.style.context(str(STYLE)):
        fig, ax = plt.subplots()
        for gi, gv in enumerate(groups):
            sub = [r for r in rows if group is None or r.get(group, "") == gv]
            sub.sort(key=lambda r: r[x])
            color = f"C{gi % 7}"
            lab = (
                ""
                if group is None
                else f" {group}={gv:g}"
                if isinstance(gv, float)
                else f" {group}={gv}"
            )
            for yi, y in enumerate(ys):
                xs = [r[x] for r in sub if isinstance(r.get(y), float)]
                vs = [r[y] for r in sub if isinstance(r.get(y), float)]
                if spec.get("logy", True):
                    pts = [(a, b) for a, b in zip(xs, vs) if b > 0]
                    xs, vs = [p[0] for p in pts], [p[1] for p in pts]
                ax.plot(xs, vs, marker="os^v"[yi % 4], color=color, alpha=0.9, label=f"{y}{lab}")
            if bound:
                bx = [r[x] for r in sub if isinstance(r.get(bound), float) and r[bound] > 0]
                bv = [r[bound] for r in sub if isinstance(r.get(bound), float) and r[bound] > 0]
                ax.plot(bx, bv, linestyle="--", color=color, label=f"claimed bound{lab}")
        if spec.get("logx", True):
            ax.set_xscale("log")
        if spec.get("logy", True):
            ax.set_yscale("log")
        ax.set_xlabel(spec.get("xlabel", x))
        ax.set_ylabel(spec.get("ylabel", ", ".join(ys)))
        ax.set_title(spec.get("title", ""))
        if ax.get_legend_handles_labels()[0]:  # nothing to label: no legend (and no warning)
            ax.legend()
        _save(fig, out)
        plt.close(fig)
    return out


def slope_plot(slopes: Sequence[dict], title: str, out: Path) -> Path:
    """Fitted exponents with their confidence intervals next to the predicted ones."""
    plt = _plt()
    with plt.style.context(str(STYLE)):
        fig, ax = plt.subplots(figsize=(5.2, 0.6 + 0.5 * len(slopes)))
        for i, s in enumerate(slopes):
            ax.errorbar(
                [s["fitted"]],
                [i],
                xerr=[[s["fitted"] - s["lo"]], [s["hi"] - s["fitted"]]],
                fmt="o",
                color="C0",
                capsize=3,
                label="fitted (CI)" if i == 0 else None,
            )
            if s.get("predicted") is not None:
                ax.plot(
                    [s["predicted"]],
                    [i],
                    marker="x",
                    color="C1",
                    markersize=8,
                    linestyle="none",
                    label="predicted" if i == 0 else None,
                )
        ax.set_yticks(range(len(slopes)), [s["label"] for s in slopes])
        ax.set_xlabel("exponent")
        ax.set_title(title)
        ax.legend()
        _save(fig, out)
        plt.close(fig)
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
            parts.append("declared mutants: none of " + ", ".join(m["name"] for m in ran))
    elif r.get("mutants"):
        parts.append("declared (not run): " + ", ".join(r["mutants"]))
    cms = r.get("claim_mutants")
    if meta.get("mutants") and cms is not None:
        if cms:
            k = sum(m["flips"] for m in cms)
            parts.append(
                f"claim mutants flipped {k}/{len(cms)} ("
                + ", ".join(f"{m['name']} {'flipped' if m['flips'] else 'survived'}" for m in cms)
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
    if _slack(r):
        parts.append(_slack(r))
    return "; ".join(parts)


def render_markdown(records: Sequence[dict], meta: dict) -> str:
    """The ``verify`` report as markdown: counts per verdict, then one row per claim."""
    counts: dict[str, int] = {}
    for r in records:
        counts[r["verdict"]] = counts.get(r["verdict"], 0) + 1
    lines = [
        "# approxtheory verify report",
        "",
        f"Profile {_md_code(meta['profile'])}, seed {meta['seed']}, {len(records)} claims, "
        f"approxtheory {_md_text(meta['version'])}, git {_md_text(meta.get('git') or 'unknown')}, "
        f"{meta['wall_s']:.1f} s.",
        "",
        "Verdicts: " + _md_text(", ".join(f"{k} {v}" for k, v in sorted(counts.items()))) + ".",
        "",
        "| claim | statement | provenance | verdict | scope | falsified by | evidence | plot |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in records:
        plots = " ".join(_md_link(Path(p).stem, p) for p in r.get("plots", []))
        ev = _md_text(r["evidence"])
        if r.get("covered"):
            ev += f" *Covered:* {_md_text(r['covered'])}"
        if r.get("volatile"):
            ev += " *This run:* " + _md_text(
                "; ".join(f"{k}: {v}" for k, v in r["volatile"].items())
            )
        if r.get("witness") is not None and r["verdict"] in ("refuted", "inconsistent"):
            ev += f" *Witness:* {_md_code(r['witness'])}"
        lines.append(
            f"| {_md_text(r['claim'])} | {_md_text(r['statement'])} | "
            f"{_md_text(r['provenance'])} | **{_md_text(r['verdict'])}**"
            + (f" ({_md_text(_scale(r))})" if _scale(r) else "")
            + " | "
            f"{_md_text(r.get('scope', ''))} | {_md_text(_falsified(r, meta))} | {ev} | {plots} |"
        )
    return "\n".join(lines) + "\n"


def render_html(records: Sequence[dict], meta: dict) -> str:
    """The ``verify`` report as one self-contained HTML page with the plots linked inline."""
    e = html.escape
    rows = []
    for r in records:
        plots = " ".join(
            f'<a href="{e(p)}"><img src="{e(p)}" width="260"></a>' for p in r.get("plots", [])
        )
        csvs = " ".join(f'<a href="{e(p)}">{e(Path(p).name)}</a>' for p in r.get("csv", []))
        wit = ""
        if r.get("witness") is not None and r["verdict"] in ("refuted", "inconsistent"):
            wit = f"<br><b>Witness:</b> <code>{e(str(r['witness']))}</code>"
        cov = f"<br><i>Covered:</i> {e(r['covered'])}" if r.get("covered") else ""
        if r.get("volatile"):
            cov += "<br><i>This run:</i> " + e(
                "; ".join(f"{k}: {v}" for k, v in r["volatile"].items())
            )
        rows.append(
            f"<tr><td><b>{e(r['claim'])}</b><br><small>{e(r['paper'])}</small></td>"
            f"<td>{e(r['statement'])}</td><td>{e(r['provenance'])}</td>"
            f'<td><span class=badge style="background:{_BADGE.get(r["verdict"], "#555")}">'
            f"{e(r['verdict'])}</span>"
            + (f"<br><small>{e(_scale(r))}</small>" if _scale(r) else "")
            + f"</td><td>{e(r.get('scope', ''))}</td>"
            f"<td>{e(_falsified(r, meta))}</td>"
            f"<td>{e(r['evidence'])}{cov}{wit}<br>{csvs}</td>"
            f"<td>{plots}</td></tr>"
        )
    head = (
        f"Profile <code>{e(meta['profile'])}</code>, seed {meta['seed']}, "
        f"{len(records)} claims, approxtheory {e(meta['version'])}, "
        f"git {e(meta.get('git') or 'unknown')}, {meta['wall_s']:.1f} s"
    )
    return f"""<!doctype html>
<html><head><meta charset="utf-8"><title>approxtheory verify report</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 1.5em; }}
table {{ border-collapse: collapse; width: 100%; }}
td, th {{ border: 1px solid #ddd; padding: 6px; vertical-align: top; font-size: 13px; }}
th {{ background: #f4f4f4; text-align: left; }}
.badge {{ color: white; padding: 2px 6px; border-radius: 4px; white-space: nowrap; }}
</style></head><body>
<h1>approxtheory verify report</h1><p>{head}</p>
<table><tr><th>claim</th><th>statement</th><th>provenance</th><th>verdict</th><th>scope</th>
<th>falsified by</th><th>evidence</th><th>plot</th></tr>
{chr(10).join(rows)}
</table></body></html>
"""
