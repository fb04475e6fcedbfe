"""The examples in module docstrings run, under their installed import names.

``pytest --doctest-modules`` would import ``proofs_check/`` and ``experiments/`` by their folder
names, which the package refuses on purpose (they are ``approxtheory.proofs_check`` and
``approxtheory.experiments``), so the modules are walked with :mod:`pkgutil` and each one's
doctests are run with :mod:`doctest`. A module whose examples fail, or which cannot be imported,
fails its own test case.
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest


def _modules() -> list[str]:
    names = ["approxtheory"]
    # the mapped folders live outside approxtheory.__path__, so they are walked from their own
    for pkg in ("approxtheory", "approxtheory.proofs_check", "approxtheory.experiments"):
        mod = importlib.import_module(pkg)
        names.append(pkg)
        for info in pkgutil.walk_packages(mod.__path__, prefix=pkg + "."):
            names.append(info.name)
    # __main__ runs the CLI when imported
    return sorted(n for n in set(names) if not n.endswith(".__main__"))


MODULES = _modules()
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def test_the_walk_finds_the_mapped_packages():
    """The walk covers the checks and the experiments, not only the core package."""
    assert "approxtheory.proofs_check.headcount" in MODULES
    assert any(m.startswith("approxtheory.experiments.") for m in MODULES)
    assert "approxtheory.catalogue._claim" in MODULES


@pytest.mark.parametrize("name", MODULES)
def test_module_docstring_examples(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # examples that write files write them here
    module = importlib.import_module(name)
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    tests = [t for t in finder.find(module, name) if t.examples]
    for t in tests:
        runner.run(t, out=lambda s: None)
    result = runner.summarize(verbose=False)
    if result.failed:
        # rerun to collect the report of each failing example
        report: list[str] = []
        runner = doctest.DocTestRunner(optionflags=FLAGS)
        for t in tests:
            runner.run(t, out=report.append)
        pytest.fail(f"{result.failed} failing doctest example(s) in {name}:\n" + "".join(report))


def test_a_wrong_example_fails(tmp_path):
    """The harness reports a failing example (so a passing run means something)."""
    src = '"""\n>>> 1 + 1\n3\n"""\n'
    mod = tmp_path / "broken_doctest_module.py"
    mod.write_text(src, encoding="utf-8")
    import importlib.util

    spec = importlib.util.spec_from_file_location("broken_doctest_module", mod)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    for t in doctest.DocTestFinder().find(module, "broken_doctest_module"):
        runner.run(t, out=lambda s: None)
    assert runner.summarize(verbose=False).failed == 1
