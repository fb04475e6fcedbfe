"""docs/claims.md is generated from the catalogue and must not be stale."""

from pathlib import Path

import approxtheory as at
from approxtheory.docs import render_claims_markdown

ROOT = Path(__file__).resolve().parents[1]


def test_claims_page_is_fresh():
    page = ROOT / "docs" / "claims.md"
    assert page.exists(), "run `approxtheory docs`"
    assert page.read_text(encoding="utf-8") == render_claims_markdown(), (
        "docs/claims.md is stale: run `approxtheory docs`"
    )


def test_claims_page_lists_every_claim():
    """Every claim has its section, under its own paper, holding its statement and each of its
    formulas; the count line and the table rows agree with the catalogue."""
    import sympy as sp

    from approxtheory.catalogue import PAPERS

    text = render_claims_markdown()
    cs = [c for arxiv in PAPERS for c in at.claims() if c.paper == arxiv]
    assert len(cs) == len(at.claims())
    assert f"\n{len(cs)} claims.\n" in text
    sections = text.split("\n### ")[1:]
    assert [s.split("\n", 1)[0] for s in sections] == [c.id for c in cs]
    for c, sec in zip(cs, sections):
        assert c.statement in sec and f"*{c.kind}, {c.provenance}; " in sec, c.id
        for name, e in c.expressions.items():
            assert f"- `{name}`" in sec and f"`{sp.sstr(e)}`" in sec, (c.id, name)
        row = f"| [{c.id}](#{c.id.lower().replace('.', '')}) | {c.kind} | {c.provenance} |"
        assert text.count(row) == 1, c.id
        paper = text[: text.index(row)].rsplit("\n## ", 1)[1]
        assert f"(arXiv {c.paper}," in paper.split("\n", 1)[0], c.id


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
