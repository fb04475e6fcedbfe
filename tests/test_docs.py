"""docs/claims.md is generated from the catalogue, docs/findings/index.md from the committed run
(docs/findings/verdicts.json); neither may be stale, and ``docs --check`` says when one is."""

import json
import shutil
from pathlib import Path

import pytest

import approxtheory as at
from approxtheory.docs import (
    findings_paths,
    load_findings,
    render_claims_markdown,
    render_findings_markdown,
)

ROOT = Path(__file__).resolve().parents[1]
CLAIMS_PAGE = ROOT / "docs" / "claims.md"
VERDICTS, FINDINGS_PAGE = findings_paths(CLAIMS_PAGE)


def committed_findings():
    findings = load_findings(VERDICTS)
    assert findings is not None, f"{VERDICTS} is missing: `approxtheory docs --findings ...`"
    return findings


def test_claims_page_is_fresh():
    assert CLAIMS_PAGE.exists(), "run `approxtheory docs`"
    assert CLAIMS_PAGE.read_text(encoding="utf-8") == render_claims_markdown(
        committed_findings()
    ), "docs/claims.md is stale: run `approxtheory docs`"


def test_findings_page_is_fresh():
    assert FINDINGS_PAGE.read_text(encoding="utf-8") == render_findings_markdown(
        committed_findings()
    ), "docs/findings/index.md is stale: run `approxtheory docs`"


def _rendered_text(markdown_text: str, math: bool = True) -> str:
    """What a reader sees: the markdown rendered by Python-Markdown (the renderer mkdocs uses),
    tags stripped, entities decoded, whitespace collapsed; ``math`` False: no math may appear."""
    import html
    import re

    import markdown

    # tables, and arithmatex, a math extension whose $...$ and \\(...\\) would turn text into
    # math: the site has none now (formulas are MathML), but catalogue text stays safe under one
    rendered = markdown.markdown(
        markdown_text,
        extensions=["tables", "pymdownx.arithmatex"],
        extension_configs={"pymdownx.arithmatex": {"generic": True}},
    )
    assert math or "arithmatex" not in rendered, rendered
    return " ".join(html.unescape(re.sub(r"<[^>]+>", "", rendered)).split())


def test_catalogue_text_renders_as_written():
    """Free text is escaped, not interpreted: reference-link brackets, emphasis stars and
    underscores, angle brackets and braces come out as typed (the generator once let
    ``[W|b][W|b]ᵀ`` through as a markdown reference link)."""
    from approxtheory.docs import _text

    for plain in ("[W|b][W|b]ᵀ", "a *b* c", "x _i_ y", "u <b> v", "e_{t,j} # h", "p \\ q`r`"):
        assert _rendered_text(_text(plain), math=False) == plain, plain
    # math delimiters of the site's arithmatex, and line breaks that would start a setext
    # heading, a list or a code block (each rendered as something else before)
    for plain in ("a $x$ b", "x \\(y\\) z", "line\n---\nafter", "a\n\n    code b", "a\n\n- b"):
        shown = _rendered_text("Notes: " + _text(plain), math=False)
        assert shown == "Notes: " + " ".join(plain.split()), plain


def test_claims_page_lists_every_claim():
    """Every claim has its section, under its own paper, holding its statement and each of its
    formulas (MathML with its TeX as alttext, and its sympy text); the count line and the table
    rows agree with the catalogue."""
    import html

    import sympy as sp

    from approxtheory.catalogue import PAPERS
    from approxtheory.docs import formula_mathml

    text = render_claims_markdown()
    cs = [c for arxiv in PAPERS for c in at.claims() if c.paper == arxiv]
    assert len(cs) == len(at.claims())
    assert f"\n{len(cs)} claims.\n" in text
    sections = text.split("\n### ")[1:]
    assert [s.split("\n", 1)[0] for s in sections] == [c.id for c in cs]
    for c, sec in zip(cs, sections):
        shown = _rendered_text(sec)
        assert " ".join(c.statement.split()) in shown, c.id
        assert f"{c.kind}, {c.provenance}; " in shown, c.id
        if c.notes:
            assert " ".join(c.notes.split()) in shown, c.id
        for name, e in c.expressions.items():
            assert f"<li><code>{html.escape(name)}</code>" in sec, (c.id, name)
            assert formula_mathml(e) in sec, (c.id, name)
            assert f"<code>{html.escape(sp.sstr(e))}</code>" in sec, (c.id, name)
        row = f"| [{c.id}](#{c.id.lower().replace('.', '')}) | {c.kind} | {c.provenance} |"
        assert text.count(row) == 1, c.id
        paper = text[: text.index(row)].rsplit("\n## ", 1)[1]
        assert f"(arXiv {c.paper}," in paper.split("\n", 1)[0], c.id


def test_formulas_render_without_a_script():
    """The catalogue as the site renders it (mkdocs.yml's extensions, no math extension): every
    formula is a well-formed MathML element whose alttext is the formula's TeX, and no ``$`` or
    ``\\(`` math delimiter is left in the page's text."""
    import re
    import xml.etree.ElementTree as ET

    import markdown
    import sympy as sp
    import yaml

    cfg = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    exts = [e if isinstance(e, str) else next(iter(e)) for e in cfg["markdown_extensions"]]
    assert not any("arithmatex" in e for e in exts), "math needs no script any more"
    page = markdown.markdown(render_claims_markdown(committed_findings()), extensions=exts)
    maths = re.findall(r"<math\b.*?</math>", page, flags=re.DOTALL)
    alts = [html_unescape(ET.fromstring(m).get("alttext")) for m in maths]
    want = [sp.latex(e) for c in at.claims() for e in c.expressions.values()]
    assert alts == want
    text = re.sub(r"<math\b.*?</math>|<code>.*?</code>", "", page, flags=re.DOTALL)
    text = html_unescape(re.sub(r"<[^>]+>", "", text))
    assert "$" not in text and "\\(" not in text and "\\[" not in text.replace("\\[W", "")


def html_unescape(s: str) -> str:
    import html

    return html.unescape(s)


def test_formula_mathml_refuses_named_entities(monkeypatch):
    """A named entity the renderer does not map (a new sympy could write one) is an error, not a
    page that an XML reader cannot parse."""
    import sympy as sp

    from approxtheory import docs
    from approxtheory.errors import ApproxTheoryError

    monkeypatch.setattr(sp, "mathml", lambda e, printer: "<mi>&NewEntity;</mi>")
    with pytest.raises(ApproxTheoryError, match="NewEntity"):
        docs.formula_mathml(sp.Symbol("x_not_in_any_claim"))


# ----------------------------------------------------------------------------- findings


def _fake_run(tmp_path, verdicts: dict[str, str], profile="quick", git="abc1234") -> Path:
    """A verify-shaped verdicts.json with the given verdict per claim id."""
    paper = {c.id: c.paper for c in at.claims()}
    records = [
        {
            "claim": cid,
            "paper": paper[cid],
            "verdict": v,
            "scope": "partial: a named part",
            "evidence": f"evidence of {cid}",
            "slack": 1.5,
        }
        for cid, v in verdicts.items()
    ]
    meta = {"profile": profile, "git": git, "seed": 0, "version": "0.1.0", "python": "3.x"}
    path = tmp_path / "run" / "verdicts.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"meta": meta, "verdicts": records}), encoding="utf-8")
    return path


def test_verdict_column_and_findings_page_follow_the_run(tmp_path):
    """The catalogue's verdict column and the findings page are the run's: a changed verdict
    changes both; refuted claims come first on the findings page, with their reason, and the
    counts add up."""
    from approxtheory.docs import read_findings

    ids = [c.id for c in at.claims()][:6]
    run = {ids[0]: "verified-numeric", ids[1]: "refuted", ids[2]: "not-checkable"}
    run |= {i: "consistent-empirical" for i in ids[3:]}
    findings = read_findings(json.loads(_fake_run(tmp_path, run).read_text()))
    page = render_findings_markdown(findings)
    claims_page = render_claims_markdown(findings)
    assert "| verdict |" in claims_page and "| verdict |" not in render_claims_markdown()
    row = next(ln for ln in claims_page.splitlines() if ln.startswith(f"| [{ids[1]}]("))
    assert "| refuted |" in row
    assert "Findings: the quick profile" in page and "`abc1234`" in page
    refuted = page.index("## Refuted (1)")
    assert refuted < page.index("## Not-checkable (1)") < page.index("## Every claim")
    assert f"evidence of {ids[1]}" in page[refuted : page.index("## Not-checkable")]
    assert "| **all** |" in page and f"**{len(run)}** |" in page
    flipped = read_findings(
        json.loads(_fake_run(tmp_path, {**run, ids[1]: "verified-numeric"}).read_text())
    )
    assert render_findings_markdown(flipped) != page
    assert render_claims_markdown(flipped) != claims_page


@pytest.mark.parametrize(
    "data,needle",
    [
        ([], "no 'meta' object"),
        ({"meta": {"git": "x"}, "verdicts": []}, "no 'profile' string"),
        ({"meta": {"profile": "quick", "git": "x"}, "verdicts": []}, "non-empty list"),
        (
            {"meta": {"profile": "quick", "git": "x"}, "verdicts": [{"claim": "HC-K1"}]},
            "is not one of refuted",
        ),
        (
            {
                "meta": {"profile": "quick", "git": "x"},
                "verdicts": [{"claim": "HC-K1", "verdict": "refuted"}] * 2,
            },
            "appears twice",
        ),
    ],
)
def test_a_file_that_is_not_a_run_is_refused(data, needle):
    from approxtheory.docs import read_findings
    from approxtheory.errors import ApproxTheoryError

    with pytest.raises(ApproxTheoryError, match=needle):
        read_findings(data)


def _docs_copy(tmp_path) -> Path:
    docs = tmp_path / "docs"
    (docs / "findings").mkdir(parents=True)
    shutil.copy(CLAIMS_PAGE, docs / "claims.md")
    shutil.copy(VERDICTS, docs / "findings" / "verdicts.json")
    shutil.copy(FINDINGS_PAGE, docs / "findings" / "index.md")
    mutants = VERDICTS.parent / "mutants.json"
    if mutants.exists():  # the shipped --mutants summary: part of the findings page
        shutil.copy(mutants, docs / "findings" / "mutants.json")
    return docs


def test_docs_check_detects_a_stale_findings_page(tmp_path, capsys):
    """``docs --check`` passes on the committed pages and fails (exit 1, one line naming the
    page) when the findings page or the committed run changes; ``docs`` rewrites both pages."""
    from approxtheory.cli import main

    docs = _docs_copy(tmp_path)
    out = str(docs / "claims.md")
    assert main(["docs", "--check", "--out", out]) == 0, capsys.readouterr().err
    page = docs / "findings" / "index.md"
    page.write_text(page.read_text(encoding="utf-8").replace("refuted", "verified"), "utf-8")
    capsys.readouterr()
    assert main(["docs", "--check", "--out", out]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "findings/index.md is stale" in err, err
    # a new run copied in: both pages are stale until regenerated
    run = json.loads((docs / "findings" / "verdicts.json").read_text(encoding="utf-8"))
    run["verdicts"][0]["verdict"] = (
        "refuted" if run["verdicts"][0]["verdict"] != "refuted" else "inconsistent"
    )
    (docs / "findings" / "verdicts.json").write_text(json.dumps(run), encoding="utf-8")
    capsys.readouterr()
    assert main(["docs", "--check", "--out", out]) == 1
    assert "claims.md and " in capsys.readouterr().err


def test_docs_findings_copies_a_run(tmp_path, capsys):
    """``docs --findings RUN`` copies the run with its date, regenerates both pages from it, and
    refuses what is not a run (one line, exit 2)."""
    from approxtheory.cli import main

    docs = _docs_copy(tmp_path)
    out = str(docs / "claims.md")
    ids = [c.id for c in at.claims()]
    run = _fake_run(tmp_path, {ids[0]: "refuted", ids[1]: "verified-symbolic"}, git="fedcba9")
    assert main(["docs", "--findings", str(run), "--out", out]) == 0
    copy = json.loads((docs / "findings" / "verdicts.json").read_text(encoding="utf-8"))
    assert copy["meta"]["git"] == "fedcba9" and len(copy["meta"]["date"]) == 10
    page = (docs / "findings" / "index.md").read_text(encoding="utf-8")
    assert "`fedcba9`" in page and copy["meta"]["date"] in page
    assert main(["docs", "--check", "--out", out]) == 0
    bad = tmp_path / "bad.json"
    bad.write_text('{"meta": {}}', encoding="utf-8")
    capsys.readouterr()
    assert main(["docs", "--findings", str(bad), "--out", out]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "is not a verify verdicts.json" in err, err


def test_readme_and_ci_share_the_test_command():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    marker = "TEST_COMMAND="
    line = next(ln for ln in ci.splitlines() if ln.startswith(marker))
    cmd = line[len(marker) :].strip().strip("'\"")
    assert cmd in readme


def test_readme_examples_run():
    import doctest

    r = doctest.testfile(
        str(ROOT / "README.md"), module_relative=False, optionflags=doctest.NORMALIZE_WHITESPACE
    )
    assert r.attempted > 5 and r.failed == 0


def test_the_trade_offs_paper_shows_its_v1_title():
    page = render_claims_markdown()
    section = page.split("## Performance-Efficiency Tradeoffs in Transformers", 1)[1]
    assert "v1: *Allocation of Parameters in Transformers*" in section.split("\n## ", 1)[0]


def test_shipped_mutant_summary_matches_the_checks_declared_mutants():
    """docs/findings/mutants.json (the shipped `verify --mutants` run) is stale when a claim it
    names is gone or a check's declared mutants changed since: rerun and `docs --mutants`."""
    from approxtheory.findings import MUTANTS_FILE, load_mutants
    from approxtheory.proofs_check import MUTANTS

    m = load_mutants(VERDICTS.parent / MUTANTS_FILE)
    if m is None:
        pytest.skip("no shipped mutant summary")
    known = {c.id for c in at.claims()}
    for rec in m["claims"]:
        assert rec["claim"] in known, rec["claim"]
        assert set(rec["declared"]) == set(MUTANTS.get(rec["claim"], {})), (
            f"{rec['claim']}: declared mutants changed since the shipped --mutants run; rerun "
            "`approxtheory verify --mutants --out report` and `approxtheory docs --mutants "
            "report/verdicts.json`"
        )
    s = m["summary"]
    assert 0 <= s["required_caught"] <= s["required"]


def test_a_plain_run_is_not_a_mutant_summary(tmp_path):
    from approxtheory.errors import ApproxTheoryError
    from approxtheory.findings import mutant_findings

    with pytest.raises(ApproxTheoryError, match="--mutants"):
        mutant_findings({"meta": {"mutants": False}, "verdicts": []})
