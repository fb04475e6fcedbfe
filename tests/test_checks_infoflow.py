"""False-claim tests of the InfoFlow checks: each check passes on the catalogue's claim
and fails on a false copy of it, written here by hand (a grown rate exponent, the bound put below
the worst case the check found), put in the catalogue with monkeypatch for the duration of the
call. IF-K2's grid is cut to one (D, T) cell column here (5 β values, a few seconds); the
quick profile runs it whole."""

import dataclasses

import pytest
import sympy as sp

import approxtheory.catalogue as cat
from approxtheory import claim
from approxtheory.proofs_check import CHECKS, FAILING, PASSING, Context
from approxtheory.proofs_check import infoflow as ifc


def _false(monkeypatch, cid, **exprs):
    """Put a copy of claim ``cid`` with the expressions ``exprs`` replaced into the catalogue."""
    c = claim(cid)
    new = dataclasses.replace(c, expressions={**dict(c.expressions), **exprs})
    monkeypatch.setitem(cat._REGISTRY, cid, new)
    return c


def _run(cid, **ctx):
    return CHECKS[cid](Context(profile="quick", **ctx))


@pytest.fixture(scope="module")
def small_k2():
    """IF-K2's grid at D = 1, T = 8 with five β over four decades (the quick profile's decided
    column), measured once for the module (the memo is claim-independent), cleared before and
    after."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(ifc.rates, "_pairwise_axes", lambda profile: {(1, 8): [1e2, 1e3, 1e4, 1e5, 1e6]})
        ifc._pairwise_grid.cache_clear()
        yield
        ifc._pairwise_grid.cache_clear()


@pytest.fixture
def small_t2_k1(monkeypatch):
    """IF-T2's and IF-K1's quick grids cut to T = 4 (the rate fits keep their 4 and 3 points),
    the memos cleared before and after."""
    monkeypatch.setitem(ifc.T2_AXES, "quick", {"T": [4], "beta": [10.0, 100.0, 1e3, 1e4]})
    monkeypatch.setitem(ifc.K1_AXES, "quick", {"T": [4], "N": [8, 32, 128]})
    for f in (ifc._retrieval_grid, ifc._second_largest_grid):
        f.cache_clear()
    yield
    for f in (ifc._retrieval_grid, ifc._second_largest_grid):
        f.cache_clear()


# ------------------------------------------------------------------------------------- IF-K2


def test_if_k2_true_claim_passes_and_reports_the_digest_disagreement(small_k2):
    v = _run("IF-K2")
    assert v.verdict == "verified-numeric", v.evidence
    assert v.scope.startswith("partial:") and v.slack is not None and v.slack > 1
    # the digest's <= 1e-4 at β = 1e4 is compared and its disagreement reported, not hidden
    assert "DISAGREEMENT" in v.evidence and "IF-K2p" in v.evidence
    row = next(r for r in v.rows if r["beta"] == 1e4)
    assert row["sup_error"] > 1e-4 > row["random_max_error"]


def test_if_k2_false_rate_fails(small_k2, monkeypatch):
    c = claim("IF-K2")
    D, b, T = (c.symbol(k) for k in ("D", "beta", "T"))
    # β^-1 -> β^-2: the bound then falls faster than the construction's error
    _false(monkeypatch, "IF-K2", err_bound=2 * D * (1 + sp.log(b * T)) / b**2)
    assert _run("IF-K2").verdict in FAILING


def test_if_k2_bound_below_the_worst_case_found_fails(small_k2, monkeypatch):
    v = _run("IF-K2")
    c = claim("IF-K2")
    _false(monkeypatch, "IF-K2", err_bound=c.expr("err_bound") / (2 * sp.Float(v.slack)))
    assert _run("IF-K2").verdict in FAILING


def test_if_k2_error_floor_fails_the_rate_test_not_only_the_bound(small_k2):
    v = _run("IF-K2", mutant="value-floor")
    assert v.verdict in FAILING
    assert "FAILS" in v.evidence  # the decided rate fit, whatever the bound says


# ------------------------------------------------------------------------------------ IF-K2p


def test_if_k2p_digest_prediction_is_refuted_and_a_true_variant_passes(small_k2, monkeypatch):
    v = _run("IF-K2p")
    assert v.verdict == "refuted", v.evidence
    assert v.witness["sup_error"] > 1e-4 and v.witness["T"] <= 256
    # a prediction ten times looser (1e-3 at β = 1e4) holds on the same cells
    b = claim("IF-K2p").symbol("beta")
    _false(monkeypatch, "IF-K2p", err_pred=10 / b)
    assert _run("IF-K2p").verdict in PASSING


# ------------------------------------------------------------------------ IF-T2, IF-K1 (memo)


def test_if_t2_reads_its_bound_outside_the_memo(small_t2_k1, monkeypatch):
    assert _run("IF-T2").verdict in PASSING
    c = claim("IF-T2")
    b, T = c.symbol("beta"), c.symbol("T")
    _false(monkeypatch, "IF-T2", err_attn=(1 + sp.log(b * T)) / b**2)  # β^-2
    assert _run("IF-T2").verdict in FAILING
    monkeypatch.setitem(cat._REGISTRY, "IF-T2", c)
    v = _run("IF-T2")
    _false(monkeypatch, "IF-T2", err_attn=c.expr("err_attn") / (2 * sp.Float(v.slack)))
    assert _run("IF-T2").verdict in FAILING


def test_if_k1_reads_its_bound_and_rate_outside_the_memo(small_t2_k1, monkeypatch):
    v = _run("IF-K1")
    assert v.verdict in PASSING
    c = claim("IF-K1")
    eps = c.symbol("epsilon")
    _false(monkeypatch, "IF-K1", params_order=eps ** sp.Rational(-1, 2))  # ε^-1/2: too few
    assert _run("IF-K1").verdict in FAILING
    monkeypatch.setitem(cat._REGISTRY, "IF-K1", c)
    _false(monkeypatch, "IF-K1", err_bound=c.expr("err_bound") / (2 * sp.Float(v.slack)))
    assert _run("IF-K1").verdict in FAILING


# ------------------------------------------------------------------------------------- IF-R2


def test_if_r2_true_claim_passes_and_its_mutants_refute():
    v = _run("IF-R2")
    assert v.verdict == "verified-numeric", v.evidence
    assert v.scope.startswith("partial") and 1 < v.slack < 2.5
    for m in ("steeper-targets", "knots-halved"):
        assert _run("IF-R2", mutant=m).verdict in FAILING, m


@pytest.mark.parametrize("shift", [sp.Rational(1, 2), sp.Rational(-1, 2)])
def test_if_r2_false_rate_fails(monkeypatch, shift):
    c = claim("IF-R2")
    eps, m, C5 = (c.symbol(k) for k in ("epsilon", "m", "C5"))
    _false(monkeypatch, "IF-R2", N_lipschitz=C5 * eps ** (-(m + shift)))
    assert _run("IF-R2").verdict in FAILING


def test_if_r2_knot_count_below_the_worst_case_fails(monkeypatch):
    v = _run("IF-R2")
    c = claim("IF-R2")
    # about L_f/(2 slack ε) knots claimed: the adversarial target's error then exceeds ε
    _false(monkeypatch, "IF-R2", knots_1d=c.expr("knots_1d") / (2 * sp.Float(v.slack)))
    assert _run("IF-R2").verdict in FAILING


# ------------------------------------------------------------------------------------- IF-R4


def test_if_r4_true_rule_passes_and_false_rules_fail(monkeypatch):
    v = _run("IF-R4")
    assert v.verdict == "verified-symbolic", v.evidence
    assert _run("IF-R4", mutant="mean-rule").verdict in FAILING
    c = claim("IF-R4")
    a1, a2 = c.symbol("alpha1"), c.symbol("alpha2")
    for wrong in (a1 + a2, sp.Min(a1, a2), sp.Max(a1**2, a2), sp.Max(a1, a2) / 2):
        monkeypatch.setitem(
            cat._REGISTRY,
            "IF-R4",
            dataclasses.replace(c, expressions={**dict(c.expressions), "alpha_total": wrong}),
        )
        assert _run("IF-R4").verdict in FAILING, wrong


# ------------------------------------------------------------------------------ IF-P1, IF-P2


@pytest.mark.parametrize("cid", ["IF-P1", "IF-P2"])
def test_calculus_checks_say_surrogate(cid):
    v = _run(cid)
    assert v.verdict in PASSING and v.scope.startswith("surrogate:"), v.scope
    assert "reconstruction" in v.scope


# ------------------------------------------------------------------------------------- IF-K3


def test_if_k3_induction_head_passes_and_its_mutants_refute():
    v = _run("IF-K3")
    assert v.verdict == "verified-numeric", v.evidence
    assert v.scope == "full" and v.slack is not None and v.slack >= 1
    # the read-out is the same d weights at every T (the T-independent side of IF-P2)
    assert {r["readout_nonzero"] for r in v.rows} == {4} and len({r["T"] for r in v.rows}) > 1
    for m in ("no-ramp", "no-null"):
        assert _run("IF-K3", mutant=m).verdict in FAILING, m


def test_if_k3_false_rate_and_bound_below_the_worst_case_fail(monkeypatch):
    v = _run("IF-K3")
    c = claim("IF-K3")
    b, T = c.symbol("beta"), c.symbol("T")
    # e^{-β/(4T)} -> e^{-β/(2T)}: the claimed decay twice the construction's
    _false(monkeypatch, "IF-K3", err_bound=T * sp.exp(-b / (2 * T)))
    assert _run("IF-K3").verdict in FAILING
    monkeypatch.setitem(cat._REGISTRY, "IF-K3", c)
    _false(monkeypatch, "IF-K3", err_bound=c.expr("err_bound") / (2 * sp.Float(v.slack)))
    assert _run("IF-K3").verdict in FAILING
    # a read-out that needs one weight more than the construction has
    monkeypatch.setitem(cat._REGISTRY, "IF-K3", c)
    _false(monkeypatch, "IF-K3", readout_nonzero=c.symbol("d") + 1)
    assert _run("IF-K3").verdict in FAILING


def test_if_k3_error_floor_fails_the_rate_test():
    """Layer 2's values x 1.001 (an error floor 1e-3): the decided rate fits fail."""
    v = _run("IF-K3", mutant="value-floor")
    assert v.verdict in FAILING and v.evidence.count("FAILS") == 2, v.evidence


# ---------------------------------------------------------------------------- IF-P3b, IF-P3c


def test_if_p3c_control_on_the_calculus_and_its_mutant():
    v = _run("IF-P3c")
    assert v.verdict == "verified-symbolic" and v.scope.startswith("surrogate:")
    assert not v.formula_note and "heads_ctrl = D + 1" in v.evidence
    assert _run("IF-P3c", mutant="control-short").verdict in FAILING


def test_if_p3b_says_what_would_make_it_checkable():
    v = _run("IF-P3b")
    assert v.verdict == "not-checkable" and "--profile full" in v.evidence
    assert "D = 2..6" in v.evidence


# ------------------------------------------------------------------------------------- IF-R1


@pytest.fixture
def small_r1(monkeypatch):
    """IF-R1's grid (IF-T2's) cut to three lengths above 16 (no certified bracket, seconds) and
    three β over three decades."""
    monkeypatch.setitem(ifc.T2_AXES, "quick", {"T": [32, 64, 256], "beta": [10.0, 100.0, 1e4]})
    ifc._retrieval_grid.cache_clear()
    yield
    ifc._retrieval_grid.cache_clear()


def test_if_r1_mpr_is_free_and_false_charges_fail(small_r1, monkeypatch):
    """The MPR head of fixed size reaches ε = err_mpr(β) with a flat weight count; a claim that
    charges MPR at IF-T4's rate (ε^-(d/E): here ε^-1/2), one that charges it with T, a faster
    error law (β^-2) and the error law below the worst case found all fail."""
    v = _run("IF-R1")
    assert v.verdict == "verified-numeric", v.evidence
    assert v.scope.startswith("partial: the MPR charge (free)") and v.slack >= 1
    assert len({r["weights"] for r in v.rows}) == 1
    c = claim("IF-R1")
    C5, b, T = (c.symbol(k) for k in ("C5", "beta", "T"))
    eps, d, E = sp.symbols("epsilon d E", positive=True)
    _false(monkeypatch, "IF-R1", N_mpr=C5 * eps ** (-d / E))  # IF-T4's decoding rate
    w = _run("IF-R1")
    assert w.verdict in FAILING and "FAILS" in w.evidence, w.evidence
    monkeypatch.setitem(cat._REGISTRY, "IF-R1", c)
    _false(monkeypatch, "IF-R1", N_mpr=C5 * T)  # a charge growing with T
    assert _run("IF-R1").verdict in FAILING
    monkeypatch.setitem(cat._REGISTRY, "IF-R1", c)
    _false(monkeypatch, "IF-R1", err_mpr=(1 + sp.log(b * T)) / b**2)  # β^-2
    assert _run("IF-R1").verdict in FAILING
    monkeypatch.setitem(cat._REGISTRY, "IF-R1", c)
    _false(monkeypatch, "IF-R1", err_mpr=c.expr("err_mpr") / (2 * sp.Float(v.slack)))
    assert _run("IF-R1").verdict in FAILING


def test_if_r1_head_without_beta_fails(small_r1):
    """W_Q without β: the fixed-size head no longer reaches ε = err_mpr(β)."""
    v = _run("IF-R1", mutant="beta-dropped")
    assert v.verdict in FAILING and v.witness is not None


# ------------------------------------------------------------------------------------- IF-R3


def test_if_r3_matching_upper_construction_and_false_exponents_fail(monkeypatch):
    """The SPA-mixture decoder attains ε^-(|I|d) for |I|d = 1, 2: the true exponent passes; |I|d
    ± 1/2, the exponent without |I| (d alone), and IF-T4's |I|d/E at this mixture's width fail."""
    v = _run("IF-R3")
    assert v.verdict == "verified-numeric", v.evidence
    assert v.scope.startswith("partial: the matching upper construction") and v.slack is None
    c = claim("IF-R3")
    eps, I, d, C4 = (c.symbol(k) for k in ("epsilon", "I_size", "d", "C4"))
    E = sp.Symbol("E", positive=True, integer=True)
    for wrong in (
        C4 * eps ** (-(I * d + sp.Rational(1, 2))),
        C4 * eps ** (-(I * d - sp.Rational(1, 2))),
        C4 * eps ** (-d),  # without |I|
        C4 * eps ** (-I * d / E),  # IF-T4's exponent, E = T d here
    ):
        monkeypatch.setitem(
            cat._REGISTRY,
            "IF-R3",
            dataclasses.replace(c, expressions={**dict(c.expressions), "N_decode": wrong}),
        )
        w = _run("IF-R3")
        assert w.verdict in FAILING and "FAILS" in w.evidence, wrong


def test_if_r3_a_plain_average_cannot_be_decoded():
    """Without the positional slots the mixture of two tokens is one average: the decoder's
    error stalls (the |I| = 2 fit fails) while the one-token cases still pass."""
    v = _run("IF-R3", mutant="no-slots")
    assert v.verdict in FAILING
    assert [p for p in v.evidence.split("; ") if "FAILS" in p][0].startswith("|I|=2, d=1")
    assert _run("IF-R3", mutant="read-gain").verdict in FAILING


def test_if_t4_says_why_no_tightness_check_exists_and_what_would_make_it_checkable():
    v = _run("IF-T4")
    assert v.verdict == "not-checkable" and v.scope == "none"
    assert "IF-R3" in v.evidence and "|I|d/E" in v.evidence
    assert "Checkable with the paper's definition" in v.evidence
