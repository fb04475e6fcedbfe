"""The documentation's examples are run, so their output cannot drift from what the code prints.

Every ```pycon block of a page under ``docs/`` (the generated ``claims.md`` aside) is a doctest
session; the sessions of one page share their names, in page order, and run in a fresh temporary
directory. A ```python block with ``title="NAME.py"`` is written to that directory first (so a
session can import it, as a reader who saved the file would). Output is compared with
``ELLIPSIS`` and ``NORMALIZE_WHITESPACE``; a block ending without a blank line is fine (the fence
ends the expected output). The line numbers of a failure are the page's own.
"""

from __future__ import annotations

import doctest
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"

_FENCE = re.compile(
    r"^```(?P<lang>[\w-]*)(?P<attrs>[^\n]*)\n(?P<body>.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL
)
_TITLE = re.compile(r'title="([^"]+)"')
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def pages() -> list[Path]:
    return sorted(p for p in DOCS.rglob("*.md") if p != DOCS / "claims.md")  # generated


def sessions(text: str) -> tuple[str, dict[str, str]]:
    """(the page with every line outside a pycon block blanked, {file name: source})."""
    lines = [""] * (text.count("\n") + 1)
    files = {}
    for m in _FENCE.finditer(text):
        lang, attrs, body = m["lang"], m["attrs"], m["body"]
        if lang == "pycon":
            first = text.count("\n", 0, m.start("body"))
            for i, line in enumerate(body.split("\n")):
                lines[first + i] = line
        elif lang == "python" and _TITLE.search(attrs):
            files[_TITLE.search(attrs)[1]] = body
    return "\n".join(lines), files


def run_page(path: Path, cwd: Path, out=None) -> doctest.TestResults:
    """Write the page's files into ``cwd`` and run its sessions (failures are printed to
    stdout, or passed to ``out``)."""
    text, files = sessions(path.read_text(encoding="utf-8"))
    for name, src in files.items():
        (cwd / name).write_text(src, encoding="utf-8")
    test = doctest.DocTestParser().get_doctest(
        text, {"__name__": "__docs__"}, path.name, str(path), 0
    )
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    runner.run(test, out=out)
    return runner.summarize(verbose=False)


def _has_sessions(path: Path) -> bool:
    text = path.read_text(encoding="utf-8")
    return any(m["lang"] == "pycon" for m in _FENCE.finditer(text))


CHECKED = [p for p in pages() if _has_sessions(p)]

#: registries a page may add to (the contributor guide registers an example experiment); each is
#: restored after the page, so that no other test sees the page's additions
REGISTRIES = [
    ("approxtheory.experiment", "EXPERIMENTS"),
    ("approxtheory.constructions", "REGISTRY"),
    ("approxtheory.proofs_check", "CHECKS"),
    ("approxtheory.proofs_check", "MUTANTS"),
]


def _registries() -> list[tuple[dict, dict]]:
    import importlib

    # the experiments register when the plugins load (once per process): load them before the
    # copy, or the restore would empty the registry for every later test of the process
    from approxtheory.experiment import load_plugins

    load_plugins()
    out = []
    for module, name in REGISTRIES:
        try:
            reg = getattr(importlib.import_module(module), name)
        except (ImportError, AttributeError):
            continue
        out.append((reg, dict(reg)))
    return out


@pytest.mark.parametrize("page", CHECKED, ids=[str(p.relative_to(DOCS)) for p in CHECKED])
def test_page_output_is_what_the_code_prints(page, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    before = set(sys.modules)
    saved = _registries()
    try:
        r = run_page(page, tmp_path)
    finally:
        for reg, copy in saved:
            reg.clear()
            reg.update(copy)
        for mod in set(sys.modules) - before:  # modules the page wrote and imported
            if getattr(sys.modules[mod], "__file__", "") and str(tmp_path) in str(
                sys.modules[mod].__file__
            ):
                del sys.modules[mod]
    assert r.attempted > 0
    assert r.failed == 0, f"{r.failed} of {r.attempted} examples of {page.name} failed (above)"


def test_tutorials_are_checked():
    """Each tutorial shows real output: it has sessions with printed results."""
    tutorials = sorted((DOCS / "tutorials").glob("*.md"))
    assert len(tutorials) >= 3
    for p in tutorials:
        text, _ = sessions(p.read_text(encoding="utf-8"))
        examples = doctest.DocTestParser().get_examples(text)
        assert len(examples) >= 5, p.name
        assert sum(bool(e.want) for e in examples) >= 3, p.name


def test_a_drifted_output_fails(tmp_path):
    """The harness is not vacuous: a page whose printed value is wrong fails, and the fence
    ends the expected output."""
    page = tmp_path / "page.md"
    page.write_text(
        '# x\n\n```python title="helper.py"\nX = 2\n```\n\n```pycon\n'
        ">>> from helper import X\n>>> X + 1\n4\n```\n\nText.\n",
        encoding="utf-8",
    )
    sys.path.insert(0, str(tmp_path))
    try:
        runner_out = run_page(page, tmp_path, out=lambda s: None)
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("helper", None)
    assert runner_out == doctest.TestResults(failed=1, attempted=2)
