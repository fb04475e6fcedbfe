"""The documentation site builds with warnings as errors (``mkdocs build --strict``), and the
strict build does catch what it should: a broken link, a missing API object, a nav entry for a
page that does not exist, a page left out of the nav (mutants of the real site). The built site
needs no network to be read (no script, style or font from elsewhere; formulas as MathML), the
docstrings' reST is rendered (no raw ``:class:`` or ``Example::``), the notebook page shows its
outputs and the findings page is there."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "mkdocs.yml"


def build(config: Path, site: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "OMP_NUM_THREADS": "1"}
    # not --quiet: it hides the warnings, and strict mode counts only the warnings it logs
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config), "-d", str(site)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )


def test_site_builds_strict(tmp_path):
    r = build(CONFIG, tmp_path / "site")
    assert r.returncode == 0, r.stdout + r.stderr
    site = tmp_path / "site"
    for page in (
        "index.html",
        "getting-started/index.html",
        "claims/index.html",
        "tutorials/check-a-bound/index.html",
        "contributing/index.html",
        "reference/measure/index.html",
        "notebooks/checking_bounds.ipynb",
        "notebooks/checking_bounds/index.html",
        "findings/index.html",
        "tutorials/bound-vs-measured.png",
    ):
        assert (site / page).is_file(), page
    # the API reference is rendered from the docstrings, not left as a ::: directive
    measure = (site / "reference/measure/index.html").read_text(encoding="utf-8")
    assert "approxtheory.measure.fit_rate" in measure and ":::" not in measure
    assert "residual-bootstrap" in measure
    # the generated catalogue lists every claim
    import approxtheory as at

    claims = (site / "claims/index.html").read_text(encoding="utf-8")
    assert all(f'id="{c.id.lower().replace(".", "")}"' in claims for c in at.claims())
    # offline: formulas are MathML, nothing is loaded from another host
    n_formulas = sum(len(c.expressions) for c in at.claims())
    assert claims.count("<math ") == n_formulas and "$$" not in claims
    for page in site.rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        external = re.findall(
            r'<(?:script|link|img|iframe)\b[^>]*(?:src|href)="(?:https?:)?//', text
        )
        assert not external, (page, external)
        assert "fonts.googleapis" not in text and "mathjax" not in text.lower(), page
    # the docstrings' reST roles and literal blocks are rendered
    for page in (site / "reference").rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        raw = re.findall(r":(?:class|mod|func|meth|attr|data|exc):<code>|\w::</p>", text)
        assert not raw, (page, raw[:3])
    assert '<a class="autorefs' in measure  # a role became a link to its object
    # the notebook with its outputs, its figures next to it
    nb = (site / "notebooks/checking_bounds/index.html").read_text(encoding="utf-8")
    figures = re.findall(r'<img[^>]*src="([^"]+\.png)"', nb)
    assert len(figures) >= 2 and all(
        (site / "notebooks/checking_bounds" / f).resolve().is_file() for f in figures
    ), figures
    assert "refuted measured" in nb
    findings = (site / "findings/index.html").read_text(encoding="utf-8")
    assert "Refuted (" in findings and "claims/#hc-k1" in findings


def _rst_markup():
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "rst_markup", ROOT / "docs" / "_griffe" / "rst_markup.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_rst_markup_rewrites_roles_and_literal_blocks():
    """The griffe extension turns reST into markdown: roles into (optional) references or code,
    literal blocks and doctest sessions into fences; fenced code is left alone."""
    rewrite = _rst_markup().rewrite
    text = (
        "See :class:`Claim` and :func:`~a.b.fit` or :func:`the fit <a.b.fit>`.\n\n"
        "Example::\n\n    >>> 1 + 1\n    2\n\nAfter.\n\nThe grammar::\n\n    x := y\n\n"
        ">>> f()\n3\n\n```text\n:class:`kept`\n```\n"
    )
    out = rewrite(text)
    assert "See `Claim` and `fit` or `the fit`." in out
    assert "Example:\n\n```pycon\n>>> 1 + 1\n2\n```\n\nAfter." in out
    assert "The grammar:\n\n```text\nx := y\n```" in out
    assert "```pycon\n>>> f()\n3\n```" in out
    assert "```text\n:class:`kept`\n```" in out
    assert "::" not in out.replace(":class:`kept`", "").replace(":=", "")


def _mutant_site(tmp_path: Path, mutate) -> Path:
    """A copy of docs/ and of mkdocs.yml (pointing at the copy) with ``mutate(docs_dir, cfg)``
    applied; returns the config path."""
    docs = tmp_path / "docs"
    shutil.copytree(ROOT / "docs", docs)
    cfg = yaml.safe_load(CONFIG.read_text(encoding="utf-8"))
    cfg["docs_dir"] = str(docs)
    for plugin in cfg["plugins"]:
        if isinstance(plugin, dict) and "mkdocstrings" in plugin:
            python = plugin["mkdocstrings"]["handlers"]["python"]
            python["paths"] = [str(ROOT)]
            python["options"]["extensions"] = [
                str(ROOT / e) for e in python["options"].get("extensions", [])
            ]
    mutate(docs, cfg)
    path = tmp_path / "mkdocs.yml"
    path.write_text(yaml.safe_dump(cfg, allow_unicode=True), encoding="utf-8")
    return path


def _broken_link(docs, cfg):
    p = docs / "getting-started.md"
    p.write_text(
        p.read_text(encoding="utf-8") + "\nSee [the missing page](no-such-page.md).\n",
        encoding="utf-8",
    )


def _broken_anchor(docs, cfg):
    p = docs / "getting-started.md"
    p.write_text(
        p.read_text(encoding="utf-8") + "\nSee [a claim](claims.md#no-such-claim).\n",
        encoding="utf-8",
    )


def _missing_api_object(docs, cfg):
    p = docs / "reference" / "measure.md"
    p.write_text(
        p.read_text(encoding="utf-8") + "\n::: approxtheory.measure.no_such_function\n",
        encoding="utf-8",
    )


def _unknown_nav_page(docs, cfg):
    cfg["nav"].append({"Gone": "gone.md"})


def _page_not_in_nav(docs, cfg):
    (docs / "orphan.md").write_text("# Orphan\n", encoding="utf-8")


MUTANTS = {
    "broken-link": (_broken_link, "no-such-page.md"),
    "broken-anchor": (_broken_anchor, "no-such-claim"),
    "missing-api-object": (_missing_api_object, "no_such_function"),
    "unknown-nav-page": (_unknown_nav_page, "gone.md"),
    "page-not-in-nav": (_page_not_in_nav, "orphan.md"),
}


@pytest.mark.parametrize("name", list(MUTANTS))
def test_strict_build_fails_on(name, tmp_path):
    mutate, needle = MUTANTS[name]
    r = build(_mutant_site(tmp_path, mutate), tmp_path / "site")
    out = r.stdout + r.stderr
    assert r.returncode != 0, f"the strict build accepted the {name} mutant:\n{out}"
    assert needle in out, out
