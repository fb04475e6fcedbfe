"""The eleventh audit's TO survivors, fixed: TO-C1's weight_change_factor read per weight, and
TO-R2's directions decided on one interval over seeds for every sign.

- TO-C1: the factor was read only against the ℓ1 change of the weight vector (at most
  2 tanh(δ/2) <= e^δ - 1), so e^δ - 1 passed. The digest states it per weight: α'_s/α_s lies in
  [e^{-2δ}, e^{2δ}], so |α'_s/α_s - 1| <= e^{2δ} - 1. The check now measures the largest
  |α'_s/α_s - 1| on every built head; the adversarial split with one key at -Rv among L - 2 at
  +Rv drives it to e^{2δ} - 1 as L grows, far above e^δ - 1.
- TO-R2: sign 0 of P7 was read on the per-seed range, -1 on the seed mean, so the same two seeds
  passed both. Every sign (P6 and P7) is now read on the range over seeds of one per-seed
  statistic: consistent when the range lies on the claimed side, inconsistent when on the
  other side, UNDER-POWERED (not-checkable) when it straddles 0 (P7's sign 0, "no difference",
  with no equivalence margin stated, is never shown: under-powered when the range contains 0).
"""

import numpy as np
import pytest
import sympy as sp
from _helpers import false_claim as _with
from _helpers import layers_row, layers_trace

from approxtheory import claim
from approxtheory.catalogue import overriding
from approxtheory.proofs_check import Context, run_check
from approxtheory.proofs_check.tradeoffs import heads
from approxtheory.proofs_check.tradeoffs import trained as chk

# ------------------------------------------------------------------------------------- TO-C1
#: a small adversarial sweep: δ = σR² small against L (e^{2δ} << L), where the per-weight ratio
#: comes close to e^{2δ}
_SMALL = {"sigma": (0.05,), "sigma_v": (1.0,), "R": (1.0,), "L": (3, 64), "r": (1,)}


def _factor(**exprs):
    """The catalogue's weight_change_factor (or a replacement) as a function of (σ_{r+1}, R)."""
    c = claim("TO-C1")
    e = exprs.get("weight_change_factor", c.expressions["weight_change_factor"])
    return sp.lambdify((c.symbol("sigma_r1"), c.symbol("R")), e, "numpy")


def _false_factor():
    c = claim("TO-C1")
    return sp.exp(c.symbol("R") ** 2 * c.symbol("sigma_r1")) - 1  # e^δ - 1


@pytest.fixture
def small_sweep(monkeypatch):
    monkeypatch.setitem(heads._C1_SWEEP, "quick", _SMALL)


def test_c1_per_weight_change_reaches_the_true_factor(small_sweep):
    """At L = 64, δ = 0.05 the split k = L - 2 moves one weight by 0.98 of e^{2δ} - 1: within
    the true factor, above e^δ - 1 by about 1.9x; the ℓ1 change stays below e^δ - 1, so the ℓ1
    reading alone cannot tell the two factors apart."""
    fam = heads._c1_adversarial("quick", 0, None)
    true_f, false_f = _factor(), _factor(weight_change_factor=_false_factor())
    rel = max(float(np.max(f["rel"] / true_f(f["sigma_r1"], f["R"]))) for f in fam)
    assert 0.95 < rel <= 1 + 1e-9, rel
    best = max(fam, key=lambda f: float(np.max(f["rel"])))
    assert best["L"] == 64 and int(best["k"][np.argmax(best["rel"])]) == 62
    over = max(float(np.max(f["rel"] / false_f(f["sigma_r1"], f["R"]))) for f in fam)
    assert over > 1.8, over
    l1 = max(float(np.max(f["l1"] / false_f(f["sigma_r1"], f["R"]))) for f in fam)
    assert l1 < 1, l1


def test_c1_check_refutes_the_false_factor_and_keeps_the_true_one(small_sweep):
    v = run_check("TO-C1", Context(profile="quick"))
    assert v.verdict == "verified-numeric", v.evidence
    assert 0.95 < v.measured["weight_rel"] <= 1 + 1e-9, v.measured
    assert "per-weight change" in v.evidence
    with overriding(_with("TO-C1", weight_change_factor=_false_factor())):
        v = run_check("TO-C1", Context(profile="quick"))
    assert v.verdict == "refuted", v.evidence
    assert v.measured["weight_rel"] > 1.8 and v.measured["weight"] <= 1, v.measured
    assert "weight_rel" in v.witness and v.witness["weight_rel"]["L"] == 64


# ------------------------------------------------------------------------------------- TO-R2
def _rows(front_back, first_minus_later):
    """tradeoffs_layers rows and trace: per seed s, front - back = front_back[s] (back 2.0) and
    layer 1's Δ(r) minus every later layer's = first_minus_later[s] (later 0.1, 0.1, 0.2)."""
    rows, trace = [], []
    for s, (fb, fl) in enumerate(zip(front_back, first_minus_later)):
        for k, loss in (("uniform", 2.0), ("front", 2.0 + fb), ("back", 2.0)):
            rows.append(layers_row(k, s, loss))
        # layer 1 sits fl above the costliest later layer (fl > 0) or below the cheapest
        first = (0.2 + fl) if fl >= 0 else (0.1 + fl)
        trace += layers_trace(s, {1: first, 2: 0.1, 3: 0.1, 4: 0.2}.__getitem__)
    return rows, trace


def _verdict(rows_trace, **signs):
    rows, trace = rows_trace
    exprs = {k: sp.Integer(v) for k, v in signs.items()}
    with overriding(_with("TO-R2", **exprs)):
        return chk.layer_allocation_verdict("TO-R2", rows, trace, "quick")


CLEAR_P6 = (0.5, 0.4, 0.3)  # layer 1 the costliest in every seed
FRONT_BETTER, BACK_BETTER, MIXED = (-0.05, -0.02, -0.01), (0.03, 0.01, 0.02), (-0.06, 0.013, -0.01)


@pytest.mark.parametrize(
    "sign, fb, want",
    [
        (-1, FRONT_BETTER, "consistent-empirical"),
        (-1, BACK_BETTER, "inconsistent"),
        (-1, MIXED, "not-checkable"),
        (-1, (0.0, 0.0, 0.0), "inconsistent"),  # every seed tied: no strict ordering
        (1, BACK_BETTER, "consistent-empirical"),
        (1, FRONT_BETTER, "inconsistent"),
        (1, MIXED, "not-checkable"),
        (0, MIXED, "not-checkable"),  # no equivalence margin: "no difference" is never shown
        (0, FRONT_BETTER, "inconsistent"),
        (0, BACK_BETTER, "inconsistent"),
    ],
)
def test_r2_p7_rule_for_every_sign(sign, fb, want):
    v = _verdict(_rows(fb, CLEAR_P6), loss_sign_front_minus_back=sign)
    assert v.verdict == want, v.evidence
    if want == "not-checkable":
        assert v.evidence.startswith("UNDER-POWERED") and "straddles 0" in v.evidence
        assert "full profile's larger models" in v.evidence and "3 seeds" in v.evidence
        assert v.scope == "none"
    if want == "inconsistent":
        assert "Failed: P7" in v.evidence


@pytest.mark.parametrize(
    "sign, fl, want",
    [
        (-1, (0.5, 0.4, 0.3), "consistent-empirical"),
        (-1, (-0.05, -0.02, -0.01), "inconsistent"),
        (-1, (0.3, -0.01, 0.2), "not-checkable"),
        (1, (-0.05, -0.02, -0.01), "consistent-empirical"),
        (1, (0.5, 0.4, 0.3), "inconsistent"),
        (1, (0.3, -0.01, 0.2), "not-checkable"),
        (0, (0.3, -0.01, 0.2), "consistent-empirical"),
        (0, (0.5, 0.4, 0.3), "inconsistent"),
        (0, (-0.05, -0.02, -0.01), "inconsistent"),
    ],
)
def test_r2_p6_rule_for_every_sign(sign, fl, want):
    v = _verdict(_rows(FRONT_BETTER, fl), dloss_sign_later_minus_first=sign)
    assert v.verdict == want, v.evidence
    if want == "not-checkable":
        assert v.evidence.startswith("UNDER-POWERED") and "P6" in v.evidence


def test_r2_the_same_seeds_no_longer_pass_both_signs():
    """The audit's runs in miniature: two seeds with front - back -0.060 and +0.013 (the quick
    profile's). Neither no difference (0) nor the paper's -1 is shown by them: both
    under-powered, never consistent, on the same seeds."""
    data = _rows((-0.0603, 0.0132), CLEAR_P6[:2])
    assert _verdict(data, loss_sign_front_minus_back=0).verdict == "not-checkable"
    v = _verdict(data, loss_sign_front_minus_back=-1)
    assert v.verdict == "not-checkable", v.evidence
    assert "[-0.0603, 0.0132]" in v.evidence and "2 seeds fall on both sides" in v.evidence
    assert _verdict(data, loss_sign_front_minus_back=1).verdict == "not-checkable"


def test_r2_inconsistency_outranks_under_power():
    """A part on the other side decides the claim even when another part straddles 0."""
    v = _verdict(_rows(MIXED, (-0.05, -0.02, -0.01)), loss_sign_front_minus_back=-1)
    assert v.verdict == "inconsistent" and not v.evidence.startswith("UNDER"), v.evidence
    assert "Failed: P6" in v.evidence and "Failed: P7" not in v.evidence
