"""docs/claims.md is generated from the catalogue and must not be stale."""

from pathlib import Path

from approxtheory.docs import render_claims_markdown
import approxtheory as at

ROOT = Path(__file__).resolve().parents[1]


def test_claims_page_is_fresh():
    page = ROOT / "docs" / "claims.md"
    assert page.exists(), "run `approxtheory docs`"
    assert page.read_text(encoding="utf-8") == render_claims_markdown(), \
        "docs/claims.md is stale: run `approxtheory docs`"


def test_claims_page_lists_every_claim():
    text = render_claims_markdown()
    for c in at.claims():
        assert f"### {c.id}\n" in text


def test_readme_and_ci_share_the_test_command():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    marker = "TEST_COMMAND="
    line = next(l for l in ci.splitlines() if l.startswith(marker))
    cmd = line[len(marker):].strip().strip("'\"")
    assert cmd in readme


def test_readme_examples_run():
    import doctest
    r = doctest.testfile(str(ROOT / "README.md"), module_relative=False,
                         optionflags=doctest.NORMALIZE_WHITESPACE)
    assert r.attempted > 5 and r.failed == 0
