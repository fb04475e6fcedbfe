"""The structured bracket of InfoFlow's two-layer second-largest construction
(approxtheory.bounds.kth, IF-K1/IF-T1): never below dense grids, the adversarial search or the
model at inputs built to be bad, certified on the quick grid's cells, typed errors on bad
arguments, and planted unsound relaxations (a deficit or a case of the split dropped, the
rounding allowance removed) go red."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from approxtheory.bounds import bracket_reach, upper_bracket
from approxtheory.bounds import kth as bk
from approxtheory.bracket_softmax import Unsupported
from approxtheory.constructions import build
from approxtheory.errors import ConfigError


def _errors(c, X):
    Xt = torch.from_numpy(np.asarray(X, np.float64))
    with torch.no_grad():
        out = c.model(Xt).reshape(len(X), -1)[:, 0].double()
    y = c.task.target(Xt).reshape(len(X), -1)[:, 0].double()
    return (out - y).abs().numpy()


def _grid_max(c, steps):
    axis = np.linspace(0.0, 1.0, steps + 1)
    X = np.array(list(itertools.product(axis, repeat=c.task.T)))[..., None]
    return float(_errors(c, X).max())


def _bad_inputs(c, beta, n=400, seed=0):
    """Inputs built to be bad: x_(1) tied with (or just above) x_(2) = y, the others a few 1/β
    below, over a fine sweep of y (the attention deficits and the interpolation error peak)."""
    rng = np.random.default_rng(seed)
    T = c.task.T
    X = []
    for y in np.linspace(0.0, 1.0, n):
        for dd in (0.0, 1.0, 2.5, 4.0, 6.0):
            x = np.full((T, 1), max(0.0, y - dd / beta))
            x[0, 0] = x[1 % T, 0] = y
            X.append(x)
        x = rng.uniform(0, y + 1e-12, (T, 1))
        x[0, 0], x[1 % T, 0] = min(1.0, y + rng.uniform(0, 0.01)), y
        X.append(x)
    return np.array(X)


@pytest.mark.parametrize("T,N,beta", [(2, 8, 10.0), (3, 8, 30.0), (3, 4, 1e4), (4, 8, 100.0)])
def test_small_cells_never_below_grid(T, N, beta):
    c = build("if_second_largest", T=T, N=N, beta=beta)
    b = bk.kth_bracket(c.model, c.task)
    steps = {2: 200, 3: 40, 4: 14}[T]
    assert b.upper >= _grid_max(c, steps)
    assert b.upper >= float(_errors(c, _bad_inputs(c, beta)).max())
    assert b.found <= b.upper


@settings(max_examples=12, deadline=None, derandomize=True)
@given(
    T=st.integers(2, 6),
    N=st.sampled_from([2, 3, 5, 8, 16]),
    logb=st.floats(0.5, 4.5),
    f=st.sampled_from(["identity", "sin"]),
    seed=st.integers(0, 2**16),
)
def test_random_instances_never_below_evaluation(T, N, logb, f, seed):
    """Random small instances (T, N, β, f): the bracket is at or above the error at random and
    adversarially built inputs (a sound bound is never below an evaluated error)."""
    beta = 10.0**logb
    c = build("if_second_largest", T=T, N=N, beta=beta, f=f)
    b = bk.kth_bracket(c.model, c.task, max_pieces=2048)
    rng = np.random.default_rng(seed)
    X = np.concatenate([rng.uniform(0, 1, (300, T, 1)), _bad_inputs(c, beta, n=120, seed=seed)])
    assert b.upper >= float(_errors(c, X).max())
    assert math.isfinite(b.upper)


@pytest.mark.parametrize("T,N", [(4, 8), (4, 128), (16, 32), (64, 8), (64, 128)])
def test_quick_cells_certified_and_close(T, N):
    """The quick profile's cells: the structured route, certified (at or below the claimed
    bound), never below the adversarial search, and within 1.5x of the model's worst found."""
    c = build("if_second_largest", T=T, N=N, beta=1e4)
    assert bracket_reach(c.model, c.task)[0] == "structured"
    cert = c.certify(time_limit=1.5)
    up, found = cert["sup_error_upper"], cert["bracket"]["found"]
    assert cert.get("certified")
    assert "two-layer second largest" in cert["sup_error_upper_reason"]
    m = c.measure(budget=64)
    assert m["sup_error"] <= up
    assert found <= up <= 1.5 * found


def test_budget_spent_is_still_sound_and_marked():
    c = build("if_second_largest", T=8, N=64, beta=1e4)
    full = bk.kth_bracket(c.model, c.task)
    b = bk.kth_bracket(c.model, c.task, max_pieces=1)
    assert b.stop.startswith("piece budget spent") and not b.converged
    assert b.upper >= full.upper * (1 - 1e-12)  # the best sound bound so far: never tighter


def test_deficits_match_the_closed_form():
    # one free key beside the top: W((n-1)/e) for ζ = 0; T - 1 free keys and D = 0
    from scipy.special import lambertw

    for n in (2, 3, 10, 63):
        L = bk.retrieval_deficit(n)
        assert L >= float(lambertw((n - 1) / math.e).real)
        assert L <= float(lambertw((n - 1) / math.e).real) * (1 + 1e-9)
    assert bk.retrieval_deficit(1) == 0.0
    # D = 0: the one pinned key sits at the top, so the joint deficit is the plain one
    assert abs(bk.joint_deficit(10, 0.0) - bk.retrieval_deficit(10)) < 1e-9


@pytest.mark.parametrize(
    "kw,match",
    [
        ({"lo": 0.6, "hi": 0.4}, "lo must be <= hi"),
        ({"lo": float("nan")}, "finite"),
        ({"hi": float("inf")}, "finite"),
        ({"max_pieces": 0}, "positive integer"),
        ({"max_pieces": -3}, "positive integer"),
        ({"tol": -1.0}, "tol"),
    ],
)
def test_bad_arguments_are_typed_errors(kw, match):
    c = build("if_second_largest", T=4, N=8, beta=1e4)
    with pytest.raises(ConfigError, match=match):
        bk.kth_bracket(c.model, c.task, **kw)


def test_unsupported_domain_and_models():
    c = build("if_second_largest", T=4, N=8, beta=1e4)

    class Sphere:
        domain, T, d, lo, hi = "sphere", 4, 1, -1.0, 1.0

    with pytest.raises(ConfigError, match="box"):
        bk.kth_bracket(c.model, Sphere())
    other = build("softmax_retrieval", T=4, beta=10.0)
    assert bk.kth_reason(other.model, other.task) is not None
    # the no-self-exclusion mutant: still composed, but ε = 1: sound and far from certified
    c2 = build("if_second_largest", T=4, N=8, beta=1e4)
    c2.model.attention(0).q.weight.data[1:].zero_()
    b = bk.kth_bracket(c2.model, c2.task)
    assert b.upper >= float(_errors(c2, _bad_inputs(c2, 1e4, n=50)).max())
    # a read-out that reads what layer 1 wrote into CLS (slot_m, column T + 2) is refused, not
    # bounded as if it did not
    c3 = build("if_second_largest", T=4, N=8, beta=1e4)
    c3.model.readout_linear(0).weight.data[:, 4 + 2] += 0.5
    with pytest.raises(Unsupported, match="CLS"):
        bk.kth_bracket(c3.model, c3.task)
    # a negative box is outside the scope (FFN 1's ReLU(x) is x only for x >= 0)
    with pytest.raises(Unsupported, match="x >= 0"):
        bk.kth_bracket(c.model, c.task, lo=-0.5, hi=1.0)


def test_readout_gain_mutant_is_bounded_soundly():
    c = build("if_second_largest", T=4, N=8, beta=1e4)
    c.model.readout_linear(1).weight.data.mul_(1.05)
    b = bk.kth_bracket(c.model, c.task)
    assert b.upper >= float(_errors(c, _bad_inputs(c, 1e4)).max())


def _planted(monkeypatch, which):
    if which == "no-deficit":  # drop layer 2's deficit: U within [y, y + ε]
        orig = bk._band

        def band(p):
            eL, eU, parts = orig(p)
            return 0.0, eU, parts

        monkeypatch.setattr(bk, "_band", band)
    elif which == "one-case":  # drop the case x_(1) = x_(2): τ2's own deficit D1 forgotten
        monkeypatch.setattr(bk, "retrieval_deficit", lambda n, zeta=0.0: 0.0)
        monkeypatch.setattr(bk, "joint_deficit", lambda T, bD, zeta=0.0: 0.0)
    elif which == "no-self-term":  # drop the self weight's allowance ε (positional exclusion)
        orig_b = bk._band

        def band2(p):
            return orig_b({**p, "gap": -1e9})

        monkeypatch.setattr(bk, "_band", band2)


@pytest.mark.parametrize(
    "which,mutant", [("no-deficit", False), ("one-case", False), ("no-self-term", True)]
)
def test_planted_unsound_relaxation_goes_red(monkeypatch, which, mutant):
    """With a planted unsound relaxation the bracket falls below an evaluated error at T = 16,
    N = 128 (where the attention deficits dominate; for the self term, on the construction
    without its self-exclusion, where ε is what bounds layer 1): the soundness check catches
    it. (The float64 rounding allowances, ~1e-15, are below what an evaluation can expose.)"""
    c = build("if_second_largest", T=16, N=128, beta=1e4)
    if mutant:
        c.model.attention(0).q.weight.data[1:].zero_()
    X = _bad_inputs(c, 1e4)
    worst = float(_errors(c, X).max())
    assert bk.kth_bracket(c.model, c.task).upper >= worst
    _planted(monkeypatch, which)
    assert bk.kth_bracket(c.model, c.task).upper < worst
    # and upper_bracket's own self-check refuses to give a number below the evaluated error
    r = upper_bracket(c.model, c.task, method="structured")
    assert r.upper is None or r.upper >= worst
