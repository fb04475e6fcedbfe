"""The shared row reader (proofs_check/_rows.py): one place where a test substitutes the rows
every paper's trained checks read, reached at call time from the head-count package, its old
private names (the InfoFlow / Prism checks' late imports) and the checks themselves; and the
head-count package registers its checks in its sub-modules' order."""

import pytest

from approxtheory.proofs_check import Context, _rows, run_check


def fresh_registry() -> list[tuple[str, str]]:
    """(claim, check module) in the order a fresh process registers the checks: other tests
    replace and restore entries of CHECKS in this process, which moves them to the end."""
    import json
    import subprocess
    import sys

    code = (
        "import json; from approxtheory.proofs_check import CHECKS; "
        "print(json.dumps([[c, CHECKS[c].source_fn.__module__] for c in CHECKS]))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return [tuple(x) for x in json.loads(out.stdout)]


class _Read(Exception):
    pass


def _raise(name, profile):
    raise _Read(name, profile)


def test_patching_the_shared_reader_reaches_every_caller(monkeypatch):
    """One place substitutes the rows of every paper's trained checks (head-count, InfoFlow,
    Prism: each looks the reader up at call time)."""
    monkeypatch.setattr(_rows, "exp_rows", _raise)
    for cid in ("HC-P8", "HC-P9", "HC-P10", "HC-P6b", "HC-P7", "IF-E1", "IF-P3", "PR-E1"):
        with pytest.raises(_Read):
            run_check(cid, Context())


def test_not_run_says_what_to_run():
    v = _rows.not_run("HC-P9", "headcount_width", "quick", "0 cached")
    assert v.verdict == "not-checkable" and v.scope == "none"
    assert "approxtheory experiment run headcount_width --profile quick" in v.evidence


def test_headcount_checks_register_in_module_order():
    """The report's order is CHECKS' order: the package's sub-modules, in __init__'s order."""
    order = [
        "lemmas",
        "k1",
        "theorem2",
        "relu",
        "lemmas_lower",
        "memorization",
        "trained",
        "trained_more",
    ]
    mods = [m.rsplit(".", 1)[-1] for c, m in fresh_registry() if c.startswith("HC-")]
    pkg = [m for m in mods if m != "headcount_more"]
    assert pkg == sorted(pkg, key=order.index)
    assert mods[: len(pkg)] == pkg  # headcount_more's checks come after the package's
