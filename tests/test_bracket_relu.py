"""The structured bracket of a separable ReLU read-out against a max (approxtheory.bounds.relu):
HC-L9's network is bracketed within 1.2x of its known worst case (T - 1)/(T·n_g), the bracket is
never below a dense enumeration of the box on small cells (HC-L9 and random separable read-outs),
and a planted unsound relaxation goes red."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from approxtheory.bounds import bracket_reach, upper_bracket
from approxtheory.bounds import relu as br
from approxtheory.constructions import build
from approxtheory.constructions.headcount import _grid_levels
from approxtheory.tasks import GeneralizedRetrieval


def _worst(T, eps):
    """HC-L9's exact sup error: all tokens a hair 1/(T·n_g) above a grid level."""
    ng = _grid_levels(eps)
    return (T - 1) / (T * ng)


def _grid_max(model, task, steps):
    """max |model - target| over the grid of ``steps + 1`` points per token (the box [0, 1])."""
    T = task.T
    axis = np.linspace(0.0, 1.0, steps + 1)
    X = np.array(list(itertools.product(axis, repeat=T)))[..., None]
    Xt = torch.from_numpy(X)
    with torch.no_grad():
        out = model(Xt).reshape(len(X), -1)[:, 0].double()
    y = task.target(Xt).reshape(len(X), -1)[:, 0].double()
    return float((out - y).abs().max())


@pytest.mark.parametrize("T,eps", [(2, 0.5), (3, 0.5), (2, 0.2)])
def test_hc_l9_small_cells_never_below_enumeration(T, eps):
    c = build("hc_l9", T=T, eps=eps)
    steps = {2: 120, 3: 30}[T]  # both contain the worst inputs j/n_g + 1/(T·n_g)
    grid = _grid_max(c.model, c.task, steps)
    b = br.relu_bracket(c.model, c.task)
    assert b.upper >= grid
    assert b.upper >= _worst(T, eps)
    assert abs(grid - _worst(T, eps)) < 1e-9  # the worst case formula, checked on the grid


@pytest.mark.parametrize("T,eps", [(4, 0.5), (4, 0.2), (4, 0.1), (16, 0.5), (16, 0.2), (16, 0.1)])
def test_hc_l9_quick_cells_within_1_2_of_worst(T, eps):
    """The cells HC-L9's quick check runs: certified through certify (the structured route)."""
    c = build("hc_l9", T=T, eps=eps)
    assert bracket_reach(c.model, c.task)[0] == "structured"
    cert = c.certify(time_limit=1.5)
    up, found = cert["sup_error_upper"], cert["bracket"]["found"]
    w = _worst(T, eps)
    assert w <= up <= 1.2 * w
    assert found <= up and found >= w * (1 - 1e-9)
    assert cert.get("certified")  # below the claimed bound ε
    assert "separable ReLU read-out" in cert["sup_error_upper_reason"]


def _random_separable(T, seed, dup):
    """hc_l9's model (uniform attention: the CLS state is x/T) with a random separable read-out:
    first-layer units each read one token, a dense second layer (``dup``: some rows repeated,
    so that groups of several units arise), random output weights."""
    rng = np.random.default_rng(seed)
    c = build("hc_l9", T=T, eps=0.5)
    m = c.model
    lins = [x for x in m.head.modules() if isinstance(x, torch.nn.Linear)]
    U, K = lins[0].out_features, lins[1].out_features
    W1 = np.zeros((U, T))
    W1[np.arange(U), np.arange(U) % T] = rng.normal(0, 3.0, U)
    b1 = rng.normal(0, 1.0, U)
    W2 = rng.normal(0, 1.0, (K, U))
    if dup:
        W2[1::2] = W2[0::2][: K // 2]
    b2 = rng.normal(0, 0.5, K)
    W3 = rng.normal(0, 1.0, (1, K))
    m.set_readout(W1, b1)
    m.set_readout(W2, b2, linear=1)
    m.set_readout(W3, [float(rng.normal())], linear=2)
    return m


@given(T=st.integers(2, 3), seed=st.integers(0, 10_000), dup=st.booleans(), mode=st.integers(0, 2))
@settings(max_examples=12, deadline=None)
def test_random_separable_never_below_enumeration(T, seed, dup, mode):
    m = _random_separable(T, seed, dup)
    if mode == 0:
        task = build("hc_l9", T=T, eps=0.5).task  # max_t x(t)
    elif mode == 1:  # a min with a negative outer coefficient
        task = GeneralizedRetrieval(
            T, 1, affine=([[1.0]], [0.0]), outer_affine=([-2.0], 0.5), mode="min"
        )
    else:  # a decreasing feature: the argmax is the smallest token
        task = GeneralizedRetrieval(
            T, 1, affine=([[-1.0]], [1.0]), outer_affine=([1.0], 0.0), mode="max"
        )
    assert br.relu_reason(m, task) is None
    b = br.relu_bracket(m, task, max_pieces=4000)
    grid = _grid_max(m, task, {2: 80, 3: 20}[T])
    assert b.upper >= grid * (1 - 1e-12)


def _narrow_H(orig):
    def f(p, sL, sU):
        mn, mx = orig(p, sL, sU)
        return mn, mn + 0.5 * (mx - mn)  # a planted relaxation tighter than the truth

    return f


def _others_at_bottom(orig):
    def f(p, c, X0, X1):
        jl, ju, feas = orig(p, c, X0, X1)
        return jl, jl, feas  # the other tokens pinned to their lowest value: unsound

    return f


@pytest.mark.parametrize(
    "plant", [("_H_range", _narrow_H), ("_others_interval", _others_at_bottom)]
)
def test_planted_unsound_relaxation_goes_red(monkeypatch, plant):
    """The soundness check above catches an unsound relaxation: the planted bracket falls below
    the enumerated error, and upper_bracket's own self-check refuses to give a number."""
    name, wrap = plant
    c = build("hc_l9", T=3, eps=0.5)
    grid = _grid_max(c.model, c.task, 30)
    monkeypatch.setattr(br, name, wrap(getattr(br, name)))
    b = br.relu_bracket(c.model, c.task)
    assert b.upper < grid  # the never-below-enumeration check would fail: red
    r = upper_bracket(c.model, c.task)
    assert r.upper is None and "internal check failed" in r.reason


def test_out_of_scope_is_refused():
    # HC-K2's memorizing head has a linear read-out: not this route's form
    c = build("hc_k2", T=4, d=1)
    assert br.relu_reason(c.model, c.task) is not None
    # a non-separable first layer (a unit reading two tokens) is refused, not loosely bounded
    m = _random_separable(2, 0, False)
    lin = [x for x in m.head.modules() if isinstance(x, torch.nn.Linear)][0]
    W1 = lin.weight.detach().double().numpy().copy()
    W1[0, :] = 1.0
    m.set_readout(W1, lin.bias.detach().double().numpy())
    assert "one token" in br.relu_reason(m, build("hc_l9", T=2, eps=0.5).task)
