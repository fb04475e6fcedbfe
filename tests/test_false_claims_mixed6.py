"""The sixth audit (42e): its false claims of ID-F4, IF-P1, IF-P3c, TO-R3 and PR-E2 are caught,
and the catalogue's claims keep their verdicts.

- ID-F4: the check took the claimed exponent as lr·d(log e)/d(lr), a number only for a pure power
  law; the auditor's per-step drift lr + lr² (a first-order term) raised a TypeError. The check
  now reads the claim's log-log slope over the measured rates and its order as lr -> 0: a term of
  order below lr² contradicts the one-step identity (ID-L5.1d: a step changes C by exactly
  lr²(W_K G Gᵀ W_Kᵀ - W_Q Gᵀ G W_Qᵀ), no O(lr) term), which the first SGD step also measures,
  so it is refuted; an expression with no usable value is refuted with the reason.
- IF-P1: the check read HC-T2a/HC-T2b only. The catalogue now carries the claim's threshold
  h_needed = D (T-free from h >= h_needed, ε^{-cT} below), and the calculus must agree with it
  cell by cell; the auditor's h >= D - 1 is refuted at h = D - 1.
- IF-P3c: the control's heads and the "same rate" were hard-coded. The catalogue now carries
  heads_ctrl = D + 1 (both layers) and alpha_gap_control = 0 (the control's ε-exponent minus
  (D, D)'s); the auditor's gap 1 is refuted.
- TO-R3, PR-E2: the direction was hard-coded. The catalogue now carries TO-R3's
  loss_sign_dimcut_minus_countcut = -1 and PR-E2's delta_distance_sign_early = -1; the reversed
  signs (the auditor's) and a claim of no difference are inconsistent.

Each false claim is swapped in with :func:`approxtheory.catalogue.overriding` and run on the quick
profile: ``refuted`` (the verified or exact parts) or ``inconsistent`` (consistent-empirical
claims), never an exception.
"""

import functools

import numpy as np
import pytest
import sympy as sp
from _helpers import false_claim as _with
from _helpers import keeps_verdict, run_quick, sign_turned_or_zero_is_inconsistent
from _helpers import run_false as _false

from approxtheory import claim
from approxtheory.catalogue import Condition

TRUE = {
    "ID-F4": "consistent-empirical",
    "IF-P1": "verified-symbolic",
    "IF-P3c": "verified-symbolic",
    "TO-R3": "consistent-empirical",
    "PR-E2": "consistent-empirical",
}


_true = functools.cache(run_quick)


@pytest.mark.parametrize("cid", sorted(TRUE))
def test_true_claims_keep_their_verdicts(cid):
    keeps_verdict(_true(cid), TRUE[cid])


# ------------------------------------------------------------------------------------- ID-F4
def _lr():
    return claim("ID-F4").symbol("lr")


def test_f4_true_claim_reads_the_power_law():
    v = _true("ID-F4")
    assert "the catalogue's 2 inside every interval: True" in v.evidence, v.evidence


def test_f4_auditor_first_order_term_is_refuted():
    """lr + lr²: one SGD step changes C by O(lr²) with no O(lr) term."""
    v = _false(_with("ID-F4", step_drift=_lr() + _lr() ** 2))
    assert v.verdict == "refuted", v.evidence
    assert "step_drift = lr**2 + lr" in v.evidence
    assert "a term of order lr^1, below lr^2" in v.evidence and "ID-L5.1d" in v.evidence


@pytest.mark.parametrize("order", [0, sp.Rational(3, 2)])
def test_f4_other_orders_below_the_identity_are_refuted(order):
    v = _false(_with("ID-F4", step_drift=_lr() ** order + _lr() ** 2))
    assert v.verdict == "refuted", v.evidence
    assert f"order lr^{float(order):g}" in v.evidence


def test_f4_higher_orders_stay_inconsistent():
    """A drift of order above lr² is allowed by the identity (where g_Q g_Qᵀ = g_K g_Kᵀ); only
    the measurement contradicts it, as before. lr² + lr³ (no power law) is compared by its
    log-log slope over the measured rates, above 2."""
    for e in (_lr() ** sp.Rational(5, 2), _lr() ** 2 + _lr() ** 3):
        v = _false(_with("ID-F4", step_drift=e))
        assert v.verdict == "inconsistent", (e, v.evidence)
    assert "is no power law" in v.evidence


@pytest.mark.parametrize(
    "e,words",
    [
        (-(claim("ID-F4").symbol("lr") ** 2), "no finite positive value"),
        (sp.Integer(0), "no finite positive value"),
        (sp.log(claim("ID-F4").symbol("lr")), "no finite positive value"),
        (sp.Symbol("y", positive=True) * claim("ID-F4").symbol("lr") ** 2, "symbols other"),
    ],
)
def test_f4_expression_without_a_value_is_refuted_with_the_reason(e, words):
    v = _false(_with("ID-F4", step_drift=e))
    assert v.verdict == "refuted" and words in v.evidence, v.evidence


def test_one_sgd_step_changes_the_imbalance_by_exactly_lr_squared():
    """The identity the refutation rests on, by hand on L = ½||W_Kᵀ W_Q - T||²: the change of
    C = W_Q W_Qᵀ - W_K W_Kᵀ over one gradient step, divided by lr², is the same at every lr
    (no first-order term); divided by lr + lr² it is not."""
    rng = np.random.default_rng(0)
    Wq, Wk = rng.standard_normal((3, 6)), rng.standard_normal((3, 6))
    Tgt = rng.standard_normal((6, 6))

    def change(lr):
        G = Wk.T @ Wq - Tgt
        q, k = Wq - lr * (Wk @ G), Wk - lr * (Wq @ G.T)
        return np.linalg.norm((q @ q.T - k @ k.T) - (Wq @ Wq.T - Wk @ Wk.T))

    lrs = (1e-1, 1e-2, 1e-3)
    per_lr2 = [change(lr) / lr**2 for lr in lrs]
    assert max(per_lr2) / min(per_lr2) - 1 < 1e-6
    per_false = [change(lr) / (lr + lr**2) for lr in lrs]
    assert max(per_false) / min(per_false) > 50


# ------------------------------------------------------------------------------------- IF-P1
def test_p1_reads_the_threshold():
    v = _true("IF-P1")
    assert "the claim read: h_needed = D" in v.evidence
    assert all(r["h_needed"] == r["D"] for r in v.rows)


def test_p1_auditor_threshold_one_head_lower_is_refuted():
    """h >= D - 1 T-free (the auditor's threshold and regime): false at h = D - 1, where
    HC-T2b's k is linear in T."""
    D = claim("IF-P1").symbol("D")
    h = sp.Symbol("h", positive=True, integer=True)
    false = _with("IF-P1", regime=[Condition(h >= D - 1, "h >= D - 1 (T-free)")], h_needed=D - 1)
    v = _false(false)
    assert v.verdict == "refuted", v.evidence
    w = v.witness
    assert w["h"] == w["D"] - 1 and w["claimed_T_free"] and w["depends_on_T"], w


@pytest.mark.parametrize("k", ["D + 1", "2*D", "D/2"])
def test_p1_other_thresholds_are_refuted(k):
    D = claim("IF-P1").symbol("D")
    v = _false(_with("IF-P1", h_needed=sp.sympify(k, locals={"D": D})))
    assert v.verdict == "refuted", v.evidence


def test_p1_threshold_without_a_value_is_refuted():
    D = claim("IF-P1").symbol("D")
    v = _false(_with("IF-P1", h_needed=D + sp.Symbol("y", positive=True)))
    assert v.verdict == "refuted" and "no usable value" in v.evidence, v.evidence


# ------------------------------------------------------------------------------------ IF-P3c
def test_p3c_reads_the_control_and_the_gap():
    v = _true("IF-P3c")
    assert "heads_ctrl = D + 1" in v.evidence and "alpha_gap_control = 0" in v.evidence
    assert all(r["control"] == f"({r['D'] + 1},{r['D'] + 1})" for r in v.rows)


def test_p3c_auditor_worse_control_is_refuted():
    D = claim("IF-P3c").symbol("D")
    v = _false(_with("IF-P3c", alpha_gap_control=sp.Integer(1), heads_ctrl=D + 1))
    assert v.verdict == "refuted", v.evidence
    assert v.witness["gap_claimed"] == "1" and v.witness["gap_measured"] == "0"


@pytest.mark.parametrize("field", ["heads_ctrl", "alpha_gap_control"])
def test_p3c_other_false_controls_are_refuted(field):
    """A control one head short in both layers ((D-1, D-1): below the threshold, T-dependent),
    or a control claimed better by one ε power."""
    D = claim("IF-P3c").symbol("D")
    new = {"heads_ctrl": D - 1, "alpha_gap_control": sp.Integer(-1)}[field]
    v = _false(_with("IF-P3c", **{field: new}))
    assert v.verdict == "refuted", v.evidence


def test_p3c_control_without_a_head_count_is_refuted():
    D = claim("IF-P3c").symbol("D")
    v = _false(_with("IF-P3c", heads_ctrl=D / 2 + sp.Rational(1, 3)))
    assert v.verdict == "refuted" and "no head count" in v.evidence, v.evidence


# ------------------------------------------------------------------------------ TO-R3, PR-E2
SIGNS = {"TO-R3": "loss_sign_dimcut_minus_countcut", "PR-E2": "delta_distance_sign_early"}


@pytest.mark.parametrize("cid", sorted(SIGNS))
def test_direction_claims_read_their_sign(cid):
    v = _true(cid)
    assert f"claim read: {SIGNS[cid]} = {sp.sstr(claim(cid).expr(SIGNS[cid]))}" in v.evidence
    assert "direction only" in v.scope


@pytest.mark.parametrize("cid", sorted(SIGNS))
def test_reversed_or_no_difference_is_inconsistent(cid):
    """The auditor's reversal (the sign turned) and a claim of no difference (sign 0)."""
    sign_turned_or_zero_is_inconsistent(cid, SIGNS[cid], said="claim read: ")


@pytest.mark.parametrize("cid", sorted(SIGNS))
def test_sign_without_a_value_is_inconsistent(cid):
    v = _false(_with(cid, **{SIGNS[cid]: sp.Symbol("y")}))
    assert v.verdict == "inconsistent" and "no usable direction" in v.evidence, v.evidence


def test_r3_measured_order_matches_the_claimed_sign():
    v = _true("TO-R3")
    assert v.measured["trained_cut_dim_minus_cut_heads"] <= 0
    assert v.measured["posthoc_prune_minus_svd"] > 0


def test_e2_measured_early_difference_matches_the_claimed_sign():
    v = _true("PR-E2")
    assert v.measured["delta_D1"]["hi"] < 0


@pytest.mark.parametrize(
    "cid,words,content",
    [
        (
            "TO-R3",
            "cutting head dimension hurts less than cutting head count",
            {"loss_sign_dimcut_minus_countcut": -1},
        ),
        ("PR-E2", "more local in the early wide-head layers (ΔD_l < 0)", {SIGNS["PR-E2"]: -1}),
        ("IF-P1", "h >= D gives a T-independent cost, h < D forces", {"h_needed": "D"}),
        ("IF-P3c", "one head more than needed in both layers", {"heads_ctrl": "D + 1"}),
        ("IF-P3c", "both T-independent with the same rate", {"alpha_gap_control": 0}),
    ],
)
def test_statement_is_pinned_beside_the_content_the_check_reads(cid, words, content):
    """No check parses prose: the statement's words are pinned next to the content that stands
    for them, so an edited statement fails until its content is reviewed with it."""
    c = claim(cid)
    assert words in c.statement, c.statement
    for k, want in content.items():
        if isinstance(want, str):  # a formula in D, written with the claim's own symbol
            want = sp.sympify(want, locals={"D": c.symbol("D")})
        assert sp.simplify(c.expr(k) - want) == 0, (k, c.expr(k))
