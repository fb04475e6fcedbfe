"""Certified brackets of two searched-only grids: one HC-K1 head (HC-K1c, HC-P2: the structured
softmax-over-box bracket over [0, 1]^T) and IF-R2's 1-D interpolants (exact by piecewise
linearity, the interpolation remainder for the smooth target). Soundness is judged against
independent evaluations (dense grids, vertex enumeration), and an unsound relaxation goes red."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from approxtheory.measure import errors
from approxtheory.proofs_check import Context, run_check
from approxtheory.proofs_check.headcount import k1
from approxtheory.proofs_check.infoflow import costs


def _dense_sup_1d(name: str, n: int, Lf: float, points: int = 100_001) -> float:
    targets, _ = costs._r2_targets(1, n, None, Lf)
    f = targets[name]
    u = np.linspace(0.0, 1.0, points)
    return float(np.max(np.abs(costs._interp_1d(f, n, u) - f(u))))


@pytest.mark.parametrize("name", ["adversarial", "zigzag", "smooth"])
@pytest.mark.parametrize("n", [8, 64, 256])
@pytest.mark.parametrize("Lf", [0.25, 4.0])
def test_interpolant_bound_is_above_a_dense_grid_and_tight(name, n, Lf):
    targets, brk = costs._r2_targets(1, n, None, Lf)
    f = targets[name]
    knots = np.linspace(0.0, 1.0, n)
    u = np.unique(np.concatenate([knots, (knots[:-1] + knots[1:]) / 2, brk]))
    found = float(np.max(np.abs(costs._interp_1d(f, n, u) - f(u))))
    up = costs._r2_upper_1d(name, f, n, Lf, found)
    dense = _dense_sup_1d(name, n, Lf)
    assert found <= up and dense <= up
    assert up <= 1.1 * max(found, dense)


def test_an_unsound_remainder_is_below_the_dense_grid():
    # half the interpolation remainder (h²/16) is not a bound: the comparison that accepts
    # the real one rejects it
    n, Lf = 8, 1.0
    uj = np.linspace(0.0, 1.0, n)
    h = np.diff(uj)
    half = float(np.max(h * h / 16 * Lf * np.sin(uj[1:])))
    assert half < _dense_sup_1d("smooth", n, Lf)


def test_if_r2_is_certified_in_every_cell():
    v = run_check("IF-R2", Context(profile="quick"))
    assert v.verdict == "verified-numeric", v.evidence
    assert v.certified["all"] and v.certified["cells"] == v.certified["of"] > 0
    assert "certified in every cell" in v.covered


@settings(max_examples=12, deadline=None)
@given(
    T=st.integers(2, 5),
    s_frac=st.sampled_from([0.25, 0.5, 1.0]),
    beta=st.sampled_from([1.0, 3.0, 10.0, 100.0]),
    gate=st.sampled_from([-1.0, -1.5, -2.0]),
    seed=st.integers(0, 3),
)
def test_head_bracket_is_above_enumeration_and_random_inputs(T, s_frac, beta, gate, seed):
    S = math.ceil(s_frac * T)
    model, task = k1._head_model(T, S, beta, gate)
    grid = np.stack(np.meshgrid(*[np.linspace(0, 1, 5)] * T, indexing="ij"), -1).reshape(-1, T)
    rng = np.random.default_rng(seed)
    X = np.concatenate([grid, rng.uniform(0, 1, (2000, T))])[..., None]
    found = float(np.max(errors(model, task, X)))
    up = k1._head_upper(T, S, beta, gate)
    assert math.isfinite(up) and found <= up * (1 + 1e-9) + 1e-12


def test_a_bracket_below_the_found_error_is_an_error_not_a_certificate(monkeypatch):
    ctx = Context(profile="quick")
    rows = [{"T": 8, "S": 4, "beta": 10.0, "gate": -2.0, "sup_error": 0.1, "claimed_bound": 1.0}]
    rows[0]["holds"] = True
    monkeypatch.setattr(k1, "_head_upper", lambda *a: 0.05)
    with pytest.raises(AssertionError, match="above the certified"):
        k1._certify_heads(ctx, rows)


@pytest.mark.parametrize("cid", ["HC-P2", "HC-K1c"])
def test_head_grids_are_certified_in_every_cell(cid):
    v = run_check(cid, Context(profile="quick"))
    assert v.verdict == "verified-numeric", v.evidence
    assert v.certified["all"] and v.certified["bracketed"] == v.certified["of"] > 0
    for e in v.certified["table"]:
        assert (
            e["found"] <= e["certified"] * (1 + 1e-9) + 1e-12 <= e["claimed"] * (1 + 2e-9) + 3e-12
        )


# ------------------------------------------------------------------- TO-X2 (a lower bound)
def test_to_x2_floor_is_certified_in_every_cell():
    v = run_check("TO-X2", Context(profile="quick"))
    assert v.verdict == "verified-numeric", v.evidence
    assert v.certified["all"] and v.certified["cells"] == v.certified["of"] == 45
    assert "checked symbolically: yes" in v.covered
    for e in v.certified["table"]:  # tight: the floor is the box's minimum
        assert abs(e["claimed"] - e["certified"]) <= 1e-12 * e["claimed"]


def test_to_x2_certificate_rejects_a_floor_above_the_minimum():
    import sympy as sp

    from approxtheory import claim
    from approxtheory.proofs_check.tradeoffs import floor_certificate as heads

    c = claim("TO-X2")
    B, L = c.symbol("B"), c.symbol("L")
    true = c.expr("floor")
    cells = [(0.5, 9, 0.5), (2.0, 257, 0.01)]
    rec, _ = heads._x2_certificate(c, true, cells)
    assert rec["all"]
    # q = (L - 1) e^{-3.9 B}: above the true floor by a factor e^{0.1 B} at most
    rec, text = heads._x2_certificate(c, true.subs(B, B * sp.Rational(39, 40)), cells)
    assert not rec["all"] and rec["cells"] == 0
    rec, _ = heads._x2_certificate(c, true * (1 + sp.Float(1e-9)), cells)
    assert not rec["all"]
    assert L in true.free_symbols


def test_to_x2_certificate_needs_its_monotonicity_step(monkeypatch):
    from approxtheory import claim
    from approxtheory.proofs_check.tradeoffs import floor_certificate as heads

    monkeypatch.setattr(heads, "_x2_monotone", lambda: False)
    c = claim("TO-X2")
    rec, text = heads._x2_certificate(c, c.expr("floor"), [(1.0, 5, 0.1)])
    assert not rec["all"] and "checked symbolically: NO" in text
