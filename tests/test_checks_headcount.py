"""Focused tests of the HC checks (proofs_check/headcount.py): the cheap checks pass and every
declared mutant flips them; the verdicts that must not be verified are not; the derived
gate-corrected bound of HC-K1 against an independent enumeration; the search inputs of HC-L3 and
HC-P3 do what they claim. The expensive checks (construction grids, training) are covered by
tests/test_mutants.py's whole `verify --mutants` run."""

import math

import numpy as np
import pytest
import sympy as sp

import approxtheory as at
from approxtheory.proofs_check import CHECKS, MUTANTS, VERIFIED, Context, run_check
from approxtheory.proofs_check import headcount as hcc
from approxtheory.search_bench import known_hc_k1_vertices

CHEAP = ["HC-L1", "HC-L2", "HC-L3", "HC-C1", "HC-P6", "HC-L5", "HC-L6", "HC-L8", "HC-A3"]


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
    for cid, prov in (
        ("HC-K1c", "derived"),
        ("HC-TR1", "stated"),
        ("HC-TR2", "reconstructed"),
        ("HC-TR3", "stated"),
        ("HC-A3", "stated"),
    ):
        assert at.claim(cid).provenance == prov
        assert cid in CHECKS
    for cid in ("HC-TR1", "HC-TR2"):
        assert run_check(cid, Context()).verdict == "not-checkable"


# -------------------------------------------------- HC-K1c: the bound as a function of the gate
@pytest.mark.parametrize("gate", [-1.0, -1.05, -1.2, -1.5, -2.0, -3.0])
@pytest.mark.parametrize("beta", [3.0, 10.0, 100.0, 1000.0])
@pytest.mark.parametrize("T", [8, 16])
def test_gate_bound_holds_at_the_exact_vertex_worst_case(gate, beta, T):
    """The vertex worst case is enumerated independently of the model (search_bench); the
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


D4_CLEAN = {
    (h, T): (0.3 * T / 8 if h < 4 else 1e-3) * (1.2**-h) for h in range(1, 6) for T in (8, 32)
}


def test_p8_criterion_can_pass_and_fail(monkeypatch):
    """The P8 decision rule on stated tables: a clean transition at h = D passes and its
    mutant (head labels reversed) is inconsistent; a transition at h = 3 for D = 2 is too."""
    clean = {(1, 8): 0.2, (1, 32): 0.35, (2, 8): 1e-3, (2, 32): 1.1e-3, (3, 8): 8e-4, (3, 32): 9e-4}
    monkeypatch.setattr(hcc, "_exp_rows", _fake_phase({2: clean, 4: D4_CLEAN}))
    assert run_check("HC-P8", Context()).verdict == "consistent-empirical"
    assert run_check("HC-P8", Context(mutant="heads-relabelled")).verdict == "inconsistent"
    late = {(1, 8): 0.2, (1, 32): 0.35, (2, 8): 0.18, (2, 32): 0.3, (3, 8): 1e-3, (3, 32): 1e-3}
    monkeypatch.setattr(hcc, "_exp_rows", _fake_phase({2: late, 4: D4_CLEAN}))
    v = run_check("HC-P8", Context())
    assert v.verdict == "inconsistent" and "(a)" in v.evidence and v.witness["D=2"]["failed"]
