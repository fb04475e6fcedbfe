"""Task targets against brute force, domains and structured inputs."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from approxtheory import ConfigError
from approxtheory.tasks import (
    GeneralizedRetrieval,
    KthLargest,
    LagExtraction,
    MaxPlusMin,
    PairwiseMax,
    ScalarMax,
    SyntheticMaxSum,
)


@given(T=st.integers(1, 12), seed=st.integers(0, 1000))
def test_targets_match_brute_force(T, seed):
    rng = np.random.default_rng(seed)
    X = rng.uniform(0, 1, (3, T, 1))
    assert np.allclose(MaxPlusMin(T).target(X), X.max(1)[:, 0] + X.min(1)[:, 0])
    assert np.allclose(ScalarMax(T).target(X), X.max(1)[:, 0])
    if T >= 2:
        second = np.sort(X[..., 0], axis=1)[:, -2]
        assert np.allclose(KthLargest(T, 2).target(X), second)
    syn = SyntheticMaxSum(T, d=3, D=2, seed=seed)
    Y = rng.uniform(-1, 1, (3, T, 3))
    ref = sum((Y @ a).max(1) for a in syn.a)
    assert np.allclose(syn.target(Y), ref)
    pm = PairwiseMax(T, d=3, D=2, seed=seed)
    Z = pm.sample(2, rng)
    ref = [
        sum(max(Z[b, s] @ A @ Z[b, t] for s in range(T) for t in range(T)) for A in pm.A)
        for b in range(2)
    ]
    assert np.allclose(pm.target(Z), ref)


@given(T=st.integers(1, 12), seed=st.integers(0, 1000), data=st.data())
def test_kth_largest_and_lag_targets_by_brute_force(T, seed, data):
    k = data.draw(st.integers(1, T), label="k")  # drawn in range, never filtered
    lag = data.draw(st.integers(0, T - 1), label="lag")
    rng = np.random.default_rng(seed)
    X = rng.uniform(0, 1, (4, T, 1))
    kth = [sorted(x[:, 0].tolist(), reverse=True)[k - 1] for x in X]
    assert np.array_equal(KthLargest(T, k).target(X), kth)
    sq = KthLargest(T, k, f=lambda u: u**2, f_name="square").target(X)
    assert np.allclose(sq, np.square(kth), rtol=1e-15, atol=0)
    y = LagExtraction(T, lag).target(X)
    for t in range(T):
        if t < lag:
            assert np.isnan(y[:, t]).all()
        else:
            assert np.array_equal(y[:, t], X[:, t - lag, 0])


def test_generalized_retrieval_respects_sets():
    T = 8
    task = GeneralizedRetrieval(T, 1, affine=([[1.0]], [0.0]), sets=[[0, 1, 2]], mode="min")
    X = np.linspace(0.9, 0.1, T).reshape(1, T, 1)
    assert np.isclose(task.target(X)[0], X[0, 2, 0])
    # two features, sets, max mode and an outer affine map, by hand:
    # f_1 = 2x - 1 over {0, 1, 2, 3} -> max 2·0.9 - 1 = 0.8; f_2 = 1 - x over {6, 7} -> max 0.8
    task = GeneralizedRetrieval(
        T,
        1,
        affine=([[2.0], [-1.0]], [-1.0, 1.0]),
        sets=[[0, 1, 2, 3], [6, 7]],
        mode="max",
        outer_affine=([3.0, -0.5], 0.25),
    )
    X = np.array([0.2, 0.9, 0.1, 0.5, 0.0, 0.05, 0.6, 0.2]).reshape(1, T, 1)
    assert task.target(X)[0] == pytest.approx(3 * 0.8 - 0.5 * 0.8 + 0.25, abs=1e-15)
    # without sets every position counts: f_2's max is then 1 - 0 = 1 (position 4)
    task_all = GeneralizedRetrieval(
        T, 1, affine=([[2.0], [-1.0]], [-1.0, 1.0]), mode="max", outer_affine=([3.0, -0.5], 0.25)
    )
    assert task_all.target(X)[0] == pytest.approx(3 * 0.8 - 0.5 * 1.0 + 0.25, abs=1e-15)


def test_set_too_small_and_bad_shapes_are_rejected():
    with pytest.raises(ConfigError, match=r"\|S_1\| must be >= T/4"):
        GeneralizedRetrieval(8, 1, affine=([[1.0]], [0.0]), sets=[[0]])
    with pytest.raises(ConfigError, match=r"expects inputs of shape \(batch, 4, 1\)"):
        ScalarMax(4).target(np.zeros((2, 5, 1)))
    with pytest.raises(ConfigError, match="lag k must be < T"):
        LagExtraction(4, 4)


@pytest.mark.parametrize(
    "task",
    [MaxPlusMin(6), SyntheticMaxSum(5), PairwiseMax(5), KthLargest(5), LagExtraction(8, 2)],
    ids=lambda t: t.name,
)
def test_structured_inputs_lie_in_the_domain(task):
    S = task.structured(np.random.default_rng(0))
    assert S.shape[1:] == (task.T, task.d) and len(S) > 10
    if task.domain == "sphere":
        assert np.allclose(np.linalg.norm(S, axis=-1), 1.0)
    else:
        assert S.min() >= task.lo - 1e-12 and S.max() <= task.hi + 1e-12
    # structured inputs include all-equal blocks (box) or repeated basis tokens (sphere), and
    # near-ties: two tokens within 1e-3 of each other but not equal
    if task.domain == "box":
        assert any(np.ptp(x) == 0 for x in S)
    else:
        assert any(np.allclose(x, x[0]) for x in S)
    gaps = [np.abs(x[0] - x[1]).max() for x in S]
    assert any(0 < g <= 1e-3 * (task.hi - task.lo) for g in gaps)
