"""Claims the new readings must take in any form without raising: a weaker err_gap that names T,
a width whose exponent keeps d and D, a regime that admits none of IF-T2's cells. A form the
check cannot hold is a verdict (refuted, or not-checkable where nothing decides), never an
exception; a true but weaker form is not refuted on its account."""

import inspect

import sympy as sp
from _helpers import claim_symbols, false_claim, run_quick

from approxtheory.catalogue import Condition


def test_hc_k1_err_gap_with_t_is_read():
    # T e^{-βg} (HC-P3's "about T e^{-βg}") is weaker than |S| e^{-βg}: within in every cell
    b, g, T = claim_symbols("HC-K1", "beta", "g", "T")
    v = run_quick("HC-K1", false_claim("HC-K1", err_gap=T * sp.exp(-b * g)))
    assert "err_gap = T*exp(-beta*g)" in v.evidence, v.evidence
    assert "err_gap FAILED" not in v.evidence, v.evidence


def test_hc_a3_width_with_other_symbols_is_a_verdict():
    C, eps, d, D = claim_symbols("HC-A3", "C", "epsilon", "d", "D")
    v = run_quick("HC-A3", false_claim("HC-A3", width=C / eps ** sp.Max(d, D)))
    assert v.verdict == "refuted", v.evidence
    assert "has no ε-exponent that can be read" in v.evidence, v.evidence


def test_if_t2_regime_admitting_no_cell_is_not_verified():
    b, _T = claim_symbols("IF-T2", "beta", "T")
    v = run_quick("IF-T2", false_claim("IF-T2", regime=[Condition(sp.Ge(b, 10**5), "beta >= 1e5")]))
    assert v.verdict == "not-checkable", v.evidence
    assert "admits 0 of the grid's 12 cells" in v.evidence, v.evidence


def test_the_cached_rate_assertion_shows_the_public_signature():
    from approxtheory.testing.claim_rates import assert_claim_rate
    from approxtheory.testing.measured import Measured

    method = inspect.signature(Measured.assert_claim_rate).parameters
    public = [p for p in inspect.signature(assert_claim_rate).parameters if not p.startswith("_")]
    assert list(method) == ["self", *public]
