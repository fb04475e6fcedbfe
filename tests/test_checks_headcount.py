"""Focused tests of the HC checks (proofs_check/headcount.py): the cheap checks pass and every
declared mutant flips them; the verdicts that must not be verified are not; the derived
gate-corrected bound of HC-K1 against an independent enumeration; the search inputs of HC-L3 and
HC-P3 do what they claim. The expensive checks (construction grids, training) are covered by
tests/test_mutants.py's whole `verify --mutants` run."""

import math

import numpy as np
import pytest
import sympy as sp
from _helpers import catalogued_with_a_check

import approxtheory as at
from approxtheory.bench.search import known_hc_k1_vertices
from approxtheory.proofs_check import CHECKS, MUTANTS, VERIFIED, Context, run_check
from approxtheory.proofs_check import _rows as rows_reader
from approxtheory.proofs_check import headcount as hcc

CHEAP = [
    "HC-L1",
    "HC-L2",
    "HC-L3",
    "HC-C1",
    "HC-P6",
    "HC-L5",
    "HC-L6",
    "HC-L7",
    "HC-L8",
    "HC-A3",
    "HC-P2",
]


@pytest.mark.parametrize("cid", CHEAP)
def test_cheap_checks_pass_with_a_scope(cid):
    v = run_check(cid, Context())
    assert v.verdict in VERIFIED, (cid, v.verdict, v.evidence)
    assert v.scope.split(":")[0] in ("full", "partial", "surrogate")
    assert MUTANTS[cid], cid


@pytest.mark.parametrize("cid,mutant", [(c, m) for c in CHEAP for m in MUTANTS[c]])
def test_every_mutant_of_a_cheap_check_flips_it(cid, mutant):
    v = run_check(cid, Context(mutant=mutant))
    assert v.verdict == "refuted", (cid, mutant, v.evidence)


def test_hc_t2b_and_tr3_say_vacuous_not_verified():
    for cid in ("HC-T2b", "HC-TR3"):
        v = run_check(cid, Context())
        assert v.verdict == "vacuous-here", v.evidence
        assert v.scope.startswith("partial:")
        # every checked cell really has k <= 0, by the catalogue's k
        k = at.claim("HC-T2b")
        assert all(
            float(k.evaluate("k", T=r["T"], s=r["s"], n=r["n"], D=r["D"])) <= 0 for r in v.rows
        )


def test_new_claims_have_a_check_or_a_reason_and_honest_provenance():
    catalogued_with_a_check(
        (
            ("HC-K1c", "derived"),
            ("HC-TR1", "stated"),
            ("HC-TR2", "reconstructed"),
            ("HC-TR3", "stated"),
            ("HC-A3", "stated"),
        )
    )
    for cid in ("HC-TR1", "HC-TR2"):
        assert run_check(cid, Context()).verdict == "not-checkable"


# -------------------------------------------------- HC-K1c: the bound as a function of the gate
@pytest.mark.parametrize("gate", [-1.0, -1.05, -1.2, -1.5, -2.0, -3.0])
@pytest.mark.parametrize("beta", [3.0, 10.0, 100.0, 1000.0])
@pytest.mark.parametrize("T", [8, 16])
def test_gate_bound_holds_at_the_exact_vertex_worst_case(gate, beta, T):
    """The vertex worst case is enumerated independently of the model (bench.search); the
    derived bound, weighted by |∂F_0/∂z_i| = 1 for both heads, must dominate it."""
    kc = at.claim("HC-K1c")
    worst, _ = known_hc_k1_vertices(T, beta, gate)
    bound = 2 * kc.evaluate_float("err_bound", S=T // 2, T=T, beta=beta, c=gate)
    assert worst <= bound * (1 + 1e-12)


def test_paper_bound_fails_at_gate_minus_one_and_the_derived_one_reduces_to_it():
    k1, kc = at.claim("HC-K1"), at.claim("HC-K1c")
    worst, _ = known_hc_k1_vertices(8, 1000.0, -1.0)
    assert worst > 2 * k1.evaluate_float("err_bound", S=4, T=8, beta=1000)  # the paper's slip
    assert float(k1.expr("gate")) == -1.0
    S, T, beta, c = (kc.symbol(x) for x in ("S", "T", "beta", "c"))
    # for c <= -2 the corrected bound is at most the paper's: (T - S) e^(β(1+c)) <= T e^(-β)
    diff = k1.expr("err_bound") - kc.expr("err_bound").subs(c, -2)
    assert sp.simplify(diff - S * sp.exp(-beta)) == 0
    assert kc.is_vacuous(c=-1) and not kc.is_vacuous(c=-1.01)


def test_hc_k1_construction_reports_the_gate_bound():
    from approxtheory.constructions import build

    c = build("hc_k1", T=8, beta=100.0, gate=-1.5)
    expect = 2 * at.claim("HC-K1c").evaluate_float("err_bound", S=4, T=8, beta=100, c=-1.5)
    assert c.extra["gate"] == -1.5 and c.extra["gate_bound"] == pytest.approx(expect, rel=1e-12)
    assert build("hc_k1", T=8, beta=100.0).extra["gate"] == -1.0  # the paper's default


# --------------------------------------------------------------------- search inputs
def test_l3_search_reaches_the_tied_middle_rank_supremum():
    """The worst error of the smooth selector at tied middle ranks is sup_δ δ/(1+e^(qδ²))
    (derived by hand); HC-L3's search must reach it within 1 %, and it falls like q^(-1/2)."""
    from scipy.optimize import minimize_scalar

    v = run_check("HC-L3", Context())
    for r in v.rows:
        q = r["q"]
        ref = -minimize_scalar(
            lambda a, q=q: -a / (1 + math.exp(min(q * a * a, 700))),
            bounds=(0, 1),
            method="bounded",
            options={"xatol": 1e-14},
        ).fun
        assert r["sup_error"] >= 0.99 * ref, (q, r["sup_error"], ref)
    assert v.slopes[0]["fitted"] == pytest.approx(-0.5, abs=0.05)


@pytest.mark.parametrize("T", [8, 16, 64])
def test_p3_gapped_inputs_have_the_gap(T):
    g = 0.1
    X = hcc._gapped_inputs(T, g, np.random.default_rng(0), 50)[..., 0]
    half = T // 2
    first = np.sort(X[:, :half], axis=1)
    second = np.sort(X[:, half:], axis=1)
    assert (first[:, -1] - first[:, -2] >= g - 1e-12).all()  # the max beats the rest by g
    assert (second[:, 1] - second[:, 0] >= g - 1e-12).all()  # the min beats the rest by g
    assert ((X >= 0) & (X <= 1)).all()


def test_p3_beta_needed_matches_the_single_head_formula():
    """With one head's others all at gap g the error is (S-1) g e^(-βg)/(1+(S-1)e^(-βg))
    (the other head exact); β_needed can be no smaller than where that equals ε."""
    from scipy.optimize import brentq

    T, g, eps = 16, 0.1, 1e-3
    b, _ = hcc._beta_needed(T, eps, g, 0, None)
    S = T // 2
    one = brentq(
        lambda beta: (S - 1) * g * math.exp(-beta * g) / (1 + (S - 1) * math.exp(-beta * g)) - eps,
        1,
        1e4,
    )
    assert b >= one * (1 - 1e-3)
    assert b <= one * 1.2  # and the search does not overshoot it by much


def test_every_hc_check_that_can_verify_declares_mutants():
    """Checks that can return verified-* declare mutants; the rest are not-checkable, refuted
    by the paper's own construction (HC-K1, HC-P2: consistent-empirical at best) or vacuity
    statements (HC-T2b, HC-TR3)."""
    no_verify = {"HC-K1", "HC-P2", "HC-T2b", "HC-TR3"}
    for cid, fn in CHECKS.items():
        if not cid.startswith("HC-") or cid in no_verify:
            continue
        if fn.source_fn.__name__.startswith("not_checkable"):
            continue
        assert MUTANTS[cid], cid


def _fake_phase(tables):
    """``tables``: D -> {(h, T): nmse}; the fake runner returns them as headcount_phase_d{D}."""

    def rows(name, profile):
        D = int(name[-1])
        return (
            tuple(
                {"D": D, "heads": h, "T": T, "steps": 300, "seed": 0, "val_nmse": v}
                for (h, T), v in tables[D].items()
            ),
            0.0,
            "fake",
        )

    return rows


# h >= D at the paper's Table 2 magnitude (within the training-adequacy gate's x10)
D4_CLEAN = {
    (h, T): (0.3 * T / 8 if h < 4 else 1e-5) * (1.2**-h) for h in range(1, 6) for T in (8, 32)
}


def test_p8_criterion_can_pass_and_fail(monkeypatch):
    """The P8 decision rule on stated tables: a clean transition at h = D passes and its
    mutant (head labels reversed) is inconsistent; a transition at h = 3 for D = 2 is too."""
    clean = {(1, 8): 0.2, (1, 32): 0.35, (2, 8): 1e-3, (2, 32): 1.1e-3, (3, 8): 8e-4, (3, 32): 9e-4}
    monkeypatch.setattr(rows_reader, "exp_rows", _fake_phase({2: clean, 4: D4_CLEAN}))
    assert run_check("HC-P8", Context()).verdict == "consistent-empirical"
    assert run_check("HC-P8", Context(mutant="heads-relabelled")).verdict == "inconsistent"
    late = {(1, 8): 0.2, (1, 32): 0.35, (2, 8): 0.18, (2, 32): 0.3, (3, 8): 1e-3, (3, 32): 1e-3}
    monkeypatch.setattr(rows_reader, "exp_rows", _fake_phase({2: late, 4: D4_CLEAN}))
    v = run_check("HC-P8", Context())
    assert v.verdict == "inconsistent" and "(a)" in v.evidence and v.witness["D=2"]["failed"]


# ------------------------------------------- false claims: the verdict must flip
def _run(cid):
    from approxtheory.proofs_check import CHECKS

    return CHECKS[cid](Context(profile="quick"))


def _plant(monkeypatch, cid, **exprs):
    """A copy of claim ``cid`` with some expressions replaced, put in the catalogue's registry
    for the test (what `verify --mutants` does with its generated claim mutants)."""
    import dataclasses

    from approxtheory.catalogue import _REGISTRY

    c = at.claim(cid)
    new = dataclasses.replace(c, expressions={**dict(c.expressions), **exprs})
    monkeypatch.setitem(_REGISTRY, c.id, new)
    return new


def test_t2c_reads_m_suff_and_a_smaller_exponent_is_refuted(monkeypatch):
    from approxtheory.proofs_check import FAILING, PASSING

    v = _run("HC-T2c")
    assert v.verdict in PASSING and v.claimed == 1.0, v.evidence
    assert v.slack is None  # C is unspecified: no room to report
    c = at.claim("HC-T2c")
    C, eps, gamma = (c.symbol(x) for x in ("C", "epsilon", "gamma"))
    _plant(monkeypatch, "HC-T2c", M_suff=C / eps ** (sp.Rational(1, 2) + gamma))
    v = _run("HC-T2c")
    assert v.verdict in FAILING and v.claimed == 0.5, v.evidence


def test_p11_tests_the_papers_constants_not_their_signs(monkeypatch):
    from approxtheory.proofs_check import FAILING

    assert _run("HC-P11").verdict == "consistent-empirical"
    _plant(monkeypatch, "HC-P11", alpha_paper=sp.Integer(-3), delta_paper=sp.Rational(3, 5))
    v = _run("HC-P11")
    assert v.verdict in FAILING and "(b)" in v.evidence, v.evidence
    monkeypatch.undo()
    _plant(monkeypatch, "HC-P11", delta_paper=sp.Rational(3, 5))  # the sign is right
    assert _run("HC-P11").verdict in FAILING


def test_l7_tests_the_value_of_eps_0(monkeypatch):
    """ε_0 = ½ min_i (min_{x ∉ B_i} f_i - z_i) passes; doubled (false at the argmin outside
    B_i) it is refuted. Uses the catalogue's eps_0 where it has one."""
    from approxtheory.proofs_check import FAILING, PASSING

    c = at.claim("HC-L7")
    e0 = c.expressions.get("eps_0")
    if e0 is None:
        e0 = sp.Symbol("Delta_out", positive=True) / 2
    _plant(monkeypatch, "HC-L7", eps_0=e0)
    v = _run("HC-L7")
    assert v.verdict in PASSING and "least excess / ε_0 = 2" in v.evidence, v.evidence
    _plant(monkeypatch, "HC-L7", eps_0=2 * e0)
    assert _run("HC-L7").verdict in FAILING


def test_k1c_without_the_out_of_set_count_is_refuted_at_a_quarter(monkeypatch):
    """The issue's false variant: (T - |S|) dropped; false at |S| = T/4 (corner error 0.525 >
    0.405 at T = 8, c = -1.1, β = 10)."""
    v = _run("HC-K1c")
    assert v.verdict == "verified-numeric", v.evidence
    assert {r["S"] / r["T"] for r in v.rows} == {0.25, 0.5, 0.75}
    assert len({r["T"] for r in v.rows}) >= 3
    c = at.claim("HC-K1c")
    S, T, beta, g = (c.symbol(x) for x in ("S", "T", "beta", "c"))
    _plant(monkeypatch, "HC-K1c", err_bound=(S - 1) / (sp.E * beta) + sp.exp(beta * (1 + g)))
    v = _run("HC-K1c")
    assert v.verdict == "refuted", v.evidence
    cell = next(r for r in v.rows if (r["T"], r["S"], r["gate"], r["beta"]) == (8, 2, -1.1, 10.0))
    assert cell["sup_error"] == pytest.approx(0.525, abs=1e-3)
    assert cell["claimed_bound"] == pytest.approx(0.405, abs=1e-3) and not cell["holds"]


def test_k1c_scale_below_its_slack_is_refuted(monkeypatch):
    v = _run("HC-K1c")
    assert v.slack is not None and v.slack >= 1
    c = at.claim("HC-K1c")
    _plant(monkeypatch, "HC-K1c", err_bound=c.expr("err_bound") / (2 * v.slack))
    assert _run("HC-K1c").verdict == "refuted"


def test_k1c_faster_rate_is_refuted(monkeypatch):
    c = at.claim("HC-K1c")
    S, T, beta, g = (c.symbol(x) for x in ("S", "T", "beta", "c"))
    _plant(
        monkeypatch,
        "HC-K1c",
        err_bound=(S - 1) / (sp.E * beta**2) + (T - S) * sp.exp(beta * (1 + g)),
    )
    assert _run("HC-K1c").verdict == "refuted"


def test_k1_is_refuted_at_the_papers_gate_and_would_hold_at_minus_two(monkeypatch):
    v = _run("HC-K1")
    assert v.verdict == "refuted", v.evidence
    assert {r["S"] / r["T"] for r in v.rows} == {0.25, 0.5, 0.75}
    _plant(monkeypatch, "HC-K1", gate=sp.Integer(-2))  # a corrected claim: the check can pass
    assert _run("HC-K1").verdict == "consistent-empirical"


def test_p2_checks_the_corrected_gate_prediction(monkeypatch):
    """HC-P2 (the digest's P2 at the corrected gate) is verified, reads HC-K1's bound, and a
    bound decaying like β^-2 or an error floor (W_V x 1.02) is refuted."""
    v = _run("HC-P2")
    assert v.verdict == "verified-numeric", v.evidence
    assert v.formula_note and v.slack >= 1
    c = at.claim("HC-K1")
    S, T, beta = (c.symbol(x) for x in ("S", "T", "beta"))
    _plant(monkeypatch, "HC-K1", err_bound=(S - 1) / (sp.E * beta**2) + T * sp.exp(-beta))
    assert _run("HC-P2").verdict == "refuted"
    monkeypatch.undo()
    assert run_check("HC-P2", Context(mutant="value-scale")).verdict == "refuted"
    assert run_check("HC-P2", Context(mutant="gate-minus-1")).verdict == "refuted"


def test_head_family_reaches_the_adversarial_search():
    """The quick profile measures one head on vertex classes + a structured family only; it must
    reach >= 98 % of the adversarial search's worst error (and never exceed the true error)."""
    from approxtheory.measure import sup_error

    for T, S, beta, gate in [(8, 2, 100.0, -1.5), (16, 12, 1000.0, -2.0), (32, 8, 10.0, -1.1)]:
        model, task = hcc._head_model(T, S, beta, gate)
        X = hcc._head_inputs(T, S, beta, np.random.default_rng(0))
        fam = float(errors_of(model, task, X).max())
        srch = sup_error(model, task, budget=128, seed=0).value
        assert fam >= 0.98 * srch, (T, S, beta, gate, fam, srch)


def errors_of(model, task, X):
    from approxtheory.measure import errors

    return errors(model, task, X)


def test_l3_an_error_floor_is_refuted(monkeypatch):
    """A selector with a constant 3e-4 offset converges to nothing: the issue's false variant."""
    from approxtheory.proofs_check import FAILING

    v = _run("HC-L3")
    assert v.verdict == "verified-numeric" and v.slopes[0]["predicted"] == -0.5, v.evidence
    c = at.claim("HC-L3")
    _plant(monkeypatch, "HC-L3", x_tilde=c.expr("x_tilde") + sp.Rational(3, 10000))
    v = _run("HC-L3")
    assert v.verdict in FAILING and "floor" in v.evidence, v.evidence


def test_l3_generated_style_mutants_are_refuted(monkeypatch):
    """What the claim-mutant generator makes of x_tilde (its first symbol Y squared, the formula
    halved) is false and refuted."""
    from approxtheory.catalogue.mutate import shift_rate
    from approxtheory.proofs_check import FAILING

    c = at.claim("HC-L3")
    for new in (shift_rate(c.expr("x_tilde"), c.symbol("Y"), +1), c.expr("x_tilde") / 2):
        _plant(monkeypatch, "HC-L3", x_tilde=new)
        assert _run("HC-L3").verdict in FAILING, new


def test_a3_lipschitz_targets_refute_a_smaller_worst_case_gamma(monkeypatch):
    """γ = 0.6·max(d, D) (the issue's false variant) fails on Lipschitz, non-smooth targets; the
    Barron γ scaled below the room the check found fails on the C^∞ ones."""
    v = _run("HC-A3")
    assert v.verdict == "verified-numeric", v.evidence
    # the Barron ridge family's certified lower bound makes γ = 2 tight (slack 1, not the C^∞
    # targets' 3.75)
    assert v.slack == pytest.approx(1.0) and v.measured["gamma_needed_lipschitz"] == pytest.approx(
        1.0, abs=0.05
    )
    assert all(r["sup_error"] >= r["lower_bound"] for r in v.rows if "lower_bound" in r)
    c = at.claim("HC-A3")
    d, D = c.symbol("d"), c.symbol("D")
    _plant(monkeypatch, "HC-A3", gamma_worst=sp.Rational(3, 5) * sp.Max(d, D))
    w = _run("HC-A3")
    assert w.verdict == "refuted" and "Lipschitz" in w.evidence, w.evidence
    monkeypatch.undo()
    _plant(monkeypatch, "HC-A3", gamma_barron=c.expr("gamma_barron") * sp.Float(1 / (2 * v.slack)))
    assert _run("HC-A3").verdict == "refuted"


def test_p3_fits_T_apart_from_eps_and_a_T_blind_claim_is_refuted(monkeypatch):
    v = _run("HC-P3")
    assert v.verdict == "verified-numeric", v.evidence
    assert [s["predicted"] for s in v.slopes] == [1.0, -1.0]
    c = at.claim("HC-P3")
    eps, g = c.symbol("epsilon"), c.symbol("g")
    _plant(monkeypatch, "HC-P3", beta_needed=sp.log(1 / eps) / g)  # T-blind
    w = _run("HC-P3")
    assert w.verdict == "refuted" and "T-dependence" in w.evidence, w.evidence
    T = c.symbol("T")
    _plant(monkeypatch, "HC-P3", beta_needed=sp.log(T / eps**2) / g)  # the generated rate+ mutant
    assert _run("HC-P3").verdict == "refuted"


def test_t2a_reads_m_suff_and_its_scope_says_n_2(monkeypatch):
    v = _run("HC-T2a")
    assert v.verdict == "verified-numeric", v.evidence
    assert "n = 2" in v.scope and "inference" in v.scope
    c = at.claim("HC-T2a")
    C, eps, gamma = (c.symbol(x) for x in ("C", "epsilon", "gamma"))
    _plant(monkeypatch, "HC-T2a", M_suff=C / eps ** (gamma - sp.Rational(1, 2)))  # rate-
    assert _run("HC-T2a").verdict == "refuted"


def test_k2_and_l9_read_their_formulas(monkeypatch):
    """HC-K2's width halved (fewer dimensions than numbers memorised) and HC-L9's count exponent
    halved (T/ε^(1/2)) are refuted."""
    c = at.claim("HC-K2")
    _plant(monkeypatch, "HC-K2", width=c.expr("width") / 2)
    assert _run("HC-K2").verdict == "refuted"
    assert _run("HC-P1").verdict == "refuted"  # HC-P1 reads HC-K2's formulas
    monkeypatch.undo()
    l9 = at.claim("HC-L9")
    T, eps = l9.symbol("T"), l9.symbol("epsilon")
    _plant(monkeypatch, "HC-L9", params_order=T / sp.sqrt(eps))
    assert _run("HC-L9").verdict == "refuted"
