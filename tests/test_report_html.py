"""The verify report leads with its findings: counts per paper and verdict on
top, the refuted / inconsistent / not-checkable claims first with a one-line reason, a permalink
per claim, evidence as named figures at sensible precision, formulas as MathML, every record
text escaped and one static script. Parsed here with :mod:`html.parser`; the page's behaviour
in a real browser is tests/test_report_html_browser.py."""

from __future__ import annotations

import base64
import hashlib
import re
from html.parser import HTMLParser

import pytest
import sympy as sp
from _helpers import record

import approxtheory as at
from approxtheory import report
from approxtheory.mathml import safe_mathml
from approxtheory.report import (
    FINDINGS,
    figures,
    fmt_number,
    fmt_value,
    formulas_of,
    mathml,
    reason,
    render_html,
    render_markdown,
)

HOSTILE = "a | b `c` <script>alert(1)</script>\n| injected | row |\r\n[x](javascript:y) *e* \"'</"

META = {"profile": "quick", "seed": 0, "version": "0.1.0", "git": "abc1234", "wall_s": 1.5}


@pytest.fixture
def records():
    """Catalogue order with the findings in the middle and at the end, three papers, every
    kind of figure."""
    return [
        record(
            "HC-A",
            "1111.0001",
            "verified-numeric",
            evidence="reached 0.011500472207502712 against 0.01; exact 1.000000000000.",
            measured=0.12345678901234567,
            slack=2.5,
        ),
        record(
            "HC-B",
            "1111.0001",
            "consistent-empirical",
            scope="partial: a grid",
            measured={"logit": 1.0000000000000002, "mse": 0.24410077280131356},
            slopes=[
                {
                    "label": "sup error vs β",
                    "fitted": -1.00001570238551,
                    "lo": -1.0000332520335704,
                    "hi": -0.9999995972450112,
                    "predicted": -1.0,
                    "within_ci": True,
                }
            ],
        ),
        record(
            "TO-A",
            "2222.0002",
            "refuted",
            evidence="the bound fails in 3/9 cells; worst 0.75 against 0.000368. More prose.",
            measured=0.75,
            claimed=0.00036787944117144236,
            witness=[1.0, 1.0, 0.0, 0.0],
            slack=0.0004905059215619231,
        ),
        record("TO-B", "2222.0002", "verified-symbolic", scope="surrogate: a stand-in"),
        record(
            "IF-A",
            "3333.0003",
            "not-checkable",
            evidence="under-trained: best NMSE 0.31 above the 0.05 gate; " + "x " * 200,
            scope="partial: trained",
            volatile={"rate": float("inf"), "steps_per_s": 123.456789},
            scale={
                "run1": {
                    "run": {"T": 64, "steps": 2000, "best_val_nmse": 0.3100000001},
                    "cells": {"D=4": {"reached": 0.31234567, "paper": 0.0123456}},
                    "reference": "Table 2",
                }
            },
        ),
        record(
            "IF-B",
            "3333.0003",
            "inconsistent",
            evidence="the fitted slope -0.62 is outside the predicted -1 interval",
            witness={"T": 64, "beta": 100.0},
        ),
        record("IF-C", "3333.0003", "refuted", evidence="a second refutation", measured=2.0),
    ]


class _Page(HTMLParser):
    """The parts of the page the tests read: elements with their attributes and ancestry, the
    visible text, the scripts."""

    VOID = {"meta", "br", "img", "input", "link", "hr"}

    def __init__(self, text: str):
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, dict, tuple[str, ...]]] = []
        self.stack: list[tuple[str, dict]] = []
        self.text: list[str] = []
        self.scripts: list[tuple[dict, str]] = []
        self._script: dict | None = None
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.elements.append((tag, a, tuple(t for t, _ in self.stack)))
        if tag == "script":
            self._script = a
            self.scripts.append((a, ""))
        if tag not in self.VOID:
            self.stack.append((tag, a))

    def handle_endtag(self, tag):
        while self.stack:
            t, _ = self.stack.pop()
            if t == tag:
                break
        if tag == "script":
            self._script = None

    def handle_data(self, data):
        if self._script is not None:
            a, body = self.scripts[-1]
            self.scripts[-1] = (a, body + data)
        elif not any(t == "style" for t, _ in self.stack):
            self.text.append(data)

    def rows(self) -> list[dict]:
        """The claims table's rows (not the nested figure tables')."""
        return [
            a
            for t, a, anc in self.elements
            if t == "tr" and anc[-2:] == ("table", "tbody") and "data-claim" in a
        ]

    def by_id(self, id_: str):
        return [(t, a) for t, a, _ in self.elements if a.get("id") == id_]


def test_summary_counts_every_paper_and_verdict(records):
    text = render_html(records, META)
    summary = text.split("<table id=summary>", 1)[1].split("</table>", 1)[0]
    counts = {
        (m["p"], m["v"]): int(m["n"])
        for m in re.finditer(
            r'<button type=button class=cnt(?: data-paper="(?P<p>[^"]*)")?'
            r'(?: data-verdict="(?P<v>[^"]*)")?>(?P<n>\d+)</button>',
            summary,
        )
    }
    # a count per non-empty (paper, verdict) cell, per paper and per verdict, each a button
    want: dict = {}
    for r in records:
        for key in ((r["paper"], r["verdict"]), (r["paper"], None), (None, r["verdict"])):
            want[key] = want.get(key, 0) + 1
    assert counts == want
    assert summary.count("<button") == len(want)
    assert f"<td class=n>{len(records)}</td></tr>" in summary  # the grand total
    md = render_markdown(records, META)
    summary = md.split("## Summary", 1)[1].split("## Findings", 1)[0]
    row = next(ln for ln in summary.splitlines() if ln.startswith("| 3333.0003"))
    header = next(ln for ln in summary.splitlines() if ln.startswith("| paper |"))
    cells = dict(
        zip(
            [c.strip() for c in header.strip("|").split("|")],
            [c.strip() for c in row.strip("|").split("|")],
        )
    )
    mine = [r for r in records if r["paper"] == "3333.0003"]
    assert cells["total"] == str(len(mine))
    for v in ("refuted", "inconsistent", "not-checkable"):
        assert cells[v] == str(sum(r["verdict"] == v for r in mine))
    assert cells["verified-numeric"] == ""  # none here


def test_the_findings_come_first_with_a_one_line_reason(records):
    text = render_html(records, META)
    page = _Page(text)
    order = [a["data-claim"] for a in page.rows()]
    assert order[:2] == ["TO-A", "IF-C"]  # the refutations, in catalogue order
    assert order[2:4] == ["IF-B", "IF-A"]  # then inconsistent, then not-checkable
    assert sorted(order) == sorted(r["claim"] for r in records)
    # the findings list: exactly the findings, in that order, each linking its row
    links = [a["href"] for t, a, anc in page.elements if t == "a" and "li" in anc and "ol" in anc]
    assert links == ["#claim-TO-A", "#claim-IF-C", "#claim-IF-B", "#claim-IF-A"]
    for href in links:
        assert len(page.by_id(href[1:])) == 1
    assert text.index('id="claim-TO-A"') < text.index('id="claim-HC-A"')
    # reasons: one line, short, the first sentence or clause
    by = {r["claim"]: r for r in records}
    assert reason(by["TO-A"]) == "the bound fails in 3/9 cells; worst 0.75 against 0.000368."
    long = reason(by["IF-A"])
    assert long == "under-trained: best NMSE 0.31 above the 0.05 gate"
    assert reason({"evidence": "word " * 300}).endswith(" …")
    assert len(reason({"evidence": "word " * 300})) <= 222
    assert "\n" not in reason({"evidence": "a\nb\r\nc"})
    # markdown: the findings list, then the claims table with the same order
    md = render_markdown(records, META)
    assert md.index("## Summary") < md.index("## Findings") < md.index("| claim |")
    found = [ln for ln in md.split("## Findings", 1)[1].split("##", 1)[0].splitlines() if ln]
    assert [re.search(r"\[([A-Z]+-[A-Z])\]", ln).group(1) for ln in found] == [
        "TO-A",
        "IF-C",
        "IF-B",
        "IF-A",
    ]
    table = md.split("| claim |", 1)[1].splitlines()[2:]
    assert [ln.split(" | ")[0].strip("| ") for ln in table] == order


def test_no_findings_says_so():
    recs = [record("HC-A", "1", "verified-numeric")]
    assert "No claim is refuted" in render_html(recs, META)
    assert "No claim is refuted" in render_markdown(recs, META)


def test_every_row_has_a_unique_permalink(records):
    recs = records + [
        record("HC-A", "1111.0001", "verified-numeric"),
        record("a b/c", "x", "error"),
    ]
    page = _Page(render_html(recs, META))
    ids = [a["id"] for a in page.rows()]
    assert len(set(ids)) == len(ids) == len(recs)
    assert all(re.fullmatch(r"claim-[A-Za-z0-9._-]+", i) for i in ids)
    perma = [a["href"] for t, a, _ in page.elements if t == "a" and a.get("class") == "perma"]
    assert sorted(perma) == sorted("#" + i for i in ids)


def test_evidence_is_named_figures_at_sensible_precision(records):
    page = _Page(render_html(records, META))
    visible = "".join(page.text)
    noise = re.findall(r"\d\.\d{8,}", visible.replace("1.000000000000", ""))
    assert not noise, "a long float in the page's text"
    assert "{'" not in visible and "':" not in visible, "a Python repr in the page's text"
    for want in ("0.1235", "measured: logit", "measured: mse", "0.2441", "0.0004905", "∞"):
        assert want in visible, want
    assert "[1, 1, 0, 0]" in visible  # the refutation's witness
    # the prose's repr noise shortened, a chosen precision kept
    assert "reached 0.0115005 against 0.01; exact 1.000000000000." in visible
    assert "0.0115005 against" in render_markdown(records, META)
    assert "witness: beta100" in visible  # a mapping witness, one named row per key
    assert "reached 0.3123 vs paper 0.01235" in visible  # the scale, kept
    # the slope table: fitted, the interval, predicted, at the figures that keep them apart
    assert "-1.000016[-1.000033, -0.9999996]-1yes" in visible
    rows = report._slope_rows(
        {"slopes": [{"label": "a", "fitted": -1.0000025, "lo": -1.0000053, "hi": -1.00000004,
                     "predicted": -1.0, "within_ci": False},
                    {"label": "b", "fitted": -0.51234, "lo": -0.6, "hi": -0.4, "predicted": None}]}
    )  # fmt: skip
    assert rows == [
        ("a", "-1.0000025", "[-1.0000053, -1.00000004]", "-1", "no"),
        ("b", "-0.5123", "[-0.6, -0.4]", "—", "—"),
    ]
    # figures carry names; a record's own keys are one line
    figs = dict(figures({"measured": {"a\nb": 1.5}, "verdict": "refuted", "witness": {"k": 2}}))
    assert figs == {"measured: a b": "1.5", "witness: k": "2"}


def test_number_formatting():
    assert fmt_number(0.12345678901234567) == "0.1235"
    assert fmt_number(3) == "3" and fmt_number(True) == "yes"
    assert fmt_number(float("nan")) == "nan" and fmt_number({"$float": "-inf"}) == "−∞"
    assert fmt_number(1.0000000000000002) == "1"
    assert fmt_number(123456789.0) == "1.235e+08"
    assert fmt_value(list(range(20))).endswith(", … (20 in all)]")
    assert fmt_value({"a": [0.5, {"$float": "inf"}]}) == "a = [0.5, ∞]"
    assert fmt_value(None) == "—"
    tidy = report.tidy_numbers
    assert (
        tidy("x 0.1026132025644827) and -3.14159265358979e-05.") == "x 0.102613) and -3.14159e-05."
    )
    for kept in ("1.000008683", "1.000000000000", "v1.2.3", "ab1.23456789012345", "2.0"):
        assert tidy(kept) == kept


def test_keeps_scale_slack_mutant_and_falsified_columns(records):
    recs = [
        dict(
            records[0],
            falsified_by=["drop-beta"],
            mutant_results=[{"name": "drop-beta"}],
            claim_mutants=[{"name": "scale:x2", "flips": True}, {"name": "rate+", "flips": False}],
        ),
        records[4],
    ]
    meta = {**META, "mutants": True}
    for text in (render_html(recs, meta), render_markdown(recs, meta)):
        assert "declared mutants: drop-beta" in text
        assert "claim mutants flipped 1/2" in text
        assert "slack 2.5" in text
        assert "scale: run1: here T 64, steps 2000" in text
    assert "claim mutants not run" in render_html(records[:1], META)


def test_formulas_render_as_mathml_without_a_network():
    claims = at.claims()
    fm = formulas_of(claims)
    recs = [record(c.id, c.paper, "verified-numeric") for c in claims]
    text = render_html(recs, META, formulas=fm)
    page = _Page(text)
    n_expr = sum(len(c.expressions) for c in claims)
    maths = [a for t, a, _ in page.elements if t == "math"]
    n_regime = sum(len(c.regime) for c in claims) + sum(c.vacuous_if is not None for c in claims)
    assert len(maths) == n_expr + n_regime  # every formula rendered, none fell back to text
    assert "<code>" not in text.split("<tbody>", 1)[1]
    # nothing fetched: no external address, no stylesheet or script source anywhere
    assert not re.search(r"(src|href)=\"(https?:)?//", text)
    assert not any(t in ("iframe", "object", "embed") for t, _, _ in page.elements)
    assert [a for t, a, _ in page.elements if t == "link"] == [{"rel": "icon", "href": "data:,"}]
    assert not any("src" in a for t, a, _ in page.elements if t == "script")
    # the formula read is the catalogue's: IF-T2's err_attn
    m = mathml(at.claim("IF-T2").expr("err_attn"), "err_attn")
    assert m is not None and m in text and "<mfrac>" in m


def test_mathml_is_only_plain_mathml():
    assert mathml("1 + 2") is None  # text is never sympified (that would evaluate it)
    assert mathml(sp.Symbol("<script>") + 1) is None or "<script>" not in mathml(
        sp.Symbol("<script>") + 1
    )
    assert safe_mathml("<math><mi>x</mi></math>")
    assert not safe_mathml('<math><mi onclick="x()">x</mi></math>')
    assert not safe_mathml("<math><script>x</script></math>")
    assert not safe_mathml("<math><mi>x</mi></math><img src=x>")
    assert not safe_mathml("<math><mi>a&b</mi></math>")
    # a formula sympy cannot give as MathML falls back to escaped text
    text = render_html(
        [record("X-1", "p", "refuted")],
        META,
        formulas={"X-1": {"expressions": {"f": "<b>not sympy</b>"}, "regime": []}},
    )
    assert "<code>f = &lt;b&gt;not sympy&lt;/b&gt;</code>" in text


def test_record_text_is_escaped_and_the_script_is_static(records):
    hostile = [
        {
            **record(
                HOSTILE,
                HOSTILE,
                "refuted",
                evidence=HOSTILE,
                scope="partial: " + HOSTILE,
                measured={HOSTILE: HOSTILE},
                witness={"x": HOSTILE},
                volatile={HOSTILE: HOSTILE},
                slack_note=HOSTILE,
                covered=HOSTILE,
                statement=HOSTILE,
                provenance=HOSTILE,
                plots=[HOSTILE + ".png"],
                csv=["data/" + HOSTILE],
                falsified_by=[HOSTILE],
                mutants=[HOSTILE],
            ),
            "scale": {HOSTILE: {"run": {"T": HOSTILE}, "cells": {HOSTILE: {"paper": 1}}}},
        },
        *records,
    ]
    text = render_html(hostile, {**META, "profile": HOSTILE, "git": HOSTILE})
    page = _Page(text)
    assert "alert(1)" not in "".join(body for _, body in page.scripts)
    assert len(page.scripts) == 1
    attrs, body = page.scripts[0]
    assert attrs == {"type": "module"} and body == report._SCRIPT
    # the policy lets exactly that script run
    digest = base64.b64encode(hashlib.sha256(body.encode()).digest()).decode()
    csp = next(a["content"] for t, a, _ in page.elements if a.get("http-equiv"))
    assert f"script-src 'sha256-{digest}'" in csp and "default-src 'none'" in csp
    # no element or attribute came from a record: every tag is one the renderer writes, no
    # event handler, no javascript: address
    assert {t for t, _, _ in page.elements} <= {
        "html", "head", "meta", "link", "title", "style", "body", "h1", "h2", "p", "code", "table",
        "tr", "th", "td", "span", "button", "ol", "li", "a", "b", "small", "div", "label",
        "select", "option", "input", "thead", "tbody", "br", "img", "details", "summary",
        "script",
    }  # fmt: skip
    for _, a, _ in page.elements:
        assert not any(k.startswith("on") for k in a), a
        assert not any(str(v).strip().lower().startswith("javascript:") for v in a.values()), a
    assert HOSTILE.replace("\r\n", "\n").split("\n")[0] in "".join(page.text)
    md = render_markdown(hostile, {**META, "profile": HOSTILE, "git": HOSTILE})
    prose = re.sub(r"(`+)(?!`).*?(?<!`)\1(?!`)", "", md.replace("\\`", ""))
    assert "<script>" not in prose and "&lt;script&gt;" in prose
    assert not re.search(r"(?<!\\)\]\(javascript", prose)
    findings = md.split("## Findings", 1)[1].split("##", 1)[0]
    assert len([ln for ln in findings.splitlines() if ln.startswith("- ")]) == 5


def test_filters_are_the_records_values(records):
    page = _Page(render_html(records, META))
    opts: dict[str, list[str]] = {}
    for t, a, _ in page.elements:
        if t == "select":
            cur = a["id"]
            opts[cur] = []
        elif t == "option":
            opts[cur].append(a["value"])
    assert opts["f-paper"] == ["", "1111.0001", "2222.0002", "3333.0003"]
    assert opts["f-verdict"][1:] == [v for v in report.VERDICT_ORDER if v in {
        r["verdict"] for r in records}]  # fmt: skip
    assert opts["f-scope"] == ["", "full", "partial", "surrogate"]
    assert {a["data-scope"] for a in page.rows()} == {"full", "partial", "surrogate"}
    assert set(FINDINGS) >= {"refuted", "inconsistent", "not-checkable"}


def test_slack_sorts_as_a_number_in_the_page():
    recs = [
        record("A-1", "p", "refuted", slack=float("inf")),
        record("A-2", "p", "refuted", slack=float("nan")),
        record("A-3", "p", "refuted", slack=0.5),
        record("A-4", "p", "refuted"),
    ]
    page = _Page(render_html(recs, META))
    assert [a["data-slack"] for a in page.rows()] == ["Infinity", "", "0.5", ""]
