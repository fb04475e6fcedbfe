"""Audit 42's survivors (false claims that kept ``verified-numeric``) are refuted now: TO-X3,
PR-N2 and PR-S each read the catalogue where the false claim disagrees with the true one.

- TO-X3 (and TO-T2, TO-C1 beside it): the bound was read at σ = 1 only, where 2σ e^{2B}/L and
  2σ² e^{2B}/L agree; the checks now read it at value scales two decades either side of 1.
- PR-N2: F_softmax was read at c = 1 only, where c h_l T² and c² h_l T² agree; the check now
  reads it (and F_layer) at c = 1/2, 1, 3 against c times the counted attention probabilities.
- PR-S: the check tested schedules inside h_l <= h_base only, so dropping the condition changed
  nothing; it now builds schedules on the other side (Table 4 schedules with a layer raised
  above h_base, and every valid schedule enumerated at small L) where rules 2-3 fail.

Each test swaps the false claim in with :func:`approxtheory.catalogue.overriding` and runs the
check on the quick profile: the false claim must be refuted (not an error, not a survivor) and
the catalogue's claim must still pass.
"""

import functools

import pytest
import sympy as sp
from _helpers import assert_verdict, run_quick
from _helpers import false_claim as _with
from _helpers import run_false as _false

from approxtheory import claim
from approxtheory.catalogue._claim import Condition
from approxtheory.catalogue.mutate import widen
from approxtheory.proofs_check import Context, run_check
from approxtheory.proofs_check.prism import neutrality

_true = functools.cache(run_quick)


@pytest.fixture
def no_timing(monkeypatch):
    """PR-N2's throughput (evidence only, a timed loop kept out of the verdict) stubbed out."""
    fake = {
        "tokens_per_s": {"uniform": 1, "prism": 1, "uniform again": 1},
        "ratio_prism_over_uniform": 1.0,
        "ratio_uniform_again_over_uniform": 1.0,
        "rounds": 0,
        "batch": 8,
        "T": 128,
    }
    monkeypatch.setattr(neutrality, "_throughput", lambda seed, rounds=9: fake)


# ------------------------------------------------------------------------------------- TO-X3
def test_x3_reads_its_bound_at_several_sigmas():
    v = _true("TO-X3")
    assert v.verdict == "verified-numeric", v.evidence
    sigmas = {float(k.removeprefix("ratio_sigma_")) for k in v.rows[0] if "ratio_sigma_" in k}
    assert min(sigmas) < 1 < max(sigmas) and len(sigmas) >= 3, sigmas
    assert "σ in (" in v.covered and "the bound read at σ in" in v.evidence


@pytest.mark.parametrize("power", [1, 3, 1.5])
def test_x3_wrong_sigma_power_is_refuted(power):
    """The audit's 2σ e^{2B}/L (power 1; = the bound at σ = 1 only), and σ³, σ^1.5."""
    c = claim("TO-X3")
    sg, B, L = c.symbol("sigma"), c.symbol("B"), c.symbol("L")
    v = _false(_with("TO-X3", mse_difference=2 * sg**power * sp.exp(2 * B) / L))
    assert v.verdict == "refuted", v.evidence
    assert v.witness["sigma"] != 1.0 and "σ = " in v.evidence


def test_x3_audit_demo_cell_is_measured():
    """The auditor's cell σ = 10, B = 1, L = 2: E||o - o'||² = 100 Σ(Δα)² ≈ 116 exceeds the
    false bound 20 e²/2 ≈ 73.9 (the true bound 200 e²/2 ≈ 739 holds)."""
    v = _true("TO-X3")
    (row,) = [r for r in v.rows if r["B"] == 1.0 and r["L"] == 2 and "ci_low" not in r]
    assert 100 * row["max_sq_diff"] == pytest.approx(116.0, abs=0.1)
    assert row["ratio_sigma_10"] == pytest.approx(row["ratio_sigma_1"], rel=1e-12)
    assert 100 * row["max_sq_diff"] / (20 * sp.exp(2).evalf() / 2) > 1


# ------------------------------------------------------------------------------ TO-T2, TO-C1
@pytest.mark.parametrize("power", [2, sp.Rational(1, 2)])
def test_t2_wrong_sigma_power_is_refuted(power):
    c = claim("TO-T2")
    sg, B, L = c.symbol("sigma"), c.symbol("B"), c.symbol("L")
    t = _true("TO-T2")
    assert t.verdict == "verified-numeric", t.evidence
    v = _false(_with("TO-T2", rms_gain_bound=sg**power * sp.sqrt(2 * sp.exp(2 * B) / L)))
    assert v.verdict == "refuted", v.evidence
    assert v.witness["sigma"] != 1.0


@pytest.mark.parametrize("power", [1, 3])
def test_c1_wrong_sigma_v_power_is_refuted(power):
    c = claim("TO-C1")
    sv = c.symbol("sigma_v")
    t = _true("TO-C1")
    assert t.verdict == "verified-numeric", t.evidence
    assert "σ_v in (" in t.covered
    false = c.expr("mse_bound").subs(sv**2, sv**power)
    assert false != c.expr("mse_bound")
    v = _false(_with("TO-C1", mse_bound=false))
    assert v.verdict == "refuted", v.evidence
    assert v.witness["mse"]["sigma_v"] != 1.0


# ------------------------------------------------------------------------------------- PR-N2
def test_n2_true_claim_passes_at_every_softmax_cost(no_timing):
    v = run_check("PR-N2", Context(profile="quick"))
    assert v.verdict == "verified-numeric", v.evidence
    assert "c in 1/2, 1, 3" in v.covered


@pytest.mark.parametrize(
    "what",
    ["F_softmax = T^2 c^2 h_l", "F_softmax = T^2 h_l (c dropped)", "F_layer + (c - 1) T d"],
)
def test_n2_wrong_c_dependence_is_refuted(no_timing, what):
    c = claim("PR-N2")
    T, cs, hl, d = c.symbol("T"), c.symbol("c"), c.symbol("h_l"), c.symbol("d")
    false = {
        "F_softmax = T^2 c^2 h_l": {"F_softmax": T**2 * cs**2 * hl},
        "F_softmax = T^2 h_l (c dropped)": {"F_softmax": T**2 * hl},
        "F_layer + (c - 1) T d": {"F_layer": c.expr("F_layer") + (cs - 1) * T * d},
    }[what]
    v = _false(_with("PR-N2", **false))
    assert v.verdict == "refuted", (what, v.evidence)
    assert "c = 1/2" in v.evidence or "c = 3" in v.evidence


# -------------------------------------------------------------------------------------- PR-S
def _pr_s_regime(kind):
    c = claim("PR-S")
    (i,) = [j for j, r in enumerate(c.regime) if "h_base" in r.description]
    if kind == "dropped":
        return tuple(r for j, r in enumerate(c.regime) if j != i)
    if kind == "widened":  # h_l <= h_base + 1
        wide = Condition(widen(c.regime[i].expr), "h_l <= h_base + 1")
        return tuple(wide if j == i else r for j, r in enumerate(c.regime))
    hl, hb = c.symbol("h_l"), c.symbol("h_base")  # narrowed: h_l < h_base
    return tuple(
        Condition(sp.Lt(hl, hb), "h_l < h_base") if j == i else r for j, r in enumerate(c.regime)
    )


def test_pr_s_builds_both_sides_of_h_base():
    assert_verdict(
        _true("PR-S"),
        "verified-numeric",
        "The other side of h_l <= h_base (built here)",
        "exactly those the claim's regime admits",
        "6 of them have a layer outside the claim's regime",
    )


@pytest.mark.parametrize("kind", ["dropped", "widened", "narrowed"])
def test_pr_s_wrong_h_base_condition_is_refuted(kind):
    v = _false(_with("PR-S", regime=_pr_s_regime(kind)))
    assert v.verdict == "refuted", (kind, v.evidence)
    w = v.witness
    if kind == "narrowed":  # a valid schedule's head count outside the regime
        assert w["h_l"] == w["h_base"], w
    else:  # a head count above h_base admitted: a schedule breaking rule 2 or 3
        assert w["h_l"] > w["h_base"] if "h_l" in w else w["admitted"], w
        assert w["broken"] and "Failed on the other side" in v.evidence


def test_pr_s_audit_false_claim_names_a_raised_table4_schedule():
    v = _false(_with("PR-S", regime=_pr_s_regime("dropped")))
    assert v.verdict == "refuted"
    assert v.witness["schedule"] == "small with its last layer at 16 heads"
    assert v.witness["broken"] == ["rule 3 (h_L = h_base)"]
