"""Certified upper bracket of the sup error (approxtheory.bounds): soundness against brute force
and random points, per-layer containment on random models, tightness on the constructions, a
mutant that the soundness checks must catch, unsupported configurations and argument checks."""

import itertools
import os

import numpy as np
import pytest
import torch
from _helpers import perturb as _perturb
from hypothesis import given, settings
from hypothesis import strategies as st

from approxtheory import ConfigError
from approxtheory import bounds as bd
from approxtheory.bounds import (
    error_bounds,
    layer_bounds,
    simplex_lp_max,
    softmax_bounds,
    upper_bracket,
)
from approxtheory.constructions import build
from approxtheory.model import LayerSpec, ModelConfig, Transformer
from approxtheory.tasks import GeneralizedRetrieval, MaxPlusMin, ScalarMax

torch.set_num_threads(1)
# BOUNDS_EXAMPLES=k multiplies every Hypothesis example count (a thorough soundness run)
_K = int(os.environ.get("BOUNDS_EXAMPLES", "1"))


# ----------------------------------------------------------------------------- helpers
def _errors(model, task, X):
    X = torch.as_tensor(X, dtype=torch.float64)
    with torch.no_grad():
        out = model(X)
        y = task.target(X)
    if out.dim() == 2 and y.dim() == 1:
        out = out[:, 0]
    return (out - y).reshape(len(X), -1)  # signed, (n, m)


def _grid_and_random(task, n_grid, n_rand, rng, lo=None, hi=None):
    T, d = task.T, task.d
    lo = np.full((T, d), task.lo) if lo is None else lo
    hi = np.full((T, d), task.hi) if hi is None else hi
    axes = [np.linspace(lo.flat[i], hi.flat[i], n_grid) for i in range(T * d)]
    G = np.array(list(itertools.product(*axes))).reshape(-1, T, d)
    R = lo + (hi - lo) * rng.random((n_rand, T, d))
    return np.concatenate([G, R])


def _max_error(model, task, rng, n_grid=21, n_rand=4000):
    return float(_errors(model, task, _grid_and_random(task, n_grid, n_rand, rng)).abs().max())


def soundness_violation(model, task, upper, rng, n_grid=21, n_rand=4000):
    """max evaluated error minus the certified upper (> 0: the bound is violated)."""
    return _max_error(model, task, rng, n_grid, n_rand) - upper


def _random_box(rng, T, d, lo, hi):
    a = lo + (hi - lo) * rng.random((T, d))
    b = lo + (hi - lo) * rng.random((T, d))
    w = rng.random() ** 2  # sometimes tiny boxes
    return np.minimum(a, b), np.minimum(a, b) + w * np.abs(a - b)


# ----------------------------------------------------------------------------- building blocks
@given(seed=st.integers(0, 10**6), J=st.integers(1, 6), big=st.sampled_from([1.0, 30.0, 1e4]))
@settings(max_examples=40 * _K, deadline=None)
def test_softmax_bounds_are_exact_and_contain(seed, J, big):
    rng = np.random.default_rng(seed)
    a, b = rng.normal(size=J) * big, rng.normal(size=J) * big
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    pl, pu = softmax_bounds(torch.tensor(lo), torch.tensor(hi))
    S = lo + (hi - lo) * rng.random((500, J))
    P = torch.softmax(torch.tensor(S), -1)
    assert (P >= pl - 1e-15).all() and (P <= pu + 1e-15).all()
    tol = 1e-13 * (1 + np.abs(np.concatenate([lo, hi])).max())  # the documented widening
    for j in range(J):  # attained at the vertex: own logit low (high), others high (low)
        v = hi.copy()
        v[j] = lo[j]
        assert abs(float(torch.softmax(torch.tensor(v), -1)[j]) - float(pl[j])) <= tol
        v = lo.copy()
        v[j] = hi[j]
        assert abs(float(torch.softmax(torch.tensor(v), -1)[j]) - float(pu[j])) <= tol


@given(seed=st.integers(0, 10**6), J=st.integers(1, 7))
@settings(max_examples=40 * _K, deadline=None)
def test_simplex_lp_greedy_is_the_lp_optimum(seed, J):
    rng = np.random.default_rng(seed)
    p0 = rng.dirichlet(np.ones(J))
    pl = np.clip(p0 - rng.random(J) * 0.3, 0, 1)
    pu = np.clip(p0 + rng.random(J) * 0.3, 0, 1)
    a = rng.normal(size=J)
    v = float(simplex_lp_max(torch.tensor(a), torch.tensor(pl), torch.tensor(pu)))
    # every feasible p (random mixtures of vertices) stays below; a vertex attains it
    best = -np.inf
    for order in itertools.permutations(range(J)) if J <= 5 else [np.argsort(-a)]:
        p = pl.copy()
        rem = 1 - p.sum()
        for j in order:
            add = min(rem, pu[j] - pl[j])
            p[j] += add
            rem -= add
        best = max(best, float(p @ a))
    assert v >= best - 1e-12
    assert v <= best + 1e-9


def _ratio_brute(dL, dU, al, gL, eL, e0, phis, n=40):
    """min over a grid of F = (e0 + e^φ Σ w_j e_j)/(1 + e^φ Σ w_j), e_j = max(eL, al δ + gL)."""
    grids = [np.linspace(dL[j], dU[j], n) for j in range(len(dL))]
    D = np.array(list(itertools.product(*grids)))  # (n^J, J)
    W = np.exp(D)
    E = np.maximum(eL, al * D + gL)
    best = np.inf
    for ph in phis:
        F = (e0 + np.exp(ph) * (W * E).sum(1)) / (1 + np.exp(ph) * W.sum(1))
        best = min(best, F.min())
    return best


@given(seed=st.integers(0, 10**6), shared=st.booleans())
@settings(max_examples=25 * _K, deadline=None)
def test_ratio_lower_bound_is_sound_and_tight(seed, shared):
    rng = np.random.default_rng(seed)
    J = 2
    dL = rng.normal(size=J) * 3
    dU = dL + rng.random(J) * 6
    al = rng.normal(size=J)
    gL = rng.normal(size=J)
    eL = np.where(rng.random(J) < 0.5, -1e9, rng.normal(size=J))
    e0 = float(rng.normal())
    phis = np.sort(rng.normal(size=2) * 2) if shared else np.zeros(2)
    t = lambda x: torch.tensor(x, dtype=torch.float64)
    lam = float(
        bd._ratio_lower(
            t(dL),
            t(dU),
            t(al),
            t(gL),
            t(eL),
            t(e0),
            torch.ones(J, dtype=torch.bool),
            phi=(t(phis[0]), t(phis[1])),
        )
    )
    brute = _ratio_brute(dL, dU, al, gL, eL, e0, np.linspace(phis[0], phis[1], 9))
    assert lam <= brute + 1e-12
    assert lam >= brute - 0.05 * (1 + abs(brute))  # the grid is coarse; the bound is exact


# ----------------------------------------------------------------------------- random models
@st.composite
def random_models(draw):
    seed = draw(st.integers(0, 2**31 - 1))
    d = draw(st.integers(1, 2))
    T = draw(st.integers(1, 3))
    n_layers = draw(st.integers(1, 2))
    specs = []
    for _ in range(n_layers):
        heads = draw(st.integers(1, 2))
        specs.append(
            LayerSpec(
                heads=heads,
                head_dim=draw(st.integers(1, 2)),
                kv_groups=draw(st.sampled_from([1, heads])),
                ffn_hidden=draw(st.sampled_from([(), (3,)])),
            )
        )
    cfg = ModelConfig(
        d_in=d,
        width=draw(st.integers(2, 4)),
        layers=specs,
        d_out=draw(st.integers(1, 2)),
        seq_len=T,
        positions=draw(st.sampled_from(["none", "onehot", "learned"])),
        embed_hidden=draw(st.sampled_from([(), (3,)])),
        head_hidden=draw(st.sampled_from([(), (3,)])),
        cls_is_key=draw(st.booleans()),
        bias=draw(st.booleans()),
        residual=draw(st.booleans()),
        ffn_kind=draw(st.sampled_from(["relu", "bilinear"])),
        attn_scale=1.0,
    )
    m = Transformer(cfg)
    g = torch.Generator().manual_seed(seed)
    scale = draw(st.sampled_from([0.5, 1.5, 4.0]))
    with torch.no_grad():
        for p in m.parameters():
            p.copy_(scale * torch.randn(p.shape, generator=g, dtype=p.dtype))
    return m, T, d, seed


def _check_layer_containment(m, T, d, seed, n_boxes=2, n_pts=64):
    rng = np.random.default_rng(seed)
    for _ in range(n_boxes):
        lo, hi = _random_box(rng, T, d, -1.0, 1.0)
        states, (olo, ohi) = layer_bounds(m, lo, hi)
        X = torch.tensor(lo + (hi - lo) * rng.random((n_pts, T, d)))
        X = torch.cat([X, torch.tensor(lo)[None], torch.tensor(hi)[None]])
        with torch.no_grad():
            hs = m.hidden_states(X)
            out = m(X)
        for (slo, shi), h in zip(states, hs):
            tol = 1e-12 * (1 + h.abs())
            if not ((h >= slo - tol).all() and (h <= shi + tol).all()):
                return False
        tol = 1e-12 * (1 + out.abs())
        if not ((out >= olo - tol).all() and (out <= ohi + tol).all()):
            return False
    return True


@given(random_models())
@settings(max_examples=10 * _K, deadline=None)
def test_layer_bounds_contain_every_layer_on_random_models(mt):
    m, T, d, seed = mt
    assert _check_layer_containment(m, T, d, seed)
    if d == 1 and m.cfg.d_out == 1:  # and the error bound against a retrieval target
        task = MaxPlusMin(T)
        rng = np.random.default_rng(seed)
        lo, hi = _random_box(rng, T, d, 0.0, 1.0)
        L, U = error_bounds(m, task, lo, hi)
        E = _errors(m, task, lo + (hi - lo) * rng.random((100, T, d)))
        tol = 1e-12 * (1 + E.abs())
        assert (E >= L - tol).all() and (E <= U + tol).all()


@st.composite
def perturbed_constructions(draw):
    kind = draw(st.sampled_from(["softmax_retrieval", "hc_k1", "hc_k1_synthetic"]))
    beta = draw(st.sampled_from([1.0, 5.0, 30.0, 300.0]))
    if kind == "softmax_retrieval":
        c = build(kind, T=draw(st.integers(1, 3)), beta=max(beta, 1.0))
    elif kind == "hc_k1":
        c = build(
            kind,
            T=4,
            beta=beta,
            gate=draw(st.sampled_from([-2.0, -1.0, 0.5])),
            sets=draw(st.sampled_from(["split", "all"])),
        )
    else:
        c = build(
            kind,
            T=draw(st.integers(1, 3)),
            d=draw(st.integers(1, 2)),
            D=draw(st.integers(1, 2)),
            beta=beta,
        )
    scale = draw(st.sampled_from([0.0, 1e-3, 0.05, 0.5]))
    return (
        _perturb(c.model, scale, draw(st.integers(0, 10**6))),
        c.task,
        draw(st.integers(0, 10**6)),
    )


@given(perturbed_constructions())
@settings(max_examples=10 * _K, deadline=None)
def test_error_bounds_contain_the_error_on_random_sub_boxes(case):
    model, task, seed = case
    rng = np.random.default_rng(seed)
    T, d = task.T, task.d
    for _ in range(2):
        lo, hi = _random_box(rng, T, d, task.lo, task.hi)
        L, U = error_bounds(model, task, lo, hi)
        X = lo + (hi - lo) * rng.random((200, T, d))
        E = _errors(model, task, np.concatenate([X, lo[None], hi[None]]))
        tol = 1e-12 * (1 + E.abs())
        assert (E >= L - tol).all() and (E <= U + tol).all()


# ----------------------------------------------------------------------------- upper bracket
TINY_CASES = [
    ("softmax_retrieval", dict(T=2, beta=20.0)),
    ("softmax_retrieval", dict(T=3, beta=50.0)),
    ("hc_k1_synthetic", dict(T=3, d=1, D=1, beta=30.0)),
    ("hc_k1_synthetic", dict(T=2, d=1, D=2, beta=10.0)),
]


@pytest.mark.parametrize("method", ["auto", "generic"])
@pytest.mark.parametrize("name,knobs", TINY_CASES)
def test_upper_bracket_is_sound_against_brute_force(name, knobs, method):
    c = build(name, **knobs)
    r = upper_bracket(c.model, c.task, max_boxes=2000, method=method)
    assert r.upper is not None, r.reason
    rng = np.random.default_rng(0)
    assert soundness_violation(c.model, c.task, r.upper, rng) <= 0
    assert r.lower <= r.upper


def test_upper_bracket_sound_for_gated_heads_and_perturbed_weights():
    """hc_k1 (two heads, position gates) with perturbed weights, on a grid of the 4-dim box."""
    c = build("hc_k1", T=4, beta=20.0, gate=-1.0)
    _perturb(c.model, 0.02, 1)
    for method in ("auto", "generic"):
        r = upper_bracket(c.model, c.task, max_boxes=200, method=method)
        assert r.upper is not None
        rng = np.random.default_rng(1)
        assert soundness_violation(c.model, c.task, r.upper, rng, n_grid=9, n_rand=4000) <= 0


TIGHT_CASES = [
    ("softmax_retrieval", dict(T=4, beta=100.0)),
    ("softmax_retrieval", dict(T=16, beta=100.0)),
    ("softmax_retrieval", dict(T=16, beta=1e4)),
    ("hc_k1", dict(T=8, beta=100.0, gate=-2.0)),
    ("hc_k1", dict(T=8, beta=100.0, gate=-1.0)),
    ("hc_k1_synthetic", dict(T=4, d=2, D=2, beta=100.0)),
]


@pytest.mark.parametrize("name,knobs", TIGHT_CASES)
def test_upper_bracket_within_twice_an_attained_error(name, knobs):
    c = build(name, **knobs)
    r = upper_bracket(c.model, c.task, time_limit=1.0)
    assert r.upper is not None, r.reason
    # lower is an error attained at r.witness, so upper <= 2 lower gives upper <= 2 sup
    w = torch.tensor(r.witness)[None]
    assert float(_errors(c.model, c.task, w).abs().max()) == pytest.approx(r.lower, rel=1e-9)
    assert r.lower <= r.upper <= 2 * r.lower


def test_upper_bracket_matches_sup_error_on_softmax_retrieval():
    from approxtheory.measure import sup_error

    c = build("softmax_retrieval", T=4, beta=100.0)
    found = sup_error(c.model, c.task, budget=512, seed=0).value
    r = upper_bracket(c.model, c.task, time_limit=2.0)
    assert found <= r.upper <= 1.01 * found
    assert r.converged


def test_exact_construction_gets_a_round_off_sized_bound():
    c = build("hc_k2", T=2, d=1)
    r = upper_bracket(c.model, c.task, time_limit=2.0)
    assert r.upper is not None and r.upper < 1e-10


def test_generic_path_is_sound_on_a_relu_read_out():
    """hc_l9 (ReLU max network after a memorizing head): the affine path, brute-forced."""
    c = build("hc_l9", T=2, eps=0.25)
    r = upper_bracket(c.model, c.task, time_limit=2.0, max_splits=100, method="generic")
    assert r.upper is not None and r.method == "affine"
    assert soundness_violation(c.model, c.task, r.upper, np.random.default_rng(2)) <= 0


# ----------------------------------------------------------------------------- CROWN (generic path)
def _random_mlp(seed, k, widths, scale):
    g = torch.Generator().manual_seed(seed)
    mods, a = [], k
    for b in widths:
        lin = torch.nn.Linear(a, b).double()
        with torch.no_grad():
            lin.weight.copy_(scale * torch.randn(b, a, generator=g, dtype=torch.float64))
            lin.bias.copy_(torch.randn(b, generator=g, dtype=torch.float64))
        mods += [lin, torch.nn.ReLU()]
        a = b
    return torch.nn.Sequential(*mods[:-1])


def _crown_contains(mlp, lo, hi, rng, n=3000):
    """CROWN's linear bounds (and its zonotope) contain the MLP's outputs at sampled points
    of the boxes lo <= x <= hi (B, k), corners included."""
    B, k = lo.shape
    x0 = bd._input_af(lo[:, None, :], hi[:, None, :]).reshape(B, k)
    U, L, z = bd._crown_mlp(bd._mlp_ops(mlp), x0)
    e = torch.tensor(rng.random((B, n, k)))
    corners = torch.tensor(list(itertools.product([0.0, 1.0], repeat=k)), dtype=torch.float64)
    e[:, : len(corners)] = corners
    X = lo[:, None] + (hi - lo)[:, None] * e
    eps = 2 * e - 1
    with torch.no_grad():
        Y = mlp(X)
    tol = 1e-11 * (1 + Y.abs())
    Uv = U.c[:, None, :] + torch.einsum("bmn,bpn->bpm", U.A, eps)
    Lv = L.c[:, None, :] + torch.einsum("bmn,bpn->bpm", L.A, eps)
    zl, zh = z.bounds()
    return bool(
        (Y <= Uv + tol).all()
        and (Y >= Lv - tol).all()
        and (Y <= zh[:, None] + tol).all()
        and (Y >= zl[:, None] - tol).all()
    )


@given(
    seed=st.integers(0, 10**6),
    k=st.integers(1, 4),
    widths=st.lists(st.integers(1, 7), min_size=1, max_size=3),
    scale=st.sampled_from([0.3, 1.0, 3.0]),
)
@settings(max_examples=40 * _K, deadline=None)
def test_crown_bounds_contain_random_relu_mlps(seed, k, widths, scale):
    rng = np.random.default_rng(seed)
    mlp = _random_mlp(seed, k, widths + [2], scale)
    a, b = rng.normal(size=(2, 3, k))
    lo = torch.tensor(np.minimum(a, b))
    hi = lo + torch.tensor(np.abs(a - b) * rng.random((3, 1)) ** 2)
    assert _crown_contains(mlp, lo, hi, rng)


def test_crown_is_tighter_than_the_zonotope_on_a_deep_stack():
    mlp = _random_mlp(3, 4, [16, 16, 16, 1], 1.0)
    lo, hi = -torch.ones(1, 4, dtype=torch.float64), torch.ones(1, 4, dtype=torch.float64)
    x0 = bd._input_af(lo[:, None, :], hi[:, None, :]).reshape(1, 4)
    U, L, z = bd._crown_mlp(bd._mlp_ops(mlp), x0)
    zl, zh = z.bounds()
    assert float(U.bounds()[1] - L.bounds()[0]) < float(zh - zl)


@given(
    seed=st.integers(0, 10**6),
    C=st.integers(1, 4),
    d=st.integers(1, 2),
    opt=st.sampled_from(["max", "min"]),
)
@settings(max_examples=30 * _K, deadline=None)
def test_minus_opt_is_sound_and_the_lp_is_tight(seed, C, d, opt):
    """F(ε) - opt_t g_t(ε) over the box: the bounds contain it at sampled ε and, for
    single-token features (separable), the LP side is within grid resolution of the sup."""
    rng = np.random.default_rng(seed)
    n = C * d
    t = lambda x: torch.tensor(x, dtype=torch.float64)
    F = bd._AF(t(rng.normal(size=1)), t(rng.normal(size=(1, n))), t(np.zeros(1)))
    A = np.zeros((1, C, n))
    for c in range(C):
        A[0, c, c * d : (c + 1) * d] = rng.normal(size=d)
    g = bd._AF(t(rng.normal(size=(1, C))), t(A), t(np.zeros((1, C))))
    lo = float(bd._minus_opt(F, g, opt, "lower")[0])
    hi = float(bd._minus_opt(F, g, opt, "upper")[0])
    axes = [np.linspace(-1, 1, 9 if n <= 4 else 5)] * n
    E = np.array(list(itertools.product(*axes)))
    E = np.concatenate([E, rng.uniform(-1, 1, (2000, n))])
    Fv = F.c.numpy()[0] + E @ F.A.numpy()[0]
    gv = g.c.numpy()[0] + E @ A[0].T
    v = Fv - (gv.max(-1) if opt == "max" else gv.min(-1))
    tol = 1e-12 * (1 + np.abs(v))
    assert (v <= hi + tol).all() and (v >= lo - tol).all()
    scale = 1 + np.abs(A).sum() + np.abs(F.A.numpy()).sum()
    tight = hi if opt == "max" else lo  # the LP side
    brute = v.max() if opt == "max" else v.min()
    assert abs(tight - brute) <= 0.3 * scale / 8


def _relu_head_model(T, seed, hidden=(5, 4), scale=1.0):
    cfg = ModelConfig(
        d_in=1,
        width=3,
        layers=[LayerSpec(heads=1, head_dim=2)],
        d_out=1,
        seq_len=T,
        head_hidden=hidden,
        attn_scale=1.0,
    )
    m = Transformer(cfg)
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in m.parameters():
            p.copy_(scale * torch.randn(p.shape, generator=g, dtype=p.dtype))
    return m


@given(
    seed=st.integers(0, 10**6),
    T=st.integers(1, 3),
    mode=st.sampled_from(["max", "min"]),
    sign=st.sampled_from([1.0, -2.0]),
    hidden=st.sampled_from([(5,), (5, 4)]),
)
@settings(max_examples=15 * _K, deadline=None)
def test_generic_error_bounds_with_a_relu_read_out_are_sound(seed, T, mode, sign, hidden):
    """ReLU read-out after attention, one-term retrieval target (max or min, either sign):
    CROWN + the exact LP/enumeration against the target contain the error."""
    m = _relu_head_model(T, seed, hidden)
    task = GeneralizedRetrieval(
        T, 1, sets=[list(range(T))], affine=([[1.5]], [0.1]), outer_affine=([sign], 0.3), mode=mode
    )
    rng = np.random.default_rng(seed)
    for _ in range(2):
        lo, hi = _random_box(rng, T, 1, 0.0, 1.0)
        L, U = error_bounds(m, task, lo, hi)
        X = lo + (hi - lo) * rng.random((400, T, 1))
        E = _errors(m, task, np.concatenate([X, lo[None], hi[None]]))
        tol = 1e-12 * (1 + E.abs())
        assert (E >= L - tol).all() and (E <= U + tol).all()


def test_hc_l9_upper_bracket_within_twice_the_known_worst_case():
    """hc_l9 (memorizing head + ReLU max network): the CROWN path brackets the closed-form
    sup error (1 - 1/T)/n_g within 2x."""
    from approxtheory.bench.search import known_hc_l9

    for T, eps, tl in ((4, 0.25, 6.0), (3, 0.1, 8.0)):
        c = build("hc_l9", T=T, eps=eps)
        known = known_hc_l9(T, eps)
        ng = int(np.ceil(1 / eps - 1e-12))
        X = np.full((1, T, 1), (ng - 1) / ng + 1 / (T * ng))  # a worst case: all equal
        r = upper_bracket(c.model, c.task, time_limit=tl, tol=0.9, points=X, method="generic")
        assert r.upper is not None and r.method == "affine"
        assert known * (1 - 1e-9) <= r.upper <= 2 * known, (T, eps, r.upper, known)


def test_mutant_crown_without_the_chord_offset_is_caught(monkeypatch):
    """A ReLU relaxation whose upper line drops its offset (the chord through the origin)
    must make the CROWN containment check fail."""
    rng = np.random.default_rng(0)
    cases = [(_random_mlp(s, 2, [6, 6, 1], 1.5), s) for s in range(4)]
    lo, hi = -torch.ones(2, 2, dtype=torch.float64), torch.ones(2, 2, dtype=torch.float64)
    assert all(_crown_contains(m, lo, hi, rng) for m, _ in cases)
    real = bd._relu_relax

    def no_offset(lo_, hi_, alpha=None):
        s, t, a = real(lo_, hi_, alpha)
        return s, torch.zeros_like(t), a

    monkeypatch.setattr(bd.mlp, "_relu_relax", no_offset)
    assert not all(_crown_contains(m, lo, hi, rng) for m, _ in cases)


# ----------------------------------------------------------------------------- mutants
def test_mutant_narrow_ratio_bound_is_caught(monkeypatch):
    """A too-narrow coupled softmax bound must turn the brute-force soundness check red."""
    c = build("softmax_retrieval", T=2, beta=20.0)
    real = bd._ratio_bounds

    def narrow(*a, **k):
        r = real(*a, **k)
        lo, hi = r[0], r[1]
        mid = 0.5 * (lo + hi)
        return (mid - 0.2 * (hi - lo), mid + 0.2 * (hi - lo), *r[2:])

    for mod in (bd.ratio, bd.error):  # every module that calls it
        monkeypatch.setattr(mod, "_ratio_bounds", narrow)
    r = upper_bracket(c.model, c.task, method="generic", max_boxes=800, max_splits=50)
    assert soundness_violation(c.model, c.task, r.upper, np.random.default_rng(0)) > 0


def test_mutant_narrow_softmax_interval_is_caught(monkeypatch):
    """A softmax interval that drops its lower end must make layer containment fail."""
    cfg = ModelConfig(
        d_in=1, width=2, layers=[LayerSpec(heads=1, head_dim=1)], d_out=1, attn_scale=1.0
    )
    m = Transformer(cfg)
    with torch.no_grad():
        for p in m.parameters():
            p.copy_(
                3 * torch.randn(p.shape, generator=torch.Generator().manual_seed(0), dtype=p.dtype)
            )
    assert _check_layer_containment(m, 3, 1, 0)
    real = bd.softmax_bounds

    def narrow(lo, hi):
        pl, pu = real(lo, hi)
        return pl + 0.5 * (pu - pl), pu

    monkeypatch.setattr(bd.forward, "softmax_bounds", narrow)
    monkeypatch.setattr(
        bd.forward, "_coupled_F", lambda *a, **k: (torch.tensor(-1e9), torch.tensor(1e9))
    )
    assert not _check_layer_containment(m, 3, 1, 0)


# ----------------------------------------------------------------------------- unsupported
def _tiny_cfg(**kw):
    base = dict(d_in=1, width=2, layers=[LayerSpec(heads=1, head_dim=2)], d_out=1, attn_scale=1.0)
    base.update(kw)
    return ModelConfig(**base)


@pytest.mark.parametrize(
    "kw,match",
    [
        (dict(layernorm=True), "LayerNorm"),
        (dict(rope="full"), "RoPE"),
        (dict(readout="tokens"), "per-token"),
        (dict(layers=[LayerSpec(heads=1, head_dim=2, ffn_hidden=(2,))], ffn_kind="gelu"), "gelu"),
    ],
)
def test_unsupported_models_give_none_with_a_reason(kw, match):
    m = Transformer(_tiny_cfg(**kw))
    r = upper_bracket(m, ScalarMax(3), time_limit=1.0)
    assert r.upper is None and match in r.reason


def test_unsupported_tasks_give_none_with_a_reason():
    m = Transformer(_tiny_cfg())
    task = GeneralizedRetrieval(3, 1, features=[lambda x: x[..., 0] ** 2])
    r = upper_bracket(m, task, time_limit=1.0)
    assert r.upper is None and "affine" in r.reason
    with pytest.raises(ConfigError, match="not affine"):
        error_bounds(m, task, np.zeros((3, 1)), np.ones((3, 1)))


@pytest.mark.parametrize(
    "kw,match",
    [
        (dict(max_splits=0), "max_splits"),
        (dict(max_splits=-3), "max_splits"),
        (dict(time_limit=0), "time_limit"),
        (dict(time_limit=-1.0), "time_limit"),
        (dict(lo=0.8, hi=0.2), "lo must be <= hi"),
        (dict(tol=-0.1), "tol"),
    ],
)
def test_invalid_arguments_raise_config_error(kw, match):
    c = build("softmax_retrieval", T=2, beta=10.0)
    with pytest.raises(ConfigError, match=match):
        upper_bracket(c.model, c.task, **kw)


def test_sub_box_and_points_arguments():
    c = build("softmax_retrieval", T=2, beta=20.0)
    # on a box where token 0 dominates by >= 0.5 the error is below e^{-10}
    r = upper_bracket(c.model, c.task, lo=[[0.9], [0.0]], hi=[[1.0], [0.4]], time_limit=2.0)
    assert r.upper is not None and r.upper < 1e-4
    r2 = upper_bracket(c.model, c.task, points=np.full((1, 2, 1), 0.5), time_limit=2.0)
    assert r2.lower >= 0 and r2.upper >= r2.lower
    assert r2.to_dict()["upper"] == r2.upper


def test_module_docstring_example_runs():
    import doctest

    r = doctest.testmod(bd, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert r.attempted >= 3 and r.failed == 0
