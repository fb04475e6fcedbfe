"""Audit 42's two headcount survivors: false claims that agree with the catalogue's claim where
the checks used to look are refuted now.

- HC-P3: β_needed = log(T/ε)/(10 g²) equals the claim's log(T/ε)/g at g = 0.1 only, the one
  gap the check used to measure; the check now fits per gap g in P3_GAPS and tests the level.
- HC-T1: S_min = T²/16 equals the claim's T/4 at T = 4 only, the one length the check used to
  read; the check now also reads S_min at T = 16 (and builds the construction there).

Each test writes its false claim by hand, swaps it in with
:func:`approxtheory.catalogue.overriding` and runs the check on the quick profile: the false
claim must be refuted (not an error, not a survivor) and the catalogue's claim must still pass.
"""

import sympy as sp
from _helpers import false_claim as _with
from _helpers import run_quick as _run

from approxtheory import claim
from approxtheory.proofs_check import headcount_more as hm
from approxtheory.proofs_check.headcount import theorem2


# ------------------------------------------------------------------------------------- HC-P3
def test_hc_p3_g_dependence_wrong_away_from_g_01_is_refuted():
    c = claim("HC-P3")
    T, eps, g = c.symbol("T"), c.symbol("epsilon"), c.symbol("g")
    false = _with("HC-P3", beta_needed=sp.log(T / eps) / (10 * g**2))
    # the false law agrees with the claim at g = 0.1 (the gap the check used to measure alone)
    at = {T: 32, eps: sp.Rational(1, 100)}
    assert (
        sp.simplify(
            (false.expr("beta_needed") - c.expr("beta_needed")).subs({**at, g: sp.Rational(1, 10)})
        )
        == 0
    )
    assert len(theorem2.P3_GAPS) >= 2 and 0.1 in theorem2.P3_GAPS
    v = _run("HC-P3", false)
    assert v.verdict == "refuted", v.evidence
    # refuted at the other gaps, both by the per-gap slopes and by the level
    assert "T-dependence at g = [0.25, 0.5]" in v.evidence, v.evidence
    assert "does not suffice" in v.evidence, v.evidence
    w = v.witness
    assert w["g"] != 0.1 and w["beta_needed"] > w["claimed_beta_needed"]
    assert w["sup_error_at_claimed_beta"] > w["eps"]


def test_hc_p3_g_blind_claim_is_refuted():
    # the other direction: a claim too large away from g = 0.1 (β_needed = 10 log(T/ε), equal
    # to log(T/ε)/g at g = 0.1) passes the level but not the per-gap slopes
    c = claim("HC-P3")
    T, eps = c.symbol("T"), c.symbol("epsilon")
    v = _run("HC-P3", _with("HC-P3", beta_needed=10 * sp.log(T / eps)))
    assert v.verdict == "refuted", v.evidence
    assert "does not suffice" not in v.evidence, v.evidence


def test_hc_p3_catalogue_claim_still_passes_at_every_gap():
    v = _run("HC-P3")
    assert v.verdict == "verified-numeric", v.evidence
    gs = sorted({r["g"] for r in v.rows})
    assert gs == sorted(theorem2.P3_GAPS)
    # every free symbol of the formula is varied
    assert len({r["T"] for r in v.rows}) > 1 and len({r["eps"] for r in v.rows}) > 1
    assert set(v.measured["fits_by_g"]) == {str(g) for g in theorem2.P3_GAPS}
    assert all(r["beta_needed"] <= r["claimed_beta_needed"] for r in v.rows)
    assert f"gap g in {list(theorem2.P3_GAPS)}" in v.covered
    assert v.slack >= 1


# ------------------------------------------------------------------------------------- HC-T1
def test_hc_t1_s_min_wrong_away_from_t_4_is_refuted():
    T = claim("HC-T1").symbol("T")
    false = _with("HC-T1", S_min=T**2 / 16)
    # the false formula agrees with the claim at T = 4 (the length the check used to read alone)
    assert false.evaluate_float("S_min", T=4) == claim("HC-T1").evaluate_float("S_min", T=4)
    v = _run("HC-T1", false)
    assert v.verdict == "refuted", v.evidence
    assert f"at T = {hm.T1_T_WIDE} forces S_i = [T]" in v.evidence, v.evidence
    assert v.measured > v.claimed and len(v.witness["X"]) == hm.T1_T_WIDE


def test_hc_t1_catalogue_claim_still_passes_at_both_lengths():
    v = _run("HC-T1")
    assert v.verdict == "verified-numeric", v.evidence
    assert {r["T"] for r in v.rows} == {hm.T1_T, hm.T1_T_WIDE}
    # at T = 16 the claim's m = 4: 2·C(16, 4) features, ε reached
    wide = [r for r in v.rows if r["T"] == hm.T1_T_WIDE]
    assert wide[-1]["features_D"] == 3640 and wide[-1]["sup_error"] <= hm.T1_EPS
    assert "S_min(4) = 1, S_min(16) = 4" in v.evidence, v.evidence
