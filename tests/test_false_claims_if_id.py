"""Audit 42's four survivors (IF-R3, IF-K1, ID-L4.3, ID-S5.1): false claims that agreed with the
true one wherever the check used to look (|I| = 1 or d = 1; β = 1e4; D < E; H = 4) are refuted
now, and the catalogue's claims still pass.

Each test writes the auditor's false claim by hand, swaps it in with
:func:`approxtheory.catalogue.overriding` and runs the check on the quick profile: the verdict
must be ``refuted`` (not an error, not a survivor). Where it is cheap, the check is also run on
the configurations it used to measure alone, where the false claim passed.
"""

import pytest
import sympy as sp
from _helpers import false_claim as _with
from _helpers import run_quick as _quick
from _helpers import small_k1_grid

from approxtheory import claim
from approxtheory.catalogue import overriding
from approxtheory.catalogue._claim import Condition
from approxtheory.proofs_check import PASSING
from approxtheory.proofs_check import infoflow as ifc
from approxtheory.proofs_check.identification import invariances


# ------------------------------------------------------------------------------------ IF-R3
def test_if_r3_an_exponent_agreeing_when_i_or_d_is_1_is_refuted(monkeypatch):
    c = claim("IF-R3")
    C4, eps, I, d = (c.symbol(k) for k in ("C4", "epsilon", "I_size", "d"))
    # |I| + d - 1 equals |I| d whenever |I| = 1 or d = 1
    false = _with("IF-R3", N_decode=C4 / eps ** (I + d - 1))
    for i, k in ((1, 1), (2, 1), (1, 2), (1, 5), (3, 1)):
        assert (i + k - 1) == i * k
    v = _quick("IF-R3")
    assert v.verdict == "verified-numeric", v.evidence
    assert (2, 2) in ifc.costs.R3_CASES and "|I|=2, d=2 (m = 4)" in v.evidence
    assert "(2, 2)" in v.covered
    with overriding(false):
        w = _quick("IF-R3")
        with monkeypatch.context() as mp:  # the cases the check used to measure alone
            mp.setattr(ifc.costs, "R3_CASES", ((1, 1), (2, 1), (1, 2)))
            old = _quick("IF-R3")
    assert old.verdict in PASSING
    assert w.verdict == "refuted", w.evidence
    failing = [p for p in w.evidence.split("; ") if "FAILS" in p]
    assert len(failing) == 1 and failing[0].startswith("|I|=2, d=2")


# ------------------------------------------------------------------------------------ IF-K1
@pytest.fixture
def small_k1(monkeypatch):
    """IF-K1's quick grid cut to T = 4 (its N fit keeps 3 points; the β sweep is whole), the
    memos cleared before and after."""
    grids = (ifc.rates._second_largest_grid, ifc.rates._second_largest_beta_sweep)
    yield from small_k1_grid(monkeypatch, grids)


def test_if_k1_a_bound_agreeing_at_beta_1e4_only_is_refuted(small_k1):
    c = claim("IF-K1")
    Lf, T, b, N = (c.symbol(k) for k in ("L_f", "T", "beta", "N"))
    false = _with(
        "IF-K1",
        err_bound=200 * Lf * (sp.log(b * T) + 1) / b ** sp.Rational(3, 2) + Lf / N,
    )
    at = {Lf: sp.Rational(13, 2), T: 4, N: 8}
    assert sp.simplify((false.expr("err_bound") - c.expr("err_bound")).subs({**at, b: 10**4})) == 0
    v = _quick("IF-K1")
    assert v.verdict == "verified-numeric", v.evidence
    sweep = v.measured["beta_sweep"]
    assert len({r["beta"] for r in sweep}) >= 3 and {r["L_f"] for r in sweep} == {1.0}
    assert all(r["verdict"] == "within-bound" for r in sweep)
    assert "β-law" in v.evidence and "β sweep" in v.covered
    with overriding(false):
        w = _quick("IF-K1")
    assert w.verdict == "refuted", w.evidence
    # the error falls like 1/β, the false floor like β^-3/2: the β-law fails
    law = w.evidence.split("β-law")[1]
    assert "FAILS" in law and "beta**(3/2)" in law
    assert [s for s in w.slopes if "vs β" in s["label"]][0]["predicted"] == -1.5


# ---------------------------------------------------------------------------------- ID-L4.3
def test_id_l43_a_regime_admitting_d_above_e_is_refuted():
    c = claim("ID-L4.3")
    D, E = c.symbol("D"), c.symbol("E")
    v = _quick("ID-L4.3")
    assert v.verdict == "verified-numeric", v.evidence
    outside = [r for r in v.rows if not r["in_regime"]]
    # the other side is measured and reported: D > E, where the null space is smaller than D²
    assert outside and all(r["D"] > r["E"] and r["null_dim"] < r["D"] ** 2 for r in outside)
    assert all(r["agrees"] for r in v.rows if r["in_regime"])
    assert "outside it (reported, not tested)" in v.evidence
    (le,) = [r for r in c.regime if r.description == "D <= E"]
    wide = Condition(sp.Le(D, E + 1), "D <= E + 1")
    for regime in ((), (wide,)):  # D <= E dropped (the auditor's claim); widened by one
        with overriding(_with("ID-L4.3", regime=regime)):
            w = _quick("ID-L4.3")
        assert w.verdict == "refuted", w.evidence
        assert "the claim's regime admits (D,E)=(3,2) (D > E)" in w.evidence
        assert w.witness["D"] > w.witness["E"] and w.witness["null_dim"] < w.witness["claimed"]
    assert le in c.regime  # the override did not touch the catalogue


# ---------------------------------------------------------------------------------- ID-S5.1
def test_id_s51_a_rho_agreeing_at_h4_only_is_refuted(monkeypatch):
    c = claim("ID-S5.1")
    H = c.symbol("H")
    false = _with("ID-S5.1", rho_isotropic=1 / (H + 4))
    assert sp.simplify((false.expr("rho_isotropic") - c.expr("rho_isotropic")).subs(H, 4)) == 0
    v = _quick("ID-S5.1")
    assert v.verdict == "verified-numeric", v.evidence
    assert {r["H"] for r in v.rows} >= {1, 2, 4} and len({r["E"] for r in v.rows}) >= 2
    assert "H = 1" in v.evidence and "H = 2" in v.evidence
    with overriding(false):
        w = _quick("ID-S5.1")
        with monkeypatch.context() as mp:  # the one configuration the check used to measure
            mp.setattr(invariances, "PROJECTION_CONFIGS", ((8, 32),))
            old = _quick("ID-S5.1")
    assert old.verdict in PASSING
    assert w.verdict == "refuted", w.evidence
    assert {r["H"] for r in w.rows if not r["agrees"]} == {1, 2}
