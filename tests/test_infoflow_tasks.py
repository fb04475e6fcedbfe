"""The InfoFlow experiment tasks: TRI, SPA and IND in :mod:`approxtheory.tasks`
(PMAX and KTH are ``PairwiseMax`` and ``KthLargest``), with targets checked by hand."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from approxtheory.errors import ConfigError
from approxtheory.tasks import (
    TASKS,
    Induction,
    KthLargest,
    PairwiseMax,
    SpecificPositions,
    TriangleCenter,
)


def test_registered():
    for name in ("triangle_center", "specific_positions", "induction", "kth_largest"):
        assert name in TASKS
    assert TASKS["pairwise_max"] is PairwiseMax


def test_triangle_center_by_hand():
    t = TriangleCenter(T=3)
    # 120-degree unit vectors: x1 + x2 + x3 = 0
    X = np.array([[[1.0, 0.0], [-0.5, np.sqrt(3) / 2], [-0.5, -np.sqrt(3) / 2]]])
    assert t.target(X)[0] == pytest.approx(0.0, abs=1e-12)
    # all equal to (1, 0): every triple sums to (3, 0)
    assert t.target(np.tile([1.0, 0.0], (1, 3, 1)))[0] == pytest.approx(3.0)
    # (1,0), (-0.5,0), (4,0): best triple 1 - 0.5 - 0.5 = 0 (repeats allowed)
    X = np.array([[[1.0, 0.0], [-0.5, 0.0], [4.0, 0.0]]])
    assert t.target(X)[0] == pytest.approx(0.0, abs=1e-12)
    # values 1, -0.3, 4: the sums of three are 3, 1.7, 0.4, -0.9, 6, ...: the smallest |.| is 0.4
    X = np.array([[[1.0, 0.0], [-0.3, 0.0], [4.0, 0.0]]])
    assert t.target(X)[0] == pytest.approx(0.4)


@pytest.mark.parametrize("T", [1, 2, 3, 5, 8])
def test_triangle_center_against_every_ordered_triple(T):
    """The target (which enumerates t1 <= t2 <= t3 only) equals the minimum over all T³ ordered
    triples, computed here independently with itertools and numpy, on random and structured
    inputs (the structured ones hold cancelling triples, where the minimum is near 0)."""
    import itertools

    t = TriangleCenter(T=T)
    rng = np.random.default_rng(T)
    X = np.concatenate([t.sample(16, rng), t.structured(rng)])
    triples = list(itertools.product(range(T), repeat=3))
    want = np.array([min(np.linalg.norm(x[a] + x[b] + x[c]) for a, b, c in triples) for x in X])
    np.testing.assert_allclose(t.target(X), want, rtol=1e-12, atol=1e-14)


def test_triangle_center_domain_and_structured():
    t = TriangleCenter(T=8)
    rng = np.random.default_rng(0)
    for X in (t.sample(64, rng), t.structured(rng)):
        n = np.linalg.norm(X, axis=-1)
        assert X.shape[1:] == (8, 2) and n.min() >= 0.2 - 1e-12 and n.max() <= 4 + 1e-12
    S = t.structured(rng)
    assert t.target(S).min() < 1e-5  # the cancelling triples are there
    Xt = torch.tensor(t.sample(4, rng), requires_grad=True)
    t.target(Xt).sum().backward()  # differentiable for the error search
    assert Xt.grad is not None


def test_specific_positions_by_hand():
    t = SpecificPositions()
    X = np.arange(20, dtype=float).reshape(1, 10, 2)
    assert t.target(X).tolist() == [[0 + 2 + 4, 1 + 3 + 5]]
    assert SpecificPositions(T=5, d=1, p=1).target(np.ones((2, 5, 1))).tolist() == [[1.0], [1.0]]
    with pytest.raises(ConfigError, match="p must be <= T"):
        SpecificPositions(T=2, p=3)


def _onehot(ids, d):
    return np.eye(d)[np.array(ids)][None]


def test_induction_by_hand():
    t = Induction(T=6, d=4)
    # last token 2 occurs at 0-based 1 and 3: the latest (3) wins, target x(4) = token 0
    X = _onehot([1, 2, 3, 2, 0, 2], 4)
    assert t.target(X)[0].tolist() == [1.0, 0.0, 0.0, 0.0]
    # only at 0-based 0: target x(1) = token 3
    assert t.target(_onehot([1, 3, 0, 0, 2, 1], 4))[0].tolist() == [0.0, 0.0, 0.0, 1.0]
    # the token right before the last does not count (it has no successor before T)
    assert t.target(_onehot([0, 0, 0, 0, 3, 3], 4))[0].tolist() == [0.0, 0.0, 0.0, 0.0]
    # no earlier occurrence: zero vector
    assert t.target(_onehot([1, 1, 1, 1, 1, 0], 4))[0].tolist() == [0.0] * 4


def test_induction_samples_always_have_an_answer():
    t = Induction(T=16, d=8)
    rng = np.random.default_rng(1)
    X = t.sample(256, rng)
    assert (X.sum(-1) == 1).all()
    assert (t.target(X).sum(-1) == 1).all()
    S = t.structured(rng)
    assert S.shape[1:] == (16, 8) and (t.target(S).sum(-1) == 0).any()
    assert (t.project(X + 0.1 * rng.standard_normal(X.shape) * 0.1) == X).all()
    with pytest.raises(ConfigError):
        Induction(T=2)


def test_kth_and_pmax_exist_for_the_experiments():
    assert KthLargest(T=4, k=2).target(np.array([[[0.1], [0.9], [0.5], [0.3]]]))[0] == 0.5
    p = PairwiseMax(T=4, d=2, D=2)
    assert p.describe()["D"] == 2
