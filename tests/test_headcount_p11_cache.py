"""HC-P11's evidence under a replaced claim does not depend on what ran before it in the process:
the count of R(h) equal to headcount_real_data's is the same after the catalogue's own claim has
run as in a fresh state (the experiment's rows and the claim's formulas not yet cached)."""

import functools
import re

from _helpers import claim_symbols as _sym
from _helpers import false_claim as _with
from _helpers import run_quick as _run

from approxtheory import headcount_analysis
from approxtheory.proofs_check import _core


def _false_weight():
    emax, emin = _sym("HC-P11", "e_max", "e_min")
    return _with("HC-P11", reversal_weight=emax + emin)


def _fresh_caches(monkeypatch):
    """Empty caches for the rest of the test, the process's own restored afterwards."""
    monkeypatch.setattr(
        _core, "_experiment_rows", functools.cache(_core._experiment_rows.__wrapped__)
    )
    monkeypatch.setattr(
        headcount_analysis, "_p11", functools.cache(headcount_analysis._p11.__wrapped__)
    )


def test_p11_text_under_an_override_does_not_depend_on_the_order(monkeypatch):
    _run("HC-P11")  # the catalogue's claim first: its rows and formulas are now cached
    after_true = _run("HC-P11", _false_weight())
    _fresh_caches(monkeypatch)
    fresh = _run("HC-P11", _false_weight())
    assert after_true.evidence == fresh.evidence, (after_true.evidence, fresh.evidence)
    assert after_true.verdict == fresh.verdict
    n = len(fresh.rows)
    same = re.search(r"(\d+)/(\d+) equal to headcount_real_data's", fresh.evidence)
    assert same is not None and int(same.group(2)) == n, fresh.evidence
    # the experiment computes R with the catalogue's weight, the check with the replaced one
    assert int(same.group(1)) < n, fresh.evidence


def test_p11_true_claim_after_an_override_reads_the_catalogue(monkeypatch):
    _fresh_caches(monkeypatch)
    _run("HC-P11", _false_weight())  # the replaced claim first, in a fresh state
    v = _run("HC-P11")
    n = len(v.rows)
    assert f"{n}/{n} equal to headcount_real_data's" in v.evidence, v.evidence
