"""The TO-* checks (arXiv 2510.03784): every passing check is flipped by each of its mutants,
the paper-level claims are labelled as the surrogates they are, the X2 attack is strong enough to
matter, and the catalogue agrees with the digest's own reference numbers."""

import dataclasses
import functools
import math

import pytest
import sympy as sp
from _helpers import saturation_rows

import approxtheory as at
from approxtheory import catalogue
from approxtheory.proofs_check import FAILING, MUTANTS, PASSING, VERIFIED, Context, run_check


@functools.cache
def _run(cid, mutant=None, seed=0):
    """One verdict per (claim, mutant, seed) for the whole module (the checks are deterministic
    in the seed; test_checks_are_deterministic_in_the_seed checks that)."""
    return run_check(cid, Context(mutant=mutant, seed=seed))


TO_CHECKED = ["TO-T1", "TO-T2", "TO-C1", "TO-X1", "TO-X2", "TO-X3", "TO-X4", "TO-E5"]
#: mutants that rerun an optimisation or a training (seconds each); also run by test_mutants.py
#: (TO-T2's unbounded-heads reads the tradeoffs_heads B = inf cells already computed: not slow)
SLOW_MUTANTS = {
    ("TO-X2", "head-bound-2B"),
    ("TO-E5", "bounded-logits"),
}
PAIRS = [
    pytest.param(cid, name, marks=[pytest.mark.slow] if (cid, name) in SLOW_MUTANTS else [])
    for cid in TO_CHECKED
    for name in MUTANTS[cid]
]


@pytest.mark.parametrize("cid", TO_CHECKED)
def test_passes_and_declares_mutants(cid):
    v = _run(cid)
    assert v.verdict in PASSING, (v.verdict, v.evidence)
    assert len(MUTANTS[cid]) >= 2, f"{cid} declares too few mutants"


@pytest.mark.parametrize("cid,name", PAIRS)
def test_every_mutant_flips_its_check(cid, name):
    v = _run(cid)
    m = _run(cid, name)
    # TO-E5 measures trained heads against a stated criterion: a miss is inconsistent
    want = "inconsistent" if cid == "TO-E5" else "refuted"
    assert m.verdict == want, (cid, name, m.verdict, m.evidence)
    assert m.scope == v.scope


def test_paper_level_claims_are_scoped_as_surrogates():
    for cid in ("TO-T1", "TO-T2", "TO-C1", "TO-E5"):
        v = _run(cid)
        assert v.scope.startswith("surrogate:") and len(v.scope) > 40, (cid, v.scope)
    for cid in ("TO-X1", "TO-X2", "TO-X4"):
        assert _run(cid).scope == "full"
    # X3 is checked as stated, within the regime it states (and its scope names it)
    s = _run("TO-X3").scope
    assert s.startswith("full: within the claim's regime") and "position-only" in s, s
    # T1's verdict speaks about the template only, and says so
    v = _run("TO-T1")
    assert v.verdict in VERIFIED and "not the paper's Eq. (3)" in v.evidence


@pytest.mark.slow
@pytest.mark.parametrize("cid", ["TO-R1", "TO-R2", "TO-R3"])
def test_trained_rules_get_trained_verdicts(cid):
    """The allocation rules are read from the trained experiments' quick cells (about a minute
    of CPU for the three) through the shared training-adequacy gate: a trained verdict scoped to
    the profile it came from when the run passed it, else not-checkable with the figures
    (measured session 8: TO-R1's best quick NMSE 0.09 and TO-R3's base model 0.026 are above
    1e-2); the scale record either way."""
    v = _run(cid)
    rec = next(iter(v.scale.values()))
    assert rec["run"]["steps"] and rec["reference"]
    if rec["gate_passed"] and v.evidence.startswith("UNDER-POWERED"):  # seeds on both sides
        assert v.verdict == "not-checkable" and "Criterion: " in v.evidence, v.evidence
    elif rec["gate_passed"]:
        assert v.verdict in ("consistent-empirical", "inconsistent"), (v.verdict, v.evidence)
        assert v.scope.startswith("partial: the quick profile of tradeoffs_"), v.scope
        assert v.evidence.startswith("Criterion: ")
    else:
        assert v.verdict == "not-checkable" and "training-adequacy gate" in v.evidence
        assert "Measured anyway (not decided): Criterion: " in v.evidence
    assert v.rows and v.plot


def test_provenance_is_not_stronger_than_the_source():
    # the paper's body was not available: every formula is the digest's own ([DER], [X])
    for cid in ("TO-T1", "TO-T2", "TO-C1", "TO-X1", "TO-X2", "TO-X3", "TO-X4"):
        assert at.claim(cid).provenance == "derived", cid
    # known only from reviews / summaries
    for cid in ("TO-R1", "TO-R2", "TO-R3", "TO-E5", "TO-P2"):
        assert at.claim(cid).provenance == "reconstructed", cid
    assert not [c.id for c in at.claims() if c.id.startswith("TO-") and c.provenance == "stated"]


def test_x2_attack_reaches_the_floor():
    """The optimised heads come within 0.1 % of the floor (it is attained in the limit), so a
    floor even slightly too high would be beaten: the check has teeth beyond its mutants."""
    v = _run("TO-X2")
    assert v.verdict == "verified-numeric"
    assert 1 - 1e-9 <= v.measured <= 1 + 1e-3, v.measured


def test_x2_floor_matches_the_digest_reference_values():
    # digest §4 X2, read-out c = 1: B = 1 -> 0.27, 0.67, 0.90, 0.97, 0.99 at L = 8 .. 2048;
    # B = 2 -> 0.015, 0.135, 0.49, 0.82, 0.95 (two significant digits as printed there)
    ref = {1: (0.27, 0.67, 0.90, 0.97, 0.99), 2: (0.015, 0.135, 0.49, 0.82, 0.95)}
    c = at.claim("TO-X2")
    for B, vals in ref.items():
        for L, want in zip((8, 32, 128, 512, 2048), vals):
            got = c.evaluate_float("floor_unit_readout", B=B, L=L)
            assert got == pytest.approx(want, abs=0.006), (B, L, got, want)
    # free read-out floor q/(1+q) by hand: B = 1, L = 8: q = 7 e^-4
    q = 7 * math.exp(-4)
    assert c.evaluate_float("floor", B=1, L=8) == pytest.approx(q / (1 + q), rel=1e-12)


def test_e5_trains_a_fixed_budget_and_its_growth_is_not_the_forced_one():
    """TO-E5 trained each L *to* a fixed loss, which by TO-X2 forces the range to grow
    like ½ ln L. Now every L gets the same budget (no target loss), the losses differ (they rise
    with L), and the criterion asks for more growth than the losses reached force."""
    from approxtheory.proofs_check import tradeoffs as chk

    assert "target_loss" not in chk._E5 and "max_steps" not in chk._E5
    v = _run("TO-E5")
    loss = {L: [r["loss"] for r in v.rows if r["L"] == L] for L in chk._E5["Ls"]}
    assert max(loss[8]) < min(loss[128])  # not one fixed loss
    assert v.measured["growth_lo"] > 2 * v.measured["forced_growth_hi"] > 0
    assert v.scale and "Fig. 10" in v.scale["TO-E5 heads"]["paper"]
    m = _run("TO-E5", "lengths-relabelled")
    assert m.verdict == "inconsistent" and "L = 8 -> 32" in m.witness["failed"][0]


def test_c1_refutation_carries_a_witness_input():
    v = _run("TO-C1", "swapped-factors")
    assert v.verdict == "refuted"
    assert v.measured["logit"] > 1 and set(v.witness) == {"logit", "weight", "weight_rel", "mse"}
    w = v.witness["logit"]
    assert {"family", "r", "sigma_r1", "R", "L"} <= set(w)
    if w["family"] == "C1 lag head":
        assert len(w["output_witness"]) == 32


def test_checks_are_deterministic_in_the_seed():
    a = run_check("TO-X3", Context(seed=3))
    b = run_check("TO-X3", Context(seed=3))
    assert a.rows == b.rows and a.measured == b.measured


# ------------------------------------------------------------------ false claims
# Each check below reads its formulas from the catalogue inside the call; a false copy of the
# claim is put in the registry (monkeypatch) and the check must stop passing, while the true
# claim passes. The false copies: the bound put below the worst case the check found (divided by
# 2·slack), a rate exponent grown (the framework's "rate" mutant), a regime condition dropped.


def _plant(monkeypatch, cid, regime=None, **exprs):
    """Put a false copy of ``cid`` (some expressions replaced, or another regime) in the
    registry for the rest of the test."""
    c = at.claim(cid)
    false = dataclasses.replace(
        c,
        expressions={**c.expressions, **exprs},
        regime=c.regime if regime is None else tuple(regime),
    )
    monkeypatch.setitem(catalogue._REGISTRY, cid, false)
    return c


def _fresh(cid, **kw):
    return run_check(cid, Context(**kw))


def test_c1_worst_case_is_the_bound_and_its_slack_is_reported():
    """TO-C1 (it once compared against a bound ~1000x above the one head it measured): the
    adversarial position-only heads attain the logit bound σ_{r+1}R² (slack 1), the ℓ1 weight
    change reaches half of e^{2δ} - 1 (2 tanh(δ/2) at small δ: slack -> 2), the mean-square
    bound has slack about 4; the C1 lag head alone is ~5x loose on the logit bound."""
    v = _run("TO-C1")
    assert v.verdict == "verified-numeric", v.evidence
    assert v.slack == pytest.approx(1.0, abs=1e-9)
    assert v.measured["logit"] == pytest.approx(1.0, abs=1e-9)
    assert 2.0 <= 1 / v.measured["weight"] <= 2.1, v.measured
    assert 1 < 1 / v.measured["mse"] < 6, v.measured
    lag = [r for r in v.rows if r["family"] == "C1 lag head"]
    assert lag and max(r["logit_ratio"] for r in lag) < 0.3


@pytest.mark.parametrize(
    "name,false",
    [
        ("logit bound / 2 (below the worst case: slack 1)", {"logit_change": "half"}),
        ("logit bound / 1000", {"logit_change": "thousandth"}),
        ("logit rate σ -> σ²", {"logit_change": "sigma-squared"}),
        ("logit rate R² -> R^(5/2)", {"logit_change": "R-5/2"}),
        ("weight factor / (2 · its slack 2.01)", {"weight_change_factor": "below-slack"}),
        ("weight factor e^{2δ} -> e^{2δ²}", {"weight_change_factor": "delta-squared"}),
        ("mse bound rate 1/L -> 1/L²", {"mse_bound": "L-squared"}),
        ("mse bound / (2 · its slack)", {"mse_bound": "below-slack"}),
    ],
)
def test_c1_false_claims_are_refuted(monkeypatch, name, false):
    true = _run("TO-C1")
    assert true.verdict in PASSING
    c = at.claim("TO-C1")
    sr, R, L = c.symbol("sigma_r1"), c.symbol("R"), c.symbol("L")
    ((key, how),) = false.items()
    e = c.expr(key)
    slack = {
        "weight_change_factor": 1 / true.measured["weight"],
        "mse_bound": 1 / true.measured["mse"],
    }
    e = {
        "half": e / 2,
        "thousandth": e / 1000,
        "sigma-squared": e.subs(sr, sr**2),
        "R-5/2": e.subs(R**2, R ** sp.Rational(5, 2)),
        "below-slack": e / (2 * slack.get(key, 1.0)),
        "delta-squared": e.subs(sr, sr**2 * R**2),
        "L-squared": e.subs(L, L**2),
    }[how]
    assert e != c.expr(key), name
    _plant(monkeypatch, "TO-C1", **{key: e})
    v = _fresh("TO-C1")
    assert v.verdict in FAILING, (name, v.verdict, v.evidence)


def test_x3_worst_case_and_slack():
    """TO-X3 searched adversarially inside its regime: the largest Σ(Δα)² / (2e^{2B}/L) is just
    under 1/4 (slack about 4; the old random draws reached 0.23)."""
    v = _run("TO-X3")
    assert v.verdict == "verified-numeric", v.evidence
    assert 0.24 < v.measured < 0.26 and v.slack == pytest.approx(1 / v.measured)
    assert "position-only" in v.evidence


@pytest.mark.parametrize("how", ["below-slack", "L-squared", "no-exp"])
def test_x3_false_bounds_are_refuted(monkeypatch, how):
    true = _run("TO-X3")
    c = at.claim("TO-X3")
    e = c.expr("mse_difference")
    e = {
        "below-slack": e / (2 * true.slack),
        "L-squared": e.subs(c.symbol("L"), c.symbol("L") ** 2),
        "no-exp": e.subs(c.symbol("B"), 0),
    }[how]
    _plant(monkeypatch, "TO-X3", mse_difference=e)
    v = _fresh("TO-X3")
    assert v.verdict == "refuted", (how, v.evidence)


@pytest.mark.parametrize("drop", [0, 1])
def test_x3_without_a_regime_condition_is_refuted(monkeypatch, drop):
    """Dropping either condition of X3's regime makes the claim false and the check says so:
    value-dependent logits (z = ±B sign(v), Monte Carlo interval) or position-dependent value
    means (exact) differ by O(1), not O(1/L)."""
    c = at.claim("TO-X3")
    assert len(c.regime) == 2
    _plant(monkeypatch, "TO-X3", regime=[x for i, x in enumerate(c.regime) if i != drop])
    v = _fresh("TO-X3")
    assert v.verdict == "refuted", v.evidence
    assert "regime widened" in v.witness["how"]


# TO-R1: the template half on synthetic rows from the claim's own template, and planted H*
def _template_rows(D=16, M=3, seeds=(0, 1), params=(0.1, 0.3, 1.0, 1.0)):
    """Rows from the catalogue's own TO-T1 template (H* = 4 exactly at these parameters)."""
    from approxtheory.experiments._tradeoffs import template_error

    return [
        {
            "T": 16,
            "budget": D,
            "heads": h,
            "seed": s,
            "steps": 10,
            "val_nmse": float(template_error(h, D, M, *params)) * (1 + 0.02 * s),
        }
        for h in (1, 2, 4, 8, 16)
        for s in seeds
    ]


@pytest.fixture
def fresh_template():
    from approxtheory.experiments import _tradeoffs

    _tradeoffs._template_fn.cache_clear()
    yield
    _tradeoffs._template_fn.cache_clear()


def test_r1_claims_own_template_passes_and_planted_hstar_fails(monkeypatch, fresh_template):
    from approxtheory.proofs_check import tradeoffs as chk

    rows = _template_rows()
    v = chk.budget_split_verdict("TO-R1", rows, "quick")
    assert v.verdict == "consistent-empirical", v.evidence
    assert "template half undecided" not in v.evidence
    c = at.claim("TO-T1")
    D, al, be = c.symbol("D"), c.symbol("alpha"), c.symbol("beta")
    for false in (
        c.expr("H_star") * 2,  # a constant off by 2
        c.expr("H_star") / 2,
        c.expr("H_star") * D ** (be / (al + be)),  # the budget exponent doubled (rate mutant)
    ):
        _plant(monkeypatch, "TO-T1", H_star=false)
        v = chk.budget_split_verdict("TO-R1", rows, "quick")
        assert v.verdict == "inconsistent", (false, v.evidence)
        assert "worse than the argmin H = 4 in every seed" in v.witness["failed"][0]
        monkeypatch.undo()


def test_r1_template_half_undecided_when_seeds_cannot_tell():
    """Noise larger than the differences: no head count is worse than the argmin in every seed;
    the template half says it is undecided (it cannot pass or fail on such data)."""
    from approxtheory.proofs_check import tradeoffs as chk

    noisy = {
        0: {1: 0.5, 2: 0.3, 4: 0.2, 8: 0.3, 16: 0.5},
        1: {1: 0.1, 2: 0.3, 4: 0.4, 8: 0.2, 16: 0.1},
    }
    rows = [
        {"T": 16, "budget": 16, "heads": h, "seed": s, "steps": 10, "val_nmse": noisy[s][h]}
        for s in (0, 1)
        for h in (1, 2, 4, 8, 16)
    ]
    v = chk.budget_split_verdict("TO-R1", rows, "quick")
    assert "template half undecided" in v.evidence


@pytest.mark.slow
def test_r1_quick_cells_are_below_the_gate_whatever_the_template(monkeypatch, fresh_template):
    """The quick cells (argmin H = 4 at NMSE 0.09, session 8) are below the training-adequacy
    gate: not-checkable with what was reached, and a planted H* x 2 cannot turn them into
    evidence either way (it read consistent, and the planted one inconsistent, before the gate;
    the criterion's two outcomes are tested on trained rows in test_gate_papers.py)."""
    v = _run("TO-R1")
    assert v.verdict == "not-checkable" and "> 0.01" in v.evidence, v.evidence
    c = _plant(monkeypatch, "TO-T1", H_star=at.claim("TO-T1").expr("H_star") * 2)
    assert c.id == "TO-T1"
    assert _fresh("TO-R1").verdict == "not-checkable"


# TO-P2: the decision rule on stated rows
def test_p2_decision_rule_and_false_variant():
    from approxtheory.proofs_check import tradeoffs as chk

    bounded = {16: 2.0, 64: 1.9}
    falls = {16: {1: 0.8, 4: 0.3, 16: 0.25}, 64: {1: 0.9, 4: 0.7, 16: 0.68}}  # G: 0.69 -> 0.24
    v = chk.trained_saturation_verdict("TO-P2", saturation_rows(falls, bounded), "quick")
    assert v.verdict == "consistent-empirical", v.evidence
    assert v.formula_note.startswith("reads no formula")
    # the false variant: G rises with T while the logits stay bounded (the digest's falsifier)
    rises = {16: falls[64], 64: falls[16]}
    v = chk.trained_saturation_verdict("TO-P2", saturation_rows(rises, bounded), "quick")
    assert v.verdict == "inconsistent" and "falsifier" in v.evidence, v.evidence
    # overlapping intervals do not pass
    same = {16: falls[16], 64: falls[16]}
    v = chk.trained_saturation_verdict("TO-P2", saturation_rows(same, bounded), "quick")
    assert v.verdict == "inconsistent"
    # logits growing with T: the premise fails and the claim says nothing
    v = chk.trained_saturation_verdict("TO-P2", saturation_rows(falls, {16: 2.0, 64: 9.0}), "quick")
    assert v.verdict == "vacuous-here", v.evidence
    # the declared mutant flips the passing verdict
    v = chk.trained_saturation_verdict(
        "TO-P2", saturation_rows(falls, bounded), "quick", "lengths-swapped"
    )
    assert v.verdict == "inconsistent"
    # a non-finite error is a failure
    nan = {16: {**falls[16], 16: math.nan}, 64: falls[64]}
    v = chk.trained_saturation_verdict("TO-P2", saturation_rows(nan, bounded), "quick")
    assert v.verdict == "inconsistent"


def test_p2_and_title_are_in_the_catalogue():
    c = at.claim("TO-P2")
    assert c.kind == "empirical" and not c.expressions
    from approxtheory.catalogue.tradeoffs import TITLES

    assert TITLES["v1"] == "Allocation of Parameters in Transformers"
    assert "Allocation of Parameters in Transformers" in at.claim("TO-T1").notes


@pytest.mark.parametrize(
    "cid,name,side",
    [
        ("TO-X1", "max_weight", "upper"),
        ("TO-X2", "floor", "lower"),
        ("TO-X4", "l1_change", "upper"),
        ("TO-T2", "rms_gain_bound", "upper"),
    ],
)
def test_bound_moved_past_the_worst_case_found_fails(monkeypatch, cid, name, side):
    """The other checks of the file report their slack (X1 1: the cap is attained; X2 ~1: the
    floor is approached; X4 ~2: the ℓ1 bound's intrinsic looseness; T2 ~2) and go red when the
    bound is moved past the worst case they found (below it for an upper bound, above it for a
    lower one)."""
    v = _run(cid)
    assert v.verdict in PASSING and v.slack is not None and v.slack >= 1 - 1e-9, (cid, v.slack)
    e = at.claim(cid).expr(name)
    false = e / (2 * v.slack) if side == "upper" else e * 2 * v.slack
    _plant(monkeypatch, cid, **{name: false})
    m = _fresh(cid)
    assert m.verdict in FAILING, (cid, m.verdict, m.evidence)


def test_x4_weight_ratio_is_attained():
    """X4's weight-ratio bound e^{2δ} is attained in the limit (a token of vanishing weight moved
    by +δ, the rest by -δ), so e^{1.9δ} is refuted; its ℓ1 bound has slack just above 2."""
    v = _run("TO-X4")
    assert v.measured["ratio"] == pytest.approx(1.0, abs=1e-9)
    assert 2.0 <= v.slack <= 2.01


def test_x4_false_ratio_fails(monkeypatch):
    c = at.claim("TO-X4")
    d = c.symbol("delta")
    _plant(monkeypatch, "TO-X4", weight_ratio=sp.exp(sp.Rational(19, 10) * d))
    assert _fresh("TO-X4").verdict == "refuted"
