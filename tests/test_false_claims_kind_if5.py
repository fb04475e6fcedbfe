"""The fifth audit's survivors on the generic side and in InfoFlow: false claims that kept their
verdict are refuted now, and the catalogue's claims keep theirs.

- The bound's side (``kind:flip``): TO-X4 read as a lower bound (the softmax changes by *at
  least* e^{2δ} - 1) stayed verified, because the check compared in a direction of its own. The
  check now reads the claim's kind, and the runner holds every passing check's rows that carry
  ``claimed_bound`` and ``sup_error`` to the claim's side (a generic ``kind:flip`` claim mutant,
  required where the check found the claim strictly inside its bound).
- IF-K2 without its factor D (err_bound = 2 err_attn): the quick grid had D <= 2 with
  independent A_i, whose worst case sits about 7 times inside the bound, so the D-blind bound
  passed. The check now also builds D = 16 with every A_i equal (the D errors add up: the task
  family's worst case for the D-dependence).
"""

from dataclasses import replace

import pytest
import sympy as sp
from _helpers import false_claim as _with
from _helpers import run_quick as _run

from approxtheory import claim
from approxtheory.catalogue.mutate import claim_mutants
from approxtheory.proofs_check._core import side_violations

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


# ------------------------------------------------------------------------------ the side rule
def test_side_violations_read_the_kind():
    rows = [{"claimed_bound": 1.0, "sup_error": 0.5}, {"claimed_bound": 2.0, "sup_error": 2.0}]
    assert side_violations(rows, "upper") == []
    assert side_violations(rows, "construction") == []
    assert side_violations(rows, "lower") == [rows[0]]  # the tight row is on the bound
    assert side_violations(rows, "exact") == []  # no side
    above = [{"claimed_bound": 1.0, "sup_error": 1.5}, {"claimed_bound": 1.0, "sup_error": "x"}]
    assert side_violations(above, "upper") == [above[0]]
    # round-off is not a violation; NaN rows are not read here (the checks fail on them)
    assert side_violations([{"claimed_bound": 1.0, "sup_error": 1 + 1e-14}], "upper") == []
    assert side_violations([{"claimed_bound": 1.0, "sup_error": float("nan")}], "upper") == []


def test_kind_flip_mutant_is_required_only_strictly_inside():
    c = claim("TO-X4")
    strict = {m.name: m for m in claim_mutants(c, slack=2.0)}["kind:flip"]
    assert strict.required and strict.claim.kind == "lower" and strict.kind == "kind"
    tight = {m.name: m for m in claim_mutants(c, slack=1.0)}["kind:flip"]
    assert not tight.required
    assert "kind:flip" not in {m.name for m in claim_mutants(claim("ID-E4.1"), slack=2.0)}


# -------------------------------------------------------------------------------------- TO-X4
def test_to_x4_true_claim_is_verified_and_prints_the_formulas_it_read():
    v = _run("TO-X4")
    assert v.verdict == "verified-numeric", v.evidence
    assert "l1_change = exp(2*delta) - 1" in v.evidence
    assert v.evidence.startswith("upper bounds")


def test_to_x4_read_as_a_lower_bound_is_refuted():
    c = claim("TO-X4")
    v = _run("TO-X4", replace(c, kind="lower"))
    assert v.verdict == "refuted", v.evidence
    assert "read as a lower bound" in v.evidence


@pytest.mark.parametrize("cid", ["HC-L9", "IF-T2"])
def test_a_check_with_bound_rows_is_held_to_the_flipped_side(cid):
    c = claim(cid)
    assert _run(cid).verdict == "verified-numeric"
    v = _run(cid, replace(c, kind="lower"))
    assert v.verdict == "refuted", v.evidence
    assert "the claim is a lower bound, but in" in v.evidence
    assert v.witness is not None and v.witness["sup_error"] < v.witness["claimed_bound"]


# -------------------------------------------------------------------------------------- IF-K2
def test_if_k2_true_claim_holds_on_the_tied_cells():
    v = _run("IF-K2")
    assert v.verdict == "verified-numeric", v.evidence
    tied = [r for r in v.rows if r["tied"]]
    assert tied and {r["D"] for r in tied} == {16}
    one = {r["beta"]: r["sup_error"] for r in v.rows if r["D"] == 1 and r["T"] == 8}
    # the tied terms err together: their sup is exactly 16 times one term's; both are searched
    # (lower bounds on the sup), so the found ones agree to the search's reach
    for r in tied:
        assert 0.9 < r["sup_error"] / (16 * one[r["beta"]]) < 1.1, r
    assert "D=16 tied" in v.covered


def test_if_k2_without_its_factor_d_is_refuted():
    c = claim("IF-K2")
    D = c.symbol("D")
    false = _with("IF-K2", err_bound=c.expr("err_bound").subs(D, 1))
    v = _run("IF-K2", false)
    assert v.verdict == "refuted", v.evidence
    assert v.witness["D"] == 16 and v.witness["tied"] == 1


# -------------------------------------------------------------------------------------- IF-E1
def test_if_e1_true_share_lies_in_the_measured_interval():
    from approxtheory.proofs_check.infoflow.trained_spa import share_interval

    v = _run("IF-E1")
    assert v.verdict == "consistent-empirical", v.evidence
    assert "inside the share each seed measures" in v.evidence
    for r in v.measured:
        lo, hi = share_interval(r)
        assert lo <= 1 / 3 <= hi


@pytest.mark.parametrize("share", [sp.Rational(7, 20), sp.Rational(8, 25)])
def test_if_e1_a_share_inside_the_digest_band_but_off_the_measurement_is_inconsistent(share):
    # 0.35 and 0.32 sit inside the digest's band around themselves and around 1/3 alike
    v = _run("IF-E1", _with("IF-E1", weight_per_position=share))
    assert v.verdict == "inconsistent", v.evidence


# -------------------------------------------------------------------------------------- IF-P4
def test_if_p4_reads_the_order_of_comparison():
    v = _run("IF-P4")
    assert v.verdict == "consistent-empirical", v.evidence
    assert "comparisons = T**3: order 3" in v.evidence


def test_if_p4_with_pairwise_comparisons_is_inconsistent():
    # order 2: two layers resolve pairwise comparisons (W3), so no growth is implied; the
    # measured growth contradicts it
    T = claim("IF-P4").symbol("T")
    v = _run("IF-P4", _with("IF-P4", comparisons=T**2))
    assert v.verdict == "inconsistent", v.evidence


def test_if_p4_with_a_negative_count_is_inconsistent():
    # the generated sign mutant (direction only: it must flip): -T^3 counts nothing
    T = claim("IF-P4").symbol("T")
    v = _run("IF-P4", _with("IF-P4", comparisons=-(T**3)))
    assert v.verdict == "inconsistent", v.evidence
    assert "positive leading coefficient" in v.evidence


# ------------------------------------------------------- a generated mutant that crashed a check
def test_hc_l3_pivot_that_is_infinite_on_the_domain_is_refuted_not_a_crash():
    # verify --mutants found HC-L3 raising on x_tilde * (Y/0.5)^(-1/2): infinite at Y = 0
    from approxtheory.catalogue.mutate import pivot_mutants

    c = claim("HC-L3")
    (minus,) = [
        m for m in pivot_mutants(c, [("fixed", "x_tilde", c.symbol("Y"), 0.5)]) if "-" in m.name
    ]
    v = _run("HC-L3", minus.claim)
    assert v.verdict == "refuted", v.evidence
    assert "is not finite" in v.evidence


# ----------------------------------------------------------------- the seventh audit: HC-L2/L3
def _l2_swapped():
    # 1 - Z = max(x_t, v_m): the m-th largest written for the m-th smallest (Lemma 2: w_m)
    c = claim("HC-L2")
    return _with("HC-L2", one_minus_Z=sp.Max(c.symbol("x_t"), c.symbol("v_m")))


@pytest.mark.parametrize("cid", ["HC-L2", "HC-L3"])
def test_hc_l2_with_v_and_w_swapped_is_refuted_by_both_checks_not_a_crash(cid):
    assert _run(cid).verdict == "verified-numeric"
    v = _run(cid, _l2_swapped())
    assert v.verdict == "refuted", v.evidence


def test_hc_l2_prints_the_formulas_it_read_and_refuses_an_undefined_symbol():
    v = _run("HC-L2")
    assert "Y = Min(v_m, x_t)" in v.evidence and "1 - Z = Max(w_m, x_t)" in v.evidence
    q = claim("HC-L3").symbol("q")  # a symbol Lemma 2 does not define
    c = claim("HC-L2")
    v = _run("HC-L2", _with("HC-L2", Y=sp.Min(c.symbol("x_t"), c.symbol("v_m")) + 0 * q + q))
    assert v.verdict == "refuted" and v.witness == {"free_symbols": ["q"]}, v.evidence
