"""The certified bracket on the papers' domains: one-hot tokens by exhaustive
enumeration, causal masks and per-token read-outs, the unit sphere by a box cover. Soundness on
small cells against exhaustive enumeration or dense sampling of the true function (Hypothesis
over random small models and domains), a planted unsound relaxation per domain that the same
soundness check must catch, and the bad-input contract (typed errors naming what is allowed)."""

import itertools
import math
import os

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from approxtheory import ConfigError
from approxtheory import bounds as bd
from approxtheory.bounds import bracket_reach, error_bounds, layer_bounds, upper_bracket
from approxtheory.bounds import finite as fin
from approxtheory.bounds.sphere import shrink_to_sphere
from approxtheory.constructions import build
from approxtheory.model import LayerSpec, ModelConfig, Transformer
from approxtheory.tasks import Induction, LagExtraction, PairwiseMax, TriangleCenter

torch.set_num_threads(1)
_K = int(os.environ.get("BOUNDS_EXAMPLES", "1"))


def _randomize(m, seed, scale=1.0):
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in m.parameters():
            p.copy_(scale * torch.randn(p.shape, generator=g, dtype=p.dtype))
    return m


# ----------------------------------------------------------------------------- one-hot
def _onehot_model(T, d, seed, scale):
    cfg = ModelConfig(
        d_in=d,
        width=6,
        seq_len=T,
        positions="onehot",
        attn_scale=1.0,
        cls_is_key=bool(seed % 2),
        layers=[LayerSpec(heads=2, head_dim=3, value_dim=2), LayerSpec(heads=1, head_dim=2)],
        d_out=d,
    )
    return _randomize(Transformer(cfg), seed, scale)


def _brute_onehot(model, task):
    """The exact supremum of the error over every one-hot sequence (itertools, independent of
    the enumeration under test)."""
    T, d = task.T, task.d
    X = np.eye(d)[np.array(list(itertools.product(range(d), repeat=T)))]
    X = torch.from_numpy(X)
    with torch.no_grad():
        e = (model(X) - task.target(X)).abs().flatten(1).amax(-1)
    assert torch.isfinite(e).all()
    return float(e.max())


def _assert_sound_exact(r, truth):
    """The enumeration's bracket: never below the exhaustive truth, and at most its round-off
    allowance above it."""
    assert r.upper is not None and math.isfinite(r.upper)
    assert r.upper >= truth, f"unsound: bracket {r.upper!r} < exhaustive max {truth!r}"
    assert r.upper <= truth * (1 + 1e-9) + 1e-9


@given(
    T=st.integers(3, 5),
    d=st.integers(2, 3),
    seed=st.integers(0, 10_000),
    scale=st.sampled_from([0.3, 1.0, 3.0]),
)
@settings(max_examples=12 * _K, deadline=None)
def test_onehot_enumeration_is_the_exhaustive_supremum(T, d, seed, scale):
    m = _onehot_model(T, d, seed, scale)
    task = Induction(T, d)
    r = upper_bracket(m, task)
    assert r.method == "enumeration" and r.converged and r.boxes == d**T
    _assert_sound_exact(r, _brute_onehot(m, task))
    assert r.lower <= r.upper and r.witness is not None


def test_planted_incomplete_enumeration_goes_red(monkeypatch):
    """A relaxation that skips part of the domain (the enumeration stops one input short, or
    visits token 0 only at position 0) is unsound: the same check catches it."""
    real = fin._onehot_batch
    caught = 0
    for seed in range(6):
        m = _onehot_model(3, 2, seed, 3.0)
        task = Induction(3, 2)
        truth = _brute_onehot(m, task)

        def short(start, n, T, d):
            X = real(start, n, T, d)
            return X[X[:, 0, 1] == 0]  # position 0 never holds token 1

        monkeypatch.setattr(fin, "_onehot_batch", short)
        r = upper_bracket(m, task)
        monkeypatch.setattr(fin, "_onehot_batch", real)
        try:
            _assert_sound_exact(r, truth)
        except AssertionError:
            caught += 1
    assert caught > 0


def test_onehot_above_the_budget_is_not_certified_and_states_its_frontier():
    c = build("if_induction", T=16, d=4, beta=400.0)
    r = upper_bracket(c.model, c.task, max_points=4096)
    assert r.upper is None and "budget" in r.stop
    assert "4^16" in r.reason and "T <= 6" in r.reason
    assert r.extra["frontier_T"] == 6
    cert = c.certify()
    assert cert["sup_error_upper"] is None and "budget" in cert["sup_error_upper_reason"]
    assert cert["bracket"]["frontier_T"] == fin.frontier_T(4, fin.MAX_POINTS)


def test_if_k3_cells_are_certified_by_enumeration():
    c = build("if_induction", T=4, d=4, beta=200.0)
    cert = c.certify()
    assert cert["bracket"]["method"] == "enumeration"
    assert cert["sup_error_upper"] <= c.claimed_bound and "certified" in cert
    assert "one-hot sequences" in cert["certified"]


def test_nonfinite_model_on_a_finite_domain_is_never_a_finite_bound():
    m = _onehot_model(3, 2, 0, 1.0)
    with torch.no_grad():
        m.readout_linear(0).weight[0, 0] = float("inf")
    r = upper_bracket(m, Induction(3, 2))
    assert r.upper == math.inf and r.unsound_input


# ----------------------------------------------------------------------------- causal masks
def _causal_model(T, seed, scale):
    cfg = ModelConfig(
        d_in=1,
        width=4,
        seq_len=T,
        positions="onehot",
        readout="tokens",
        causal=True,
        attn_scale=1.0,
        layers=[LayerSpec(heads=2, head_dim=2, value_dim=2)],
        d_out=1,
    )
    return _randomize(Transformer(cfg), seed, scale)


def _box_samples(lo, hi, rng, n=3000):
    T, d = lo.shape
    V = np.array(list(itertools.product(*[(lo.flat[i], hi.flat[i]) for i in range(T * d)])))
    R = lo + (hi - lo) * rng.random((n, T, d))
    return np.concatenate([V.reshape(-1, T, d), R])


def _per_token_err(model, task, X):
    X = torch.as_tensor(X, dtype=torch.float64)
    with torch.no_grad():
        out = model(X)[..., 0]
        y = task.target(X)
    e = (out - y).abs()
    return torch.where(torch.isnan(y), torch.zeros_like(e), e)


@given(T=st.integers(2, 4), seed=st.integers(0, 10_000), k=st.integers(0, 1))
@settings(max_examples=10 * _K, deadline=None)
def test_causal_bracket_is_never_below_dense_sampling(T, seed, k):
    m = _causal_model(T, seed, 1.0)
    task = LagExtraction(T, min(k, T - 1))
    r = upper_bracket(m, task, max_boxes=400, tol=0.02)
    assert r.upper is not None and math.isfinite(r.upper)
    rng = np.random.default_rng(seed)
    lo, hi = np.full((T, 1), task.lo), np.full((T, 1), task.hi)
    truth = float(_per_token_err(m, task, _box_samples(lo, hi, rng)).max())
    assert r.upper >= truth * (1 - 1e-12) - 1e-12


def _causal_containment(m, task, seed, n_boxes=3):
    """Per-output containment of model - target in error_bounds on random sub-boxes."""
    rng = np.random.default_rng(seed)
    T = task.T
    for _ in range(n_boxes):
        a = rng.uniform(task.lo, task.hi, (T, 1))
        b = rng.uniform(task.lo, task.hi, (T, 1))
        lo, hi = np.minimum(a, b), np.maximum(a, b)
        L, U = error_bounds(m, task, lo, hi)
        X = torch.from_numpy(_box_samples(lo, hi, rng, 500))
        with torch.no_grad():
            D = m(X)[..., 0] - task.target(X)
        D = torch.where(torch.isnan(D), torch.zeros_like(D), D)
        tol = 1e-12 * (1 + D.abs())
        if not ((D >= L - tol).all() and (D <= U + tol).all()):
            return False
    return True


@given(T=st.integers(2, 5), seed=st.integers(0, 10_000))
@settings(max_examples=10 * _K, deadline=None)
def test_causal_error_bounds_contain_model_minus_target(T, seed):
    m = _causal_model(T, seed, 2.0)
    assert _causal_containment(m, LagExtraction(T, 1), seed)
    # and every layer's state (the causal mask inside layer_bounds)
    lo, hi = np.full((T, 1), -1.0), np.full((T, 1), 1.0)
    states, (olo, ohi) = layer_bounds(m, lo, hi)
    X = torch.from_numpy(_box_samples(lo, hi, np.random.default_rng(seed), 300))
    with torch.no_grad():
        hs, out = m.hidden_states(X), m(X)
    for (slo, shi), h in zip(states, hs):
        assert (h >= slo - 1e-12 * (1 + h.abs())).all() and (h <= shi + 1e-12 * (1 + h.abs())).all()
    assert (out >= olo - 1e-12).all() and (out <= ohi + 1e-12).all()


def test_planted_mask_ignoring_relaxation_goes_red(monkeypatch):
    """A propagation that forgets the causal mask (every key visible) bounds another function:
    the containment check catches it on some seeded model."""
    monkeypatch.setattr(bd.forward, "_allowed_keys", lambda *a, **k: None)
    caught = sum(
        not _causal_containment(_causal_model(4, s, 2.0), LagExtraction(4, 1), s) for s in range(6)
    )
    assert caught > 0


def test_truncation_bracket_is_the_exact_output_change():
    """TO-C1: position-only logits make the root box exact: the bracket equals hi·Σ|Δα| of
    the worst row (computed from the two models' attention rows)."""
    c = build("svd_truncation", T=16, r=4)
    r = upper_bracket(c.model, c.task, max_boxes=32)
    X = torch.zeros(1, 16, 1, dtype=torch.float64)
    with torch.no_grad():
        _, a1 = c.task.reference(X, return_attention=True)
        _, a2 = c.model(X, return_attention=True)
    dA = (a2[0] - a1[0])[0, 0].numpy()
    exact = c.task.base.hi * np.abs(dA).sum(-1).max()
    assert exact <= r.upper <= exact * (1 + 1e-9) + 1e-12
    cert = build("lag_head", T=16).certify()
    assert cert["sup_error_upper"] is not None and math.isfinite(cert["sup_error_upper"])


# ----------------------------------------------------------------------------- unit sphere
@given(
    T=st.integers(1, 3),
    d=st.integers(1, 4),
    seed=st.integers(0, 10_000),
    width=st.floats(0.05, 1.0),
)
@settings(max_examples=30 * _K, deadline=None)
def test_sphere_shrink_keeps_every_sphere_point_of_the_box(T, d, seed, width):
    rng = np.random.default_rng(seed)
    c = rng.uniform(-1, 1, (T, d))
    lo = torch.from_numpy(np.clip(c - width * rng.random((T, d)), -1, 1))[None]
    hi = torch.from_numpy(np.clip(c + width * rng.random((T, d)), -1, 1))[None]
    P = rng.standard_normal((20000, T, d))
    P /= np.linalg.norm(P, axis=-1, keepdims=True)
    inside = ((P >= lo[0].numpy()) & (P <= hi[0].numpy())).reshape(len(P), -1).all(-1)
    Ls, Hs, feas = shrink_to_sphere(lo.clone(), hi.clone())
    if inside.any():
        assert bool(feas[0])
        Q = P[inside]
        assert (Q >= Ls[0].numpy()).all() and (Q <= Hs[0].numpy()).all()
    assert (Ls >= lo).all() and (Hs <= hi).all()


def test_planted_overshrinking_goes_red(monkeypatch):
    """A cover that cuts the boxes 1 % too far loses sphere points: the same property fails."""
    import approxtheory.bounds.sphere as sph

    real = sph.shrink_to_sphere

    def cut(lo, hi, rounds=2):
        L, H, f = real(lo, hi, rounds)
        c, w = 0.5 * (L + H), 0.5 * (H - L)
        return c - 0.99 * w, c + 0.99 * w, f

    rng = np.random.default_rng(0)
    P = rng.standard_normal((20000, 2, 2))
    P /= np.linalg.norm(P, axis=-1, keepdims=True)
    lo, hi = torch.full((1, 2, 2), -1.0, dtype=torch.float64), torch.ones(1, 2, 2)
    L, H, _ = cut(lo.clone(), hi.to(torch.float64).clone())
    assert not ((P >= L[0].numpy()) & (P <= H[0].numpy())).all()


def _pairwise_model(seed):
    c = build("if_pairwise_max", T=2, d=2, beta=10.0, seed=seed % 5)
    with torch.no_grad():  # perturb the construction: a random model near it
        g = torch.Generator().manual_seed(seed)
        for p in c.model.parameters():
            p.add_(0.05 * torch.randn(p.shape, generator=g, dtype=p.dtype))
    return c


@given(seed=st.integers(0, 10_000))
@settings(max_examples=4 * _K, deadline=None)
def test_sphere_bracket_is_never_below_dense_sampling(seed):
    c = _pairwise_model(seed)
    r = upper_bracket(c.model, c.task, max_boxes=200)
    assert r.method and r.upper is not None and math.isfinite(r.upper)
    P = c.task.sample(20000, np.random.default_rng(seed))
    X = torch.from_numpy(P)
    with torch.no_grad():
        e = (c.model(X)[:, 0] - c.task.target(X)).abs()
    assert r.upper >= float(e.max())
    # the lower side evaluates points of the domain only (unit-norm witness)
    assert np.allclose(np.linalg.norm(r.witness, axis=-1), 1.0)


def test_pairwise_target_form_contains_the_target_on_sphere_boxes():
    task = PairwiseMax(3, d=2, D=2, seed=1)
    rng = np.random.default_rng(1)
    from approxtheory.bounds.forward import _input_af
    from approxtheory.bounds.targets import _target_af

    for _ in range(5):
        a, b = rng.uniform(-1, 1, (2, 3, 2))
        lo, hi = torch.from_numpy(np.minimum(a, b))[None], torch.from_numpy(np.maximum(a, b))[None]
        yl, yu = _target_af(task, _input_af(lo, hi)).bounds()
        X = torch.from_numpy(_box_samples(lo[0].numpy(), hi[0].numpy(), rng, 2000))
        y = task.target(X)
        assert (y >= yl[0, 0] - 1e-12).all() and (y <= yu[0, 0] + 1e-12).all()


# ----------------------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    "kw,match",
    [
        (dict(max_points=0), "max_points"),
        (dict(max_points=-5), "max_points"),
        (dict(max_boxes=0), "max_boxes"),
        (dict(lo=0.9, hi=0.1), "lo must be <= hi"),
        (dict(lo=float("nan")), "finite|NaN"),
        (dict(hi=float("inf")), "finite|inside"),
    ],
)
def test_bad_budgets_and_ends_raise_typed_errors(kw, match):
    m = _onehot_model(3, 2, 0, 1.0)
    with pytest.raises(ConfigError, match=match):
        upper_bracket(m, Induction(3, 2), **kw)


def test_unsupported_domain_raises_naming_the_supported_ones():
    task = TriangleCenter(3)
    m = Transformer(ModelConfig(d_in=2, width=2, layers=[LayerSpec(heads=1, head_dim=2)], d_out=1))
    with pytest.raises(ConfigError, match="annulus") as e:
        upper_bracket(m, task)
    for name in bd.DOMAINS:
        assert name in str(e.value)
    route, why = bracket_reach(m, task)
    assert route is None and "annulus" in why
