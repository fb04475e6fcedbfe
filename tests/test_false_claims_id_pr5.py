"""Audit 5 (ID-L5.1d, ID-F3, ID-E4.1, PR-E4): false claims that kept their verdict, or crashed the
check, are caught now, and the catalogue's claims keep theirs (all four passed before the fix:
verified-numeric, verified-numeric, verified-numeric, consistent-empirical).

- ID-L5.1d: the weight-decay factor was read at lr = 0.01, λ = 0.1 alone, so (1 - lr/10)²,
  (1 - 100 lr² λ)² or (1 - 10 lr λ²)² passed; it is now read at six (lr, λ), each symbol varied
  with the other held, against one step of torch's SGD with weight decay.
- ID-F3: the identified bias counts were read at E = 8, H = 2, D = 4 alone (2D, 4H and E all
  equal H·D there) and the regime D <= E never exercised; the ranks are now measured at further
  (E, H, D), two of them with D > E, where H·E entries of b_Q are identified (reported, not
  tested), so a regime dropped or widened is refuted. A count that leaves a symbol free, is not
  an integer or not finite is refuted with its reason, never an exception.
- ID-E4.1: only D was substituted into the count, then int() taken: an E-dependent count raised
  TypeError and a non-integer one was truncated in the witness. Every symbol is given its value
  now (E = 1: the claim's statement), E > 1 is reported, and such counts are refuted with a reason.
- PR-E4: the criterion read only the plateau's sign. The digest reports one magnitude, the final
  gap 'of order 0.01 nats' at every scale (§6), which the plateau must be (it lasts to the end of
  training): |gap_plateau| is held to it within half a decade, so a factor of 10 is inconsistent;
  a factor of 2 is not detectable from the digest, and the scope says so (direction only, plus an
  order of magnitude).

Each false claim is written by hand, swapped in with :func:`approxtheory.catalogue.overriding`,
and the check run on the quick profile.
"""

import dataclasses
import math

import sympy as sp
from _helpers import false_claim as _with
from _helpers import run_quick as _quick

from approxtheory import claim
from approxtheory.catalogue import identification as idc
from approxtheory.catalogue import overriding
from approxtheory.catalogue._claim import Condition
from approxtheory.proofs_check import PASSING, Context, run_check
from approxtheory.proofs_check.identification import invariances, remarks


# ---------------------------------------------------------------------------------- ID-L5.1d
def _agrees_at_the_old_point(false):
    c = claim("ID-L5.1d")
    at = {c.symbol("lr"): sp.Rational(1, 100), c.symbol("lambda"): sp.Rational(1, 10)}
    return sp.simplify((false - c.expr("decay_factor")).subs(at)) == 0


def test_id_l51d_true_factor_is_read_at_every_lr_lambda():
    pairs = invariances.DECAY_STEPS
    # each symbol varied with the other held
    assert len({lr for lr, lam in pairs if lam == 0.1}) >= 3
    assert len({lam for lr, lam in pairs if lr == 0.01}) >= 3
    v = _quick("ID-L5.1d")
    assert v.verdict == "verified-numeric", v.evidence
    assert "decay_factor = (-lambda*lr + 1)**2" in v.evidence
    # the measured factor is weight decay's (1 - lr λ) on each of W_Q, W_K, squared in C
    for lr, lam in pairs:
        assert f"(lr, λ) = ({lr:g}, {lam:g}): f {(1 - lr * lam) ** 2:.6g} measured" in v.evidence
    assert "NOT equal" not in v.evidence


def test_id_l51d_factors_agreeing_at_one_point_are_refuted(monkeypatch):
    c = claim("ID-L5.1d")
    lr, lam = c.symbol("lr"), c.symbol("lambda")
    for false in ((1 - lr / 10) ** 2, (1 - 100 * lr**2 * lam) ** 2, (1 - 10 * lr * lam**2) ** 2):
        assert _agrees_at_the_old_point(false)
        with overriding(_with("ID-L5.1d", decay_factor=false)):
            w = run_check("ID-L5.1d", Context(profile="quick"))
            with monkeypatch.context() as mp:
                mp.setattr(invariances, "DECAY_STEPS", ((0.01, 0.1),))
                old = run_check("ID-L5.1d", Context(profile="quick"))
        assert old.verdict in PASSING, (false, old.evidence)  # what the one point let through
        assert w.verdict == "refuted", (false, w.evidence)
        assert f"decay_factor = {sp.sstr(false)}" in w.evidence and "(NOT equal)" in w.evidence
        wl, wlam = w.witness["lr"], w.witness["lambda"]
        assert (wl, wlam) != (0.01, 0.1)
        assert math.isclose(w.witness["factor_measured"], (1 - wl * wlam) ** 2, rel_tol=1e-12)


def test_id_l51d_undetermined_or_infinite_factors_are_refuted_not_errors():
    c = claim("ID-L5.1d")
    lr, lam = c.symbol("lr"), c.symbol("lambda")
    true = c.expr("decay_factor")
    v = _quick("ID-L5.1d", _with("ID-L5.1d", decay_factor=true + idc.E))
    assert v.verdict == "refuted", v.evidence
    assert "leaves E free at lr = 1/100, lambda = 1/10" in v.evidence
    pole = true * (1 + 1 / (lam - sp.Rational(1, 10)))
    v = _quick("ID-L5.1d", _with("ID-L5.1d", decay_factor=pole))
    assert v.verdict == "refuted", v.evidence
    assert "is zoo at lr = 1/100, lambda = 1/10, not a finite real number" in v.evidence
    assert v.witness["factor_claimed"] == "zoo"
    # (1 - lr λ) (the decay on C rather than on W) differs everywhere
    v = _quick("ID-L5.1d", _with("ID-L5.1d", decay_factor=1 - lr * lam))
    assert v.verdict == "refuted"


# ------------------------------------------------------------------------------------- ID-F3
def test_id_f3_true_counts_pass_and_d_greater_than_e_is_reported():
    v = _quick("ID-F3")
    assert v.verdict == "verified-numeric", v.evidence
    assert v.slack == 1.0
    for cell in ("E=8 H=4 D=2 bias query 8 (claimed 8)", "E=6 H=3 D=5 bias query 15 (claimed 15)"):
        assert cell in v.evidence
    # D > E: b_Q acts through W_Kᵀ b_Q, of rank E per head: H·E, not H·D (reported, not tested)
    out = v.evidence.split("outside the regime (reported, not tested)")[1]
    assert "E=3 H=2 D=4 bias query 6 (claimed 8)" in out
    assert "E=2 H=1 D=3 bias query 2 (claimed 3)" in out
    assert "the other side of the regime at (2,1,3), (3,2,4)" in v.scope
    assert claim("ID-F3").regime[0].outside  # its regime mutants are required


def test_id_f3_counts_agreeing_at_e8_h2_d4_are_refuted(monkeypatch):
    E, H, D = idc.E, idc.H, idc.D
    for false, where in (
        (2 * D, "E=8 H=4 D=2 bias, where the query bias's identified dimension is 8, not 4"),
        (4 * H, "E=8 H=4 D=2 bias, where the query bias's identified dimension is 8, not 16"),
        (E, "E=6 H=3 D=5 bias, where the query bias's identified dimension is 15, not 6"),
    ):
        assert (false - H * D).subs({E: 8, H: 2, D: 4}) == 0
        with overriding(_with("ID-F3", identified_query_bias=false)):
            w = run_check("ID-F3", Context(profile="quick"))
            with monkeypatch.context() as mp:
                mp.setattr(remarks, "F3_CELLS", ())
                old = run_check("ID-F3", Context(profile="quick"))
        assert old.verdict in PASSING, (false, old.evidence)
        assert w.verdict == "refuted", (false, w.evidence)
        assert f"the claim's regime admits {where}" in w.evidence, w.evidence


def test_id_f3_regime_dropped_or_widened_is_refuted():
    c = claim("ID-F3")
    E, D = c.symbol("E"), c.symbol("D")
    dropped = dataclasses.replace(c, regime=())
    widened = _with("ID-F3", regime=[Condition(sp.Le(D, E + 1), "D <= E + 1")])
    for false in (dropped, widened):
        w = _quick("ID-F3", false)
        assert w.verdict == "refuted", w.evidence
        assert "the claim's regime admits E=3 H=2 D=4 bias (D > E)" in w.evidence
        assert "identified dimension is 6, not 8" in w.evidence
        assert w.witness["rank"] == 6 and w.witness["claimed"] == 8
    # the general count H·min(D, E) is true on both sides: it passes with the regime dropped
    general = dataclasses.replace(
        dropped, expressions={**c.expressions, "identified_query_bias": idc.H * sp.Min(D, E)}
    )
    assert _quick("ID-F3", general).verdict == "verified-numeric"


def test_id_f3_counts_without_an_integer_value_are_refuted_not_errors():
    H, D = idc.H, idc.D
    cases = (
        ("identified_query_bias", H * D / 3, "is 8/3 at E = 8, H = 2, D = 4, not an integer"),
        ("identified_query_bias", H * D + idc.G, "leaves G free at E = 8, H = 2, D = 4"),
        ("identified_key_bias", 1 / (D - 4), "is zoo at E = 8, H = 2, D = 4, not a finite real"),
    )
    for name, false, why in cases:
        w = _quick("ID-F3", _with("ID-F3", **{name: false}))
        assert w.verdict == "refuted", (false, w.evidence)
        assert why in w.evidence and why in w.witness["why"], w.evidence
        assert "the claim's count has no value" in w.evidence


# ------------------------------------------------------------------------------------ ID-E4.1
def test_id_e41_true_count_passes_and_e_above_one_is_reported():
    v = _quick("ID-E4.1")
    assert v.verdict == "verified-numeric", v.evidence
    assert all(r["E"] == 1 and r["agrees"] for r in v.rows)
    # at E > 1 the count is 2DE - E² (ID-L4.1w), not 2D - 1: reported, outside the statement
    out = v.evidence.split("outside the statement (reported, not tested)")[1]
    for D, E in ((2, 2), (3, 2), (4, 3)):
        assert f"(D,E)=({D},{E}): U {2 * D * E - E**2} measured vs {2 * D - 1}" in out


def test_id_e41_e_dependent_or_broken_counts_are_refuted_not_errors():
    D, E, H = idc.D, idc.E, idc.H
    cases = (
        # E-dependent and wrong at E = 1 (used to raise TypeError at int(U))
        (2 * D * E - 2, "NOT at (D,E)=(1,1): U 1 of P 2 measured, claimed U 0 of P 2", 0),
        (2 * D - H, "U = 2*D - H leaves H free at D = 1, E = 1", "2*D - H"),
        # used to be truncated to int: 3/2 shown as 1
        (2 * D - sp.Rational(1, 2), "is 3/2 at D = 1, E = 1, not an integer count", "3/2"),
        (2 * D - 1 + 1 / (D - 1), "is zoo at D = 1, E = 1, not a finite real number", "zoo"),
    )
    for false, text, shown in cases:
        w = _quick("ID-E4.1", _with("ID-E4.1", U=false))
        assert w.verdict == "refuted", (false, w.evidence)
        assert text in w.evidence, w.evidence
        assert w.witness["U_claimed"] == shown and w.witness["U_measured"] == 1
    # an E-dependent count equal to 2D - 1 at E = 1 states the same thing at E = 1, the claim's
    # setting: it passes, and its (wrong) E > 1 values are reported
    same = _quick("ID-E4.1", _with("ID-E4.1", U=2 * D * E - 1, P=2 * D * E))
    assert same.verdict == "verified-numeric", same.evidence
    assert "(D,E)=(3,2): U 8 measured vs 11" in same.evidence


# -------------------------------------------------------------------------------------- PR-E4
def test_pr_e4_true_gap_keeps_its_verdict_and_says_what_it_tests():
    v = _quick("PR-E4")
    assert v.verdict == "consistent-empirical", v.evidence
    assert "direction only, plus an order of magnitude" in v.scope
    lo, hi = 0.01 / math.sqrt(10), 0.01 * math.sqrt(10)
    assert f"within half a decade, [{lo:.4g}, {hi:.4g}] (it is)" in v.evidence
    assert "a factor of 2 is within it" in v.evidence


def test_pr_e4_sign_and_decade_errors_are_inconsistent():
    g = claim("PR-E4").expr("gap_plateau")
    flipped = _quick("PR-E4", _with("PR-E4", gap_plateau=-g))
    assert flipped.verdict == "inconsistent", flipped.evidence
    assert flipped.measured["later_after_noisy"] > 0
    for k in (10, sp.Rational(1, 10)):
        w = _quick("PR-E4", _with("PR-E4", gap_plateau=k * g))
        assert w.verdict == "inconsistent", (k, w.evidence)
        assert w.measured["later_after_noisy"] == 0  # the direction is right: the size is not
        assert "(it is NOT: the figure's plateau and the final losses disagree)" in w.evidence
        assert w.witness["gap_plateau"] == float(k * g)
    # a factor of 2 stays inside the digest's order of magnitude (the scope says so)
    assert _quick("PR-E4", _with("PR-E4", gap_plateau=2 * g)).verdict == "consistent-empirical"
