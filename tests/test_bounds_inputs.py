"""Bad inputs to the bound helpers: typed errors for NaN, inverted,
unbounded or misshapen boxes, infeasible LPs and misshapen points; sizes refused before
allocating; ``upper_bracket`` leaves the caller's global RNG state alone and stays seeded."""

import math

import numpy as np
import pytest
import torch

from approxtheory import bounds as bd
from approxtheory.constructions import build
from approxtheory.errors import ConfigError, InvalidValueError, ResourceLimitError
from approxtheory.resources import limits

torch.set_num_threads(1)
NAN, INF = math.nan, math.inf


@pytest.fixture(scope="module")
def retrieval():
    return build("softmax_retrieval", T=2, beta=10.0)


# ----------------------------------------------------------------------------- softmax_bounds
@pytest.mark.parametrize(
    "lo,hi,match",
    [
        ([0.0, NAN], [1.0, 1.0], "NaN"),  # was: the NaN key read as masked
        ([0.0, 0.0], [1.0, NAN], "NaN"),
        ([1.0, 0.0], [0.0, 1.0], "lo must be <= hi"),  # was: pl > pu
        ([INF, 0.0], [INF, 1.0], r"\+inf"),
        ([[0.0, 0.0]], [[1.0, 1.0, 1.0]], "one shape"),
        (np.zeros((2, 0)), np.zeros((2, 0)), "J >= 1"),
        (0.0, 1.0, "J >= 1"),
        ("abc", [1.0], "real numbers"),
    ],
)
def test_softmax_bounds_refuses_bad_boxes(lo, hi, match):
    with pytest.raises(InvalidValueError, match=match):
        bd.softmax_bounds(lo, hi)


def test_softmax_bounds_infinite_ends_are_sound():
    # masked keys (lo = hi = -inf) get [0, 0]; an unbounded-above key may take all the mass
    pl, pu = bd.softmax_bounds([0.0, -INF], [1.0, -INF])
    assert pl[0] == pytest.approx(1.0, abs=1e-12) and pu[0] == 1.0 and pl[1] == pu[1] == 0.0
    pl, pu = bd.softmax_bounds([0.0, 0.0], [1.0, INF])
    assert pl[0] == 0.0 and pu[1] == 1.0 and pu[0] > 0.7  # was: pu[1] = 0
    assert (pl <= pu).all()


def test_softmax_bounds_of_200000_keys_are_refused_before_allocating():
    with pytest.raises(ResourceLimitError, match="200000 keys") as e:
        bd.softmax_bounds(torch.zeros(200000), torch.ones(200000))
    assert e.value.needed > e.value.limit and e.value.kind == "memory"
    # the limit in force is the one used: 1000 keys (24 MB of work arrays) fit only without it
    with limits(max_bytes="16M"), pytest.raises(ResourceLimitError):
        bd.softmax_bounds(torch.zeros(1000), torch.ones(1000))
    pl, pu = bd.softmax_bounds(torch.zeros(1000), torch.ones(1000))
    assert pl.shape == (1000,) and (pl <= pu).all()


# ----------------------------------------------------------------------------- simplex_lp_max
@pytest.mark.parametrize(
    "a,pl,pu,match",
    [
        ([1.0, 2.0], [0.8, 0.8], [1.0, 1.0], r"infeasible: sum\(pl\)"),  # was: a value (2.4)
        ([1.0, 2.0], [0.1, 0.1], [0.3, 0.3], r"infeasible: sum\(pu\)"),
        ([NAN, 2.0], [0.0, 0.0], [1.0, 1.0], "a must be finite"),
        ([1.0, 2.0], [0.0, NAN], [1.0, 1.0], "pl must be finite"),
        ([1.0, 2.0], [0.6, 0.0], [0.4, 1.0], "pl <= pu"),
        ([1.0, 2.0], [-0.1, 0.0], [1.0, 1.0], "0 <= pl"),
        ([1.0, 2.0, 3.0], [0.0, 0.0], [1.0, 1.0], "one shape"),
    ],
)
def test_simplex_lp_max_refuses_infeasible_and_bad_inputs(a, pl, pu, match):
    with pytest.raises(InvalidValueError, match=match):
        bd.simplex_lp_max(a, pl, pu)


def test_simplex_lp_max_at_the_feasibility_edges():
    # Σ pl = 1: the only feasible p is pl; Σ pu = 1: the only feasible p is pu
    assert float(bd.simplex_lp_max([1.0, 3.0], [0.25, 0.75], [1.0, 1.0])) == pytest.approx(2.5)
    assert float(bd.simplex_lp_max([1.0, 3.0], [0.0, 0.0], [0.5, 0.5])) == pytest.approx(2.0)


# ----------------------------------------------------------------------------- boxes
@pytest.mark.parametrize(
    "lo,hi,match",
    [
        (-INF, INF, r"shape \(T, 1\)"),  # was: ValueError (not enough values to unpack)
        (np.full((2, 1), -INF), np.full((2, 1), INF), "finite"),
        (np.zeros((2, 1)), np.full((2, 1), NAN), "NaN"),
        (np.ones((2, 1)), np.zeros((2, 1)), "lo must be <= hi"),
        (np.zeros((2, 3)), np.ones((2, 3)), r"got \(2, 3\)"),
        (np.zeros((2, 2, 1, 1)), np.ones((2, 2, 1, 1)), "shape"),
    ],
)
def test_layer_bounds_refuses_bad_boxes(retrieval, lo, hi, match):
    with pytest.raises(ConfigError, match=match):
        bd.layer_bounds(retrieval.model, lo, hi)


@pytest.mark.parametrize(
    "lo,hi,match",
    [
        (-INF, INF, "finite"),
        (np.zeros((2, 1)), np.full((2, 1), NAN), "NaN"),
        (1.0, 0.0, "lo must be <= hi"),
        (np.zeros((3, 1)), np.ones((3, 1)), r"\(2, 1\)"),
    ],
)
def test_error_bounds_refuses_bad_boxes(retrieval, lo, hi, match):
    with pytest.raises(ConfigError, match=match):
        bd.error_bounds(retrieval.model, retrieval.task, lo, hi)


def test_error_bounds_scalar_box_is_the_task_shape(retrieval):
    L, U = bd.error_bounds(retrieval.model, retrieval.task, 0.0, 1.0)
    L2, U2 = bd.error_bounds(retrieval.model, retrieval.task, np.zeros((2, 1)), np.ones((2, 1)))
    assert torch.equal(L, L2) and torch.equal(U, U2)


def test_overflowing_models_give_infinite_bounds_not_nan():
    c = build("softmax_retrieval", T=2, beta=10.0)
    with torch.no_grad():
        for p in c.model.parameters():
            p.mul_(1e300)
    L, U = bd.error_bounds(c.model, c.task, 0.0, 1.0)
    assert not torch.isnan(L).any() and not torch.isnan(U).any()
    assert (L == -INF).all() and (U == INF).all()
    states, (olo, ohi) = bd.layer_bounds(c.model, np.zeros((2, 1)), np.ones((2, 1)))
    assert not any(torch.isnan(a).any() or torch.isnan(b).any() for a, b in states)
    # the forward overflows to NaN at evaluated inputs: +inf, marked, never a finite number
    for method in ("auto", "generic"):
        r = bd.upper_bracket(c.model, c.task, max_splits=4, max_boxes=64, method=method)
        assert r.upper == INF and r.unsound_input and r.stop == "unsound-input", method
        assert "NaN/inf" in r.reason


def test_box_forms_that_cannot_fit_are_refused_before_allocating(retrieval):
    lo, hi = np.zeros((65536, 2, 1)), np.ones((65536, 2, 1))  # forms: 8 MiB at least
    with limits(max_bytes="4M"), pytest.raises(ResourceLimitError, match="layer_bounds on 65536"):
        bd.layer_bounds(retrieval.model, lo, hi)
    with limits(max_bytes="4M"), pytest.raises(ResourceLimitError, match="error_bounds on 65536"):
        bd.error_bounds(retrieval.model, retrieval.task, lo, hi)


# ----------------------------------------------------------------------------- upper_bracket
@pytest.mark.parametrize(
    "points,match",
    [
        (np.zeros((3, 5)), r"shape \(n, 2, 1\) or \(2, 1\)"),  # was: silently dropped
        (np.zeros((5, 2)), r"got \(5, 2\)"),  # was: silently reshaped to (5, 2, 1)
        (np.zeros((1, 1, 2)), r"got \(1, 1, 2\)"),
        (np.full((1, 2, 1), NAN), "finite"),
        ("x", "reals"),
    ],
)
def test_upper_bracket_refuses_points_of_the_wrong_shape(retrieval, points, match):
    with pytest.raises(ConfigError, match=match):
        bd.upper_bracket(retrieval.model, retrieval.task, points=points, time_limit=1.0)


@pytest.mark.parametrize(
    "kw,match", [(dict(seed=-1), "seed"), (dict(seed=2**64), "seed"), (dict(seed=1.5), "seed")]
)
def test_upper_bracket_refuses_bad_seeds(retrieval, kw, match):
    with pytest.raises(ConfigError, match=match):
        bd.upper_bracket(retrieval.model, retrieval.task, time_limit=1.0, **kw)


def test_upper_bracket_refuses_non_tasks(retrieval):
    with pytest.raises(ConfigError, match="task"):
        bd.upper_bracket(retrieval.model, object(), time_limit=1.0)
    with pytest.raises(ConfigError, match="model"):
        bd.upper_bracket(object(), retrieval.task, time_limit=1.0)


def test_upper_bracket_leaves_the_global_rng_alone_and_is_seeded():
    c = build("softmax_retrieval", T=3, beta=50.0)
    kw = dict(max_splits=24, time_limit=1e6, tol=0.0)  # a split budget: no clock decides
    torch.manual_seed(1234)
    np.random.seed(1234)
    t_state, n_state = torch.get_rng_state(), np.random.get_state()
    r1 = bd.upper_bracket(c.model, c.task, **kw)
    assert torch.equal(torch.get_rng_state(), t_state)  # was: reseeded to seed=0
    assert all(np.array_equal(a, b) for a, b in zip(np.random.get_state(), n_state))
    torch.rand(17)  # another global state: the same result (the generator is local)
    r2 = bd.upper_bracket(c.model, c.task, **kw)
    assert (r1.upper, r1.lower, r1.boxes, r1.splits) == (r2.upper, r2.lower, r2.boxes, r2.splits)
    assert np.array_equal(r1.witness, r2.witness)
    # a witness given as one (T, d) input is accepted and keeps the bracket sound
    r3 = bd.upper_bracket(c.model, c.task, points=r1.witness, **kw)
    assert r3.lower >= r1.lower and r3.upper >= r3.lower


def test_mutant_global_seed_is_caught(monkeypatch):
    """A mutant that reseeds the global torch RNG again must turn the state check red."""
    c = build("softmax_retrieval", T=2, beta=10.0)
    real = bd.bracket.torch.Generator

    class Reseeding(real):  # type: ignore[misc, valid-type]
        def manual_seed(self, seed):
            torch.manual_seed(seed)
            return super().manual_seed(seed)

    monkeypatch.setattr(bd.bracket.torch, "Generator", Reseeding)
    torch.manual_seed(99)
    state = torch.get_rng_state()
    bd.upper_bracket(c.model, c.task, max_splits=2, time_limit=1e6)
    assert not torch.equal(torch.get_rng_state(), state)
