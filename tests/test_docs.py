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


def _rendered_text(markdown_text: str, math: bool = True) -> str:
    """What a reader sees: the markdown rendered by Python-Markdown (the renderer mkdocs uses),
    tags stripped, entities decoded, whitespace collapsed; ``math`` False: no math may appear."""
    import html
    import re

    import markdown

    # the site's extensions that read plain text (mkdocs.yml): tables and arithmatex, whose
    # $...$ and \\(...\\) would turn text into math
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
        shown = _rendered_text(sec)
        assert " ".join(c.statement.split()) in shown, c.id
        assert f"{c.kind}, {c.provenance}; " in shown, c.id
        if c.notes:
            assert " ".join(c.notes.split()) in shown, c.id
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


def test_the_trade_offs_paper_shows_its_v1_title():
    page = render_claims_markdown()
    section = page.split("## Performance-Efficiency Tradeoffs in Transformers", 1)[1]
    assert "v1: *Allocation of Parameters in Transformers*" in section.split("\n## ", 1)[0]
