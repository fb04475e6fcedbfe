"""Audit 42b's InfoFlow survivors (IF-R2, IF-R4, IF-T1): false claims that agreed with the true
one wherever the check used to look (L_f = 1; the claim's own N_total; N2_upper only) are refuted
now, and the catalogue's claims still pass.

Each test writes the auditor's false claim by hand, swaps it in with
:func:`approxtheory.catalogue.overriding` and runs the check on the quick profile: the verdict
must be ``refuted`` (not an error, not a survivor). IF-T1's measured grid is cut to T = 4 here
(its symbolic part does not depend on the grid).
"""

import pytest
import sympy as sp
from _helpers import false_claim as _with
from _helpers import run_quick as _quick

from approxtheory import claim
from approxtheory.catalogue import overriding
from approxtheory.proofs_check import infoflow as ifc


# ------------------------------------------------------------------------------------ IF-R2
def test_if_r2_a_knot_law_agreeing_at_lf_1_only_is_refuted():
    c = claim("IF-R2")
    Lf, eps = c.symbol("L_f"), c.symbol("epsilon")
    v = _quick("IF-R2")
    assert v.verdict == "verified-numeric", v.evidence
    assert "knots_1d = L_f/epsilon" in v.evidence and "L_f in {1/4, 1, 4}" in v.evidence
    assert {r["L_f"] for r in v.rows if r["m"] == 1} == {0.25, 1.0, 4.0}
    # the auditor's false claim: L_f^2/ε equals L_f/ε at L_f = 1 only
    with overriding(_with("IF-R2", knots_1d=Lf**2 / eps)):
        w = _quick("IF-R2")
    assert w.verdict == "refuted", w.evidence
    assert "knots_1d = L_f**2/epsilon" in w.evidence
    assert w.witness["L_f"] == 0.25 and w.witness["sup_error"] > w.witness["claimed_bound"]
    # looser laws in L_f, within the bound at every cell: only the L_f-law decides them
    for false in (3 * Lf**2 / eps, 2 * sp.sqrt(Lf) / eps):
        with overriding(_with("IF-R2", knots_1d=false)):
            w = _quick("IF-R2")
        assert w.verdict == "refuted", (false, w.evidence)
        assert all(r["verdict"] == "within-bound" for r in w.rows if r["m"] == 1), false
        assert "claimed ε ~ L_f^" in w.evidence and "FAILS" in w.evidence


def test_if_r2_scaled_targets_are_measured_not_rescaled():
    rows = ifc.costs._r2_measure()
    ones = [r for r in rows if r["m"] == 1]
    for r in ones:
        base = next(
            x
            for x in ones
            if x["L_f"] == 1.0 and x["knots"] == r["knots"] and x["target"] == r["target"]
        )
        # the interpolant is linear in f: the error scales with L_f (to rounding)
        assert r["sup_error"] == pytest.approx(r["L_f"] * base["sup_error"], rel=1e-9)
    adv = [r for r in ones if r["target"] == "adversarial"]
    for r in adv:  # L_f h/2 exactly
        assert r["sup_error"] == pytest.approx(r["L_f"] / (2 * (r["knots"] - 1)), rel=1e-12)


# ------------------------------------------------------------------------------------ IF-R4
def test_if_r4_a_consistent_product_rule_is_refuted():
    c = claim("IF-R4")
    a1, a2, C1, C2, e = (c.symbol(n) for n in ("alpha1", "alpha2", "C_1", "C_2", "epsilon"))
    v = _quick("IF-R4")
    assert v.verdict == "verified-symbolic", v.evidence
    assert "N_total = C_1/epsilon**alpha1 + C_2/epsilon**alpha2" in v.evidence
    assert all(r["agree"] for r in v.measured["built"])
    assert any(r["counted"] == 1983 for r in v.measured["built"])  # 1882 + 101
    # the auditor's pair: internally consistent (alpha_total is N_total's exponent), both false
    product = _with("IF-R4", alpha_total=a1 + a2, N_total=C1 * C2 / e ** (a1 + a2))
    with overriding(product):
        w = _quick("IF-R4")
    assert w.verdict == "refuted", w.evidence
    assert "N_total = C_1*C_2*epsilon**(-alpha1 - alpha2)" in w.evidence
    assert w.witness["counted"] == 1983 and w.witness["N_total_claimed"] == 1882 * 101
    # each half alone
    for false in (
        _with("IF-R4", N_total=C1 * C2 / e ** (a1 + a2)),  # the true exponent, a false count
        _with("IF-R4", alpha_total=a1 + a2),  # the true count, a false exponent
        _with("IF-R4", N_total=sp.Max(C1 / e**a1, C2 / e**a2)),  # the dominant step only
    ):
        with overriding(false):
            w = _quick("IF-R4")
        assert w.verdict == "refuted", w.evidence


# ------------------------------------------------------------------------------------ IF-T1
@pytest.fixture
def small_k1(monkeypatch):
    """IF-K1's quick grid cut to T = 4 (the rate fit keeps its 3 points), the memo cleared
    before and after."""
    monkeypatch.setitem(ifc.K1_AXES, "quick", {"T": [4], "N": [8, 32, 128]})
    ifc._second_largest_grid.cache_clear()
    yield
    ifc._second_largest_grid.cache_clear()


def test_if_t1_a_one_layer_exponent_bounded_in_t_is_refuted(small_k1):
    c = claim("IF-T1")
    c1, et, a, b, T, C2 = (c.symbol(n) for n in ("c1", "epsilon", "a", "b", "T", "C2"))
    v = _quick("IF-T1")
    assert v.verdict == "verified-numeric", v.evidence
    assert "N1_lower = c1*epsilon**(-T*a - b)" in v.evidence and "dk/dT = a > 0" in v.evidence
    # the auditor's false claim: the exponent a + b/T, with a consistent separation
    n1 = c1 * et ** (-(a + b / T))
    with overriding(_with("IF-T1", N1_lower=n1, separation=n1 * et / C2)):
        w = _quick("IF-T1")
    assert w.verdict == "refuted", w.evidence
    assert "k(T) = a + b/T" in w.evidence and "(not linear in T) FAILS" in w.evidence
    assert w.witness["k(T)"] == "a + b/T"


@pytest.mark.parametrize(
    "which",
    ["falling", "quadratic", "separation", "not-a-power"],
)
def test_if_t1_other_false_one_layer_laws_are_refuted(which):
    c = claim("IF-T1")
    c1, et, a, b, T, C2 = (c.symbol(n) for n in ("c1", "epsilon", "a", "b", "T", "C2"))
    n1 = {
        "falling": c1 * et ** (-(b - a * T)),  # linear in T, slope -a
        "quadratic": c1 * et ** (-(a * T**2 + b)),
        "separation": c.expr("N1_lower"),
        "not-a-power": c1 * sp.exp(a * T / et),
    }[which]
    sep = n1 if which == "separation" else n1 * et / C2  # separation: N1_lower, not / N2_upper
    with overriding(_with("IF-T1", N1_lower=n1, separation=sep)):
        ok, text, witness = ifc.rates._one_layer_law(claim("IF-T1"))
    assert not ok and "FAILS" in text and witness is not None, text
    ok, text, witness = ifc.rates._one_layer_law(claim("IF-T1"))
    assert ok and witness is None, text
