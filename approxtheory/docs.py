"""Generate the documentation's data pages: ``docs/claims.md`` from the catalogue and
``docs/findings/index.md`` from a committed ``verify`` run (neither page is edited by hand).

The findings come from ``docs/findings/verdicts.json``, a copy of one run's ``verdicts.json``
(``approxtheory docs --findings report/verdicts.json`` makes it and records the date of the run);
the catalogue page shows its verdicts in a column. Formulas are written as MathML (sympy's
presentation printer), which browsers render natively: the site needs no network to show them.

Run ``approxtheory docs`` to regenerate the pages, ``approxtheory docs --check`` to test that they
are fresh.
"""

from __future__ import annotations

import functools
import html
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import sympy as sp

from .catalogue import PAPERS, Claim, claims
from .catalogue._claim import FORMER_TITLES, PROVENANCE_MEANING
from .errors import ApproxTheoryError
from .findings import MAX_VERDICTS_BYTES as _MAX_VERDICTS_BYTES
from .findings import _bad, load_findings, read_findings
from .io import atomic_write_bytes, atomic_write_json, atomic_write_text, read_json_entry
from .report import FINDINGS as _REPORT_FINDINGS
from .report import VERDICT_ORDER as _REPORT_ORDER
from .trail import Trail
from .trail import trails as all_trails

__all__ = [
    "render_claims_markdown",
    "render_trail_line",
    "render_findings_markdown",
    "DEFAULT_CLAIMS_PAGE",
    "FINDINGS_DIR",
    "FINDINGS_VERDICTS",
    "FINDINGS_PAGE",
    "VERDICT_ORDER",
    "findings_paths",
    "load_findings",
    "read_findings",
    "write_claims_page",
    "write_findings",
    "formula_mathml",
    "render_notebook_markdown",
    "claim_html",
    "execute_notebook",
    "write_notebook_pages",
]

DEFAULT_CLAIMS_PAGE = Path("docs") / "claims.md"
#: beside the claims page: the committed run (a copy of a ``verify`` run's verdicts.json) and the
#: page generated from it
FINDINGS_DIR = "findings"
FINDINGS_VERDICTS = "verdicts.json"
FINDINGS_PAGE = "index.md"

#: the verdict vocabulary of ``verify``, the findings first, and the verdicts the findings page
#: lists first with their one-line reason: the report's own order (one place)
VERDICT_ORDER = _REPORT_ORDER
_NOTABLE = _REPORT_FINDINGS


#: markdown syntax characters that plain catalogue text may contain; each is written escaped so
#: the page shows the text as stored (``[W|b][W|b]ᵀ`` is not a reference link, ``a*b*c`` is not
#: emphasis, ``<u`` is not an HTML tag, ``$x$`` is not math for a math extension).
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]{}#$])")


def _text(text: str) -> str:
    """Plain catalogue text as markdown that renders to exactly that text.

    >>> _text("[W|b][W|b]ᵀ, a*b*, x_i <= y")
    '\\\\[W|b\\\\]\\\\[W|b\\\\]ᵀ, a\\\\*b\\\\*, x\\\\_i &lt;= y'
    """
    # one line: a line break inside the text could start a setext heading (a line of ---), a
    # list, a block quote or a code block; the rendered page collapses whitespace anyway
    text = " ".join(text.split())
    escaped = _MARKDOWN_SPECIAL.sub(r"\\\1", text.replace("&", "&amp;"))
    return escaped.replace("<", "&lt;").replace(">", "&gt;")


def _cell(text: str) -> str:
    return _text(text).replace("|", "\\|").replace("\n", " ")


def _anchor(claim_id: str) -> str:
    """The anchor of a claim's section on the catalogue page (the toc extension's slug)."""
    return claim_id.lower().replace(".", "")


# sympy's presentation MathML writes a few characters as named entities; written as numeric
# references they mean the same in HTML and XML, and ``&ExponentialE;`` (a double-struck e) is
# shown as the plain e of the papers
_ENTITIES = {"&InvisibleTimes;": "&#8290;", "&ExponentialE;": "e", "&ImaginaryI;": "i"}
_NAMED_ENTITY = re.compile(r"&[A-Za-z][A-Za-z0-9]*;")


@functools.lru_cache(maxsize=4096)
def formula_mathml(expr: sp.Basic, display: bool = False) -> str:
    r"""``expr`` as a MathML ``<math>`` element (sympy's presentation printer), which browsers
    render without a script or a network; the TeX source is its ``alttext``. Inline (the
    default) it keeps display style, so that fractions are not shrunk into the line.

    >>> print(formula_mathml(sp.Symbol("beta") ** -1))  # doctest: +ELLIPSIS
    <math alttext="\frac{1}{\beta}" displaystyle="true"><mfrac><mn>1</mn>...</mfrac></math>
    """
    if not isinstance(expr, sp.Basic):  # a string would be parsed by sympy's printers
        raise TypeError(f"formula_mathml takes a sympy expression (got {type(expr).__name__})")
    body = sp.mathml(expr, printer="presentation")
    for name, ref in _ENTITIES.items():
        body = body.replace(name, ref)
    left = _NAMED_ENTITY.findall(body)
    if left:  # a new sympy may write others: numeric references only, so say which
        raise ApproxTheoryError(f"MathML of {sp.sstr(expr)!r} has named entities {left}")
    alt = html.escape(sp.latex(expr), quote=True)
    # inline formulas keep display style (full-size fractions), as in the papers' displays
    mode = ' display="block"' if display else ' displaystyle="true"'
    return f'<math alttext="{alt}"{mode}>{body}</math>'


def _formulas_block(c) -> list[str]:
    """The formulas of a claim as one raw HTML block: markdown leaves it as written, so neither
    the MathML nor the code spans are read as markdown."""
    lines = ['<ul class="formulas">']
    for name, e in c.expressions.items():
        star = " (primary)" if name == c.primary_name and len(c.expressions) > 1 else ""
        lines.append(
            f"<li><code>{html.escape(name)}</code>{star}: {formula_mathml(e)} — "
            f"<code>{html.escape(sp.sstr(e))}</code></li>"
        )
    lines.append("</ul>")
    return lines


def claim_html(c) -> str:
    """A claim as one line of HTML with MathML formulas (its id, kind, provenance, every formula
    and where it is vacuous): what the notebook page shows where Jupyter renders the claim's
    LaTeX (:func:`execute_notebook` registers it as the claims' ``text/html``)."""
    items = "".join(
        f"<li><code>{html.escape(name)}</code> = {formula_mathml(e)}</li>"
        for name, e in c.expressions.items()
    )
    if c.vacuous_if is not None:
        items += f"<li>vacuous where {formula_mathml(c.vacuous_if)}</li>"
    head = (
        f"<p><strong>{html.escape(c.id)}</strong> ({html.escape(c.kind)}, "
        f"{html.escape(c.provenance)})</p>"
    )
    return head + (f"<ul>{items}</ul>" if items else "")


def _verdict_of(findings: Mapping | None) -> dict[str, dict]:
    if not findings:
        return {}
    return {r["claim"]: r for r in findings["verdicts"]}


def _code(text: str) -> str:
    return "`" + text.replace("`", "'") + "`"


def render_trail_line(t: Trail) -> str:
    """A claim's "checked by / built by / trained in" line on the claims page, from its trail
    (:func:`approxtheory.trail.trail`): the check function and its file, each construction and
    experiment with its file (no line numbers: the page does not go stale on every edit)."""
    checked = (
        f"{_code(t.check.name.rsplit('.', 1)[1])} in {_code(t.check.path)}"
        if t.check is not None
        else "no check"
    )

    def listed(refs) -> str:
        return ", ".join(f"{_code(r.name)} ({_code(r.path)})" for r in refs) or "—"

    return (
        f"Checked by {checked}; built by {listed(t.constructions)}; trained in "
        f"{listed(t.experiments)}."
    )


def render_claims_markdown(
    findings: Mapping | None = None, trails: Mapping[str, Trail] | None = None
) -> str:
    """The claims page (``docs/claims.md``) as markdown, from the catalogue; with ``findings``
    (:func:`load_findings`), a verdict column and a verdict line per claim from that run. Each
    claim has a "checked by / built by / trained in" line (:func:`render_trail_line`) from
    ``trails`` (claim id -> trail; by default every claim's, :func:`approxtheory.trail.trails`)."""
    if trails is None:
        trails = all_trails()
    verdicts = _verdict_of(findings)
    profile = _text(str(findings["meta"]["profile"])) if findings else ""
    out = _claims_preamble(findings)
    all_claims = claims()
    out.append(f"{len(all_claims)} claims.")
    out.append("")
    for arxiv, (short, title) in PAPERS.items():
        cs = [c for c in all_claims if c.paper == arxiv]
        former = FORMER_TITLES.get(arxiv, {})
        out += _paper_table(arxiv, short, title, former, cs, findings, verdicts)
        for c in cs:
            out += _claim_section(c, trails, verdicts, profile)
    return "\n".join(out).rstrip() + "\n"


def _claims_preamble(findings: Mapping | None) -> list[str]:
    """The claims page's title, provenance scheme and (with ``findings``) the run it shows."""
    out = [
        "# Claim catalogue",
        "",
        "<!-- Generated by `approxtheory docs` from approxtheory/catalogue; do not edit. -->",
        "",
        "Every result of the five papers, as stored in `approxtheory.catalogue`. Provenance "
        "(one scheme, `PROVENANCE_MEANING` in the catalogue): "
        + "; ".join(f"`{k}`: {v}" for k, v in PROVENANCE_MEANING.items())
        + ".",
        "",
    ]
    if findings:
        meta = findings["meta"]
        out += [
            f"The verdict column is the [{_text(str(meta['profile']))}-profile run]"
            f"({FINDINGS_DIR}/{FINDINGS_PAGE}) of revision `{_text(str(meta['git']))}`"
            f" ({_text(str(meta.get('date', 'date not recorded')))}).",
            "",
        ]
    return out


def _paper_table(
    arxiv: str,
    short: str,
    title: str,
    former: Mapping,
    cs: list[Claim],
    findings: Mapping | None,
    verdicts: Mapping,
) -> list[str]:
    """One paper's heading, earlier titles and table of claims (one row each)."""
    header = "| id | kind | provenance |" + (" verdict |" if findings else "")
    out = [
        f"## {title} (arXiv {arxiv}, `{short}`)",
        "",
        *(
            [
                "Earlier title"
                + ("s" if len(former) > 1 else "")
                + ": "
                + "; ".join(f"{v}: *{t}*" for v, t in former.items())
                + ".",
                "",
            ]
            if former
            else []
        ),
        header + " section | statement |",
        "|---" * (header.count("|") + 1) + "|",
    ]
    for c in cs:
        verdict = ""
        if findings:
            verdict = f" {_cell(verdicts[c.id]['verdict'])} |" if c.id in verdicts else " — |"
        out.append(
            f"| [{c.id}](#{_anchor(c.id)}) | {c.kind} | {c.provenance} |{verdict} "
            f"{_cell(c.section)} | {_cell(c.statement)} |"
        )
    out.append("")
    return out


def _claim_section(
    c: Claim, trails: Mapping[str, Trail], verdicts: Mapping, profile: str
) -> list[str]:
    """One claim's section: statement, trail, verdict, formulas, symbols, regime and the rest."""
    out = [
        f"### {c.id}",
        "",
        f"*{c.kind}, {c.provenance}; {_text(c.section)}.* {_text(c.statement)}",
        "",
    ]
    if c.id in trails:
        out += [render_trail_line(trails[c.id]), ""]
    if c.id in verdicts:
        r = verdicts[c.id]
        out += [
            f"Verdict ({profile} profile): "
            f"**{_text(r['verdict'])}**, scope {_text(str(r.get('scope', '')))}. "
            f"{_text(_short(r.get('evidence'), 600))}",
            "",
        ]
    if c.expressions:
        out.append("Formulas:")
        out.append("")
        out += _formulas_block(c)
        out.append("")
    if c.symbols:
        described = (f"`{n}` {_text(d)}" for n, (_s, d) in c.symbols.items())
        out.append("Symbols: " + "; ".join(described) + ".")
        out.append("")
    if c.regime:
        out.append("Regime: " + "; ".join(f"`{r.text()}`" for r in c.regime) + ".")
        out.append("")
    if c.vacuous_if is not None:
        out.append(f"Vacuous where: `{sp.sstr(c.vacuous_if)}`.")
        out.append("")
    if c.rate is not None:
        out.append(f"Rate: N(ε) ∝ (1/ε)^a with a = `{sp.sstr(c.rate_exponent())}`.")
        out.append("")
    if c.depends_on:
        out.append("Depends on: " + ", ".join(c.depends_on) + ".")
        out.append("")
    if c.notes:
        out.append(f"Notes: {_text(c.notes)}")
        out.append("")
    return out


# ---------------------------------------------------------------------------------- findings


def findings_paths(claims_page: Path | str) -> tuple[Path, Path]:
    """(the committed verdicts file, the findings page) that go with ``claims_page``: both in
    ``findings/`` beside it."""
    folder = Path(claims_page).parent / FINDINGS_DIR
    return folder / FINDINGS_VERDICTS, folder / FINDINGS_PAGE


def _short(text: Any, limit: int = 300) -> str:
    """A record's text on one line, cut at ``limit`` characters (the full text is in the run's
    report)."""
    s = " ".join(str(text or "").split())
    return s if len(s) <= limit else s[: limit - 1].rstrip() + "…"


def _scope(r: Mapping) -> str:
    """The kind of a record's scope (``full``, ``partial``, ``surrogate``, ``none``); what a
    partial or surrogate check covered is in the run's report."""
    return str(r.get("scope") or "—").split(":", 1)[0].strip()


def _slack(r: Mapping) -> str:
    v = r.get("slack")
    if isinstance(v, bool) or not isinstance(v, int | float):
        return "—"
    return f"{v:.3g}"


def _counts_table(records) -> list[str]:
    """The findings page's table of verdicts per paper."""
    out: list[str] = []
    present = [v for v in VERDICT_ORDER if any(r["verdict"] == v for r in records)]
    names = {arxiv: short for arxiv, (short, _t) in PAPERS.items()}
    out.append("| paper | " + " | ".join(present) + " | all |")
    out.append("|---" * (len(present) + 2) + "|")
    papers = list(PAPERS) + sorted({str(r.get("paper")) for r in records} - set(PAPERS))
    for arxiv in papers:
        rs = [r for r in records if str(r.get("paper")) == arxiv]
        if not rs:
            continue
        counts = [sum(r["verdict"] == v for r in rs) for v in present]
        label = f"{names[arxiv]} ({arxiv})" if arxiv in names else _cell(arxiv)
        out.append(
            f"| {label} | " + " | ".join(str(n) if n else "" for n in counts) + f" | {len(rs)} |"
        )
    totals = [sum(r["verdict"] == v for r in records) for v in present]
    out.append("| **all** | " + " | ".join(f"**{n}**" for n in totals) + f" | **{len(records)}** |")
    out.append("")
    return out


def render_findings_markdown(findings: Mapping) -> str:
    """The findings page (``docs/findings/index.md``) from a committed run: where it comes from,
    counts per paper and verdict, the refuted, inconsistent and not-checkable claims first with
    their reasons, then every claim."""
    meta, records = findings["meta"], findings["verdicts"]
    out = _findings_intro(meta, records)
    out += _counts_table(records)
    out += _notable_sections(records)
    out += _every_claim_section(records)
    out += _trained_scale_section(records)
    out += _mutants_section(findings.get("mutants"))
    out += _SHIPPED_DATA
    return "\n".join(out).rstrip() + "\n"


def _findings_intro(meta, records: list) -> list[str]:
    """The findings page's title, where its run comes from, how to replace it, and the counts'
    heading."""
    profile = _text(str(meta["profile"]))
    libs = meta.get("libraries") if isinstance(meta.get("libraries"), dict) else {}
    versions = ", ".join(f"{_text(str(k))} {_text(str(v))}" for k, v in sorted(libs.items()))
    mutants = "with" if meta.get("mutants") else "without"
    return [
        f"# Findings: the {profile} profile",
        "",
        f"<!-- Generated by `approxtheory docs` from {FINDINGS_DIR}/{FINDINGS_VERDICTS}; "
        "do not edit. -->",
        "",
        f"What `approxtheory verify --profile {profile}` found, {mutants} `--mutants`: "
        f"revision `{_text(str(meta['git']))}`, "
        f"approxtheory {_text(str(meta.get('version', '?')))}, "
        f"run on {_text(str(meta.get('date', 'a date not recorded')))}, seed "
        f"{_text(str(meta.get('seed', '?')))}, python {_text(str(meta.get('python', '?')))}"
        + (f", {versions}" if versions else "")
        + f"; {len(records)} claims. This page is generated from "
        f"`docs/{FINDINGS_DIR}/{FINDINGS_VERDICTS}`, a copy of that run's `verdicts.json`; "
        "to replace it with a new run:",
        "",
        "```bash",
        f"approxtheory verify --profile {profile} --out report",
        "approxtheory docs --findings report/verdicts.json",
        "```",
        "",
        "The [getting-started page](../getting-started.md) explains the verdicts and scopes; "
        "`report/report.html` of a run holds every record in full, with its plots and data.",
        "",
        "## Counts",
        "",
    ]


def _notable_sections(records: list) -> list[str]:
    """One section per notable verdict (refuted, inconsistent, not checkable) with its claims and
    their reasons."""
    out: list[str] = []
    for verdict in _NOTABLE:
        rs = [r for r in records if r["verdict"] == verdict]
        if not rs:
            continue
        out += [
            f"## {verdict.capitalize()} ({len(rs)})",
            "",
            "| claim | scope | why |",
            "|---|---|---|",
        ]
        for r in rs:
            out.append(
                f"| {_claim_link(r['claim'])} | {_cell(_scope(r))} | "
                f"{_cell(_short(r.get('evidence'), 400))} |"
            )
        out.append("")
    return out


def _every_claim_section(records: list) -> list[str]:
    """The table of every claim: verdict, scope, slack and evidence."""
    out = [
        "## Every claim",
        "",
        "Scope: `full` (the claim as the paper states it), `partial` (a named part of it) or "
        "`surrogate` (a stand-in for it); the run's report says which part. Slack: the claimed "
        "bound over the worst case found (1 = tight), where the check measures one.",
        "",
        "| claim | verdict | scope | slack | evidence |",
        "|---|---|---|---|---|",
    ]
    for r in records:
        out.append(
            f"| {_claim_link(r['claim'])} | {_cell(r['verdict'])} | "
            f"{_cell(_scope(r))} | {_slack(r)} | "
            f"{_cell(_short(r.get('evidence'), 200))} |"
        )
    return out


#: the findings page's last section: the shipped data and the written-up findings
_SHIPPED_DATA = [
    "",
    "## Shipped data and written-up findings",
    "",
    "- `approxtheory/data/headcount_synthetic_table2.csv`: the head-count paper's Table 2 "
    "(validation NMSE of its synthetic retrieval task), the magnitude the trained head-count "
    "checks are held to; `approxtheory/data/headcount_real_data_tables.csv`: its MS MARCO "
    "and CIFAR-10 tables (HC-P11). Both are the paper's reported numbers, described in "
    "`approxtheory/data/README.md`.",
    "- [Head-count recipe: the paper's magnitude](headcount-recipe.md): the training recipe "
    "that reaches Table 2's NMSE, measured.",
    "",
]


def _mutants_section(m: Mapping | None) -> list[str]:
    """What the shipped ``verify --mutants`` run caught (``findings/mutants.json``)."""
    if not m:
        return []
    s, meta = m["summary"], m["meta"]
    out = [
        "",
        "## What the checks can fail on (`verify --mutants`)",
        "",
        f"From `verify --profile {_text(str(meta.get('profile', '?')))} --mutants` at revision "
        f"`{_text(str(meta.get('git', '?')))}` (`docs/{FINDINGS_DIR}/mutants.json`; "
        "`approxtheory docs --mutants report/verdicts.json` replaces it). Each passing verdict is "
        "held to its mutants: a declared one must flip it, one rate direction, the required "
        "scale, regime, constant and bound-side (`kind:flip`) mutants, one of the two pivots of "
        "each formula read at one value of a symbol only, or the sign for a verdict that tests "
        "a direction only; a mutant is caught only by `refuted` or `inconsistent`. Required "
        "mutants caught: "
        f"**{s['required_caught']} of {s['required']}**.",
        "",
    ]
    rows = [
        ("surviving (the verdict was downgraded)", s.get("surviving", {})),
        ("check errors on a mutant (defects)", s.get("errors", {})),
        ("expressions no run of the check read", s.get("unread", {})),
        ("formulas read at one value of a symbol only (pivot mutants made)", s.get("blind", {})),
    ]
    for title, d in rows:
        if d:
            out.append(
                f"- {title}: "
                + "; ".join(f"{_claim_link(c)}: {_cell(', '.join(v))}" for c, v in d.items())
            )
    if s.get("downgraded"):
        out.append(
            "- downgraded: "
            + ", ".join(f"{_claim_link(c)} ({_cell(v)})" for c, v in s["downgraded"].items())
        )
    return out


def _num(v) -> str:
    if isinstance(v, float):
        return f"{v:.3g}"
    if isinstance(v, list):
        return "/".join(_num(x) for x in v)
    return str(v)


def _trained_scale_section(records) -> list[str]:
    """The trained claims' scale records: per claim and experiment, what was run (grid, steps,
    seeds, where the cells came from) beside what the paper reports, and per control cell of the
    training-adequacy gate what was reached against the paper's figure."""
    rows = [r for r in records if isinstance(r.get("scale"), dict) and r["scale"]]
    if not rows:
        return []
    out = [
        "",
        "## Trained claims: what was run against what the paper ran",
        "",
        "Every trained verdict passes the training-adequacy gate first (`proofs_check/_gate.py`). "
        "Where an experiment has a decisive grid whose cells are shipped in "
        "`experiments/results/` (computed once, committed, fingerprinted by their cell code), "
        "every profile reads them; the *cells* column says so.",
        "",
        "| claim | verdict | experiment | run | cells | gate: reached (paper) |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        for name, sc in r["scale"].items():
            if not isinstance(sc, dict):
                continue
            run: dict = sc["run"] if isinstance(sc.get("run"), dict) else {}
            run_txt = ", ".join(f"{k} {_num(v)}" for k, v in run.items() if v is not None)
            where = str(sc.get("source") or "not recorded")
            gate = []
            cells: dict = sc["cells"] if isinstance(sc.get("cells"), dict) else {}
            for label, c in cells.items():
                if not isinstance(c, dict):
                    continue
                paper = c.get("paper")
                gate.append(
                    f"{label}: {_num(c.get('reached'))}"
                    + (f" ({_num(paper)})" if paper is not None else "")
                )
            out.append(
                f"| {_claim_link(r['claim'])} | {_cell(r['verdict'])} | {_cell(name)} | "
                f"{_cell(_short(run_txt, 200))} | {_cell(_short(where, 160))} | "
                f"{_cell(_short('; '.join(gate), 200))} |"
            )
    return out


def _claim_link(claim_id: str) -> str:
    known = {c.id for c in claims()}
    if claim_id in known:
        return f"[{claim_id}](../claims.md#{_anchor(claim_id)})"
    return _cell(claim_id)


def write_claims_page(path: Path | str = DEFAULT_CLAIMS_PAGE) -> Path:
    """Write the claims page atomically to ``path`` and return it; with a committed run in
    ``findings/`` beside it (:func:`findings_paths`), also its verdict column and the findings
    page."""
    path = Path(path)
    verdicts, page = findings_paths(path)
    findings = load_findings(verdicts)
    atomic_write_text(path, render_claims_markdown(findings))
    if findings is not None:
        atomic_write_text(page, render_findings_markdown(findings))
    return path


def write_mutants(source: Path | str, claims_page: Path | str = DEFAULT_CLAIMS_PAGE) -> Path:
    """Write the summary of the ``verify --mutants`` run at ``source`` (its verdicts.json) to
    ``findings/mutants.json`` beside ``claims_page`` and regenerate the pages; returns its path."""
    from .findings import MUTANTS_FILE, mutant_findings

    source = Path(source)
    data = read_json_entry(source, max_bytes=_MAX_VERDICTS_BYTES)
    if data is None:
        raise _bad(source, "missing, not a regular file, or not strict JSON of at most 16 MiB")
    target = findings_paths(claims_page)[0].parent / MUTANTS_FILE
    atomic_write_json(target, mutant_findings(data, str(source)))
    write_claims_page(claims_page)
    return target


def write_findings(source: Path | str, claims_page: Path | str = DEFAULT_CLAIMS_PAGE) -> Path:
    """Copy the verdicts.json at ``source`` (a ``verify`` run) into ``findings/`` beside
    ``claims_page``, with the run's date (the file's modification date, UTC) added to its meta,
    and regenerate both pages; returns the copy's path."""
    import datetime
    import os

    source = Path(source)
    data = read_json_entry(source, max_bytes=_MAX_VERDICTS_BYTES)
    if data is None:
        raise _bad(source, "missing, not a regular file, or not strict JSON of at most 16 MiB")
    findings = read_findings(data, str(source))
    meta = dict(findings["meta"])
    if "date" not in meta:  # a copy of a copy keeps the run's date
        mtime = os.stat(source).st_mtime
        meta["date"] = (
            datetime.datetime.fromtimestamp(mtime, datetime.timezone.utc).date().isoformat()
        )
    verdicts, _page = findings_paths(claims_page)
    atomic_write_json(verdicts, {"meta": meta, "verdicts": findings["verdicts"]})
    write_claims_page(claims_page)
    return verdicts


# --------------------------------------------------------------------------------- notebooks

NOTEBOOKS_DIR = "notebooks"


def render_notebook_markdown(nb: Mapping, name: str) -> tuple[str, dict[str, bytes]]:
    """An executed notebook (its JSON, as nbformat reads it) as a markdown page with its outputs,
    and the images that page shows (``{relative path: PNG bytes}``, under ``NAME_files/``).

    Markdown cells are copied, code cells become ``python`` blocks and their outputs follow:
    streams as ``text`` blocks, PNG figures as images, a result as its HTML where it has one (a
    claim or a sympy value run by :func:`execute_notebook`: MathML), else as its text, else as
    its LaTeX source. The page's text depends only on the cells and on the outputs' text, not on
    the bytes of a figure."""
    import base64

    out = [
        f"<!-- Generated by `approxtheory docs --notebooks` from {name}.ipynb (executed); "
        "do not edit. -->",
        "",
    ]
    images: dict[str, bytes] = {}

    def joined(s) -> str:  # nbformat stores multi-line strings as lists of lines
        return "".join(s) if isinstance(s, list) else str(s)

    def source(cell) -> str:
        return joined(cell.get("source", ""))

    def block(lang: str, text: str) -> list[str]:
        text = text.rstrip("\n")
        longest = max((len(m) for m in re.findall(r"`{3,}", text)), default=2)
        fence = "`" * (longest + 1)
        # outputs carry the class nb-output (docs/stylesheets/notebook.css sets them apart); the
        # cells' code is shown as written (a formatter of markdown code blocks skips the braces)
        role = "nb-input" if lang == "python" else "nb-output"
        opening = f"{fence}{{.{lang} .{role}}}"
        return [opening, text, fence, ""]

    for i, cell in enumerate(nb.get("cells", [])):
        kind = cell.get("cell_type")
        if kind == "markdown":
            out += [source(cell).rstrip("\n"), ""]
        elif kind == "code":
            if source(cell).strip():
                out += block("python", source(cell))
            stream: list[str] = []  # consecutive stream outputs are one block
            for j, o in enumerate(cell.get("outputs", [])):
                otype = o.get("output_type")
                if otype == "stream":
                    stream.append(joined(o.get("text", "")))
                    continue
                if stream:
                    out += block("text", "".join(stream))
                    stream = []
                if otype in ("execute_result", "display_data"):
                    data = o.get("data", {})
                    if "image/png" in data:
                        rel = f"{name}_files/cell{i}_output{j}.png"
                        images[rel] = base64.b64decode(joined(data["image/png"]))
                        out += [f"![output of cell {i}]({rel})", ""]
                        continue
                    if "text/html" in data:  # one raw HTML block: no blank line inside
                        body = " ".join(joined(data["text/html"]).split())
                        out += [f'<div class="nb-output">{body}</div>', ""]
                    elif "text/plain" in data:
                        out += block("text", joined(data["text/plain"]))
                    elif "text/latex" in data:
                        out += block("latex", joined(data["text/latex"]))
                elif otype == "error":
                    raise ApproxTheoryError(
                        f"{name}.ipynb: cell {i} raised {o.get('ename')}: {o.get('evalue')}"
                    )
            if stream:
                out += block("text", "".join(stream))
    return "\n".join(out).rstrip() + "\n", images


#: run before a notebook's first cell by :func:`execute_notebook` (and dropped from it): claims
#: and sympy values also get a ``text/html`` output, their formulas as MathML, so that the page
#: shows them rendered without a script (Jupyter itself still renders their LaTeX)
_NOTEBOOK_SETUP = """\
import sympy as _sp
from approxtheory.catalogue import Claim as _Claim
from approxtheory.docs import claim_html as _claim_html, formula_mathml as _formula_mathml
_html = get_ipython().display_formatter.formatters["text/html"]
_html.for_type(_Claim, _claim_html)
_html.for_type(_sp.Basic, lambda e, _f=_formula_mathml: _f(e, display=True))
del _sp, _Claim, _claim_html, _formula_mathml, _html
"""


def execute_notebook(path: Path | str, timeout: int = 300) -> dict:
    """The notebook at ``path`` executed top to bottom on this interpreter (a ``python3``
    kernelspec running ``sys.executable``, in a temporary Jupyter path), in a temporary working
    directory, after a setup cell that gives claims and sympy values an HTML output with MathML
    (the setup cell is not in the result); needs the ``docs`` extra (nbclient, nbformat,
    ipykernel)."""
    import json
    import os
    import sys
    import tempfile

    try:
        import nbformat
        from nbclient import NotebookClient
        from nbclient.exceptions import CellExecutionError
    except ImportError as e:
        raise ApproxTheoryError(
            f"executing notebooks needs the docs extra (pip install -e '.[docs]'): {e}"
        ) from None
    nb = nbformat.read(str(path), as_version=4)
    nb.cells.insert(0, nbformat.v4.new_code_cell(_NOTEBOOK_SETUP))
    saved = {k: os.environ.get(k) for k in ("JUPYTER_PATH", "MPLBACKEND", "OMP_NUM_THREADS")}
    with tempfile.TemporaryDirectory() as tmp:
        spec = Path(tmp) / "jupyter" / "kernels" / "python3"
        spec.mkdir(parents=True)
        argv = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
        (spec / "kernel.json").write_text(
            json.dumps({"argv": argv, "display_name": "Python 3", "language": "python"})
        )
        os.environ["JUPYTER_PATH"] = str(Path(tmp) / "jupyter")
        os.environ["MPLBACKEND"] = "module://matplotlib_inline.backend_inline"
        os.environ["OMP_NUM_THREADS"] = "1"  # torch's reductions differ between thread counts
        try:
            client = NotebookClient(
                nb,
                kernel_name="python3",
                timeout=timeout,
                allow_errors=False,
                resources={"metadata": {"path": tmp}},
            )
            try:
                client.execute()
            except CellExecutionError as e:
                first = " ".join(str(e).split())[:300]
                raise ApproxTheoryError(f"{path}: a cell failed: {first}") from None
            del nb.cells[0]
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
    return nb


def write_notebook_pages(claims_page: Path | str = DEFAULT_CLAIMS_PAGE) -> list[Path]:
    """Execute every notebook in ``notebooks/`` beside ``claims_page`` and write its page with
    outputs (``NAME.md``) and figures (``NAME_files/``) next to it; returns the pages."""
    import shutil

    folder = Path(claims_page).parent / NOTEBOOKS_DIR
    pages = []
    for path in sorted(folder.glob("*.ipynb")):
        text, images = render_notebook_markdown(execute_notebook(path), path.stem)
        figures = folder / f"{path.stem}_files"
        if figures.is_dir():
            shutil.rmtree(figures)
        for rel, data in images.items():
            target = folder / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_bytes(target, data)
        page = folder / f"{path.stem}.md"
        atomic_write_text(page, text)
        pages.append(page)
    return pages
