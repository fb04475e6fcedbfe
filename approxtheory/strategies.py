"""Hypothesis strategies for tasks, architectures and construction knobs, in the style of
``hypothesis.extra.numpy``: every argument takes a value or a strategy.

Example::

    >>> from hypothesis import given
    >>> from approxtheory import strategies as ats
    >>> @given(ats.retrieval_inputs(T=8, margin=0.1))
    ... def test(X):
    ...     top2 = sorted(X[:, 0])[-2:]
    ...     assert top2[1] - top2[0] >= 0.1

Retrieval strategies control the **logit margin** — the gap between the top score and the rest —
because a softmax head's error is governed by it: without control, rates are invisible.
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy

from .model import LayerSpec, ModelConfig
from .tasks import MaxPlusMin, PairwiseMax, ScalarMax, SyntheticMaxSum

__all__ = ["retrieval_inputs", "max_tasks", "architectures", "layer_specs",
           "construction_knobs", "betas"]


def _s(x) -> SearchStrategy:
    return x if isinstance(x, SearchStrategy) else st.just(x)


@st.composite
def retrieval_inputs(draw, T=st.integers(2, 64), margin=st.floats(0.0, 0.5), d=1,
                     lo: float = 0.0, hi: float = 1.0, minimum: bool = False):
    """An input ``(T, d)`` whose first coordinate has its largest value (smallest if ``minimum``)
    exceeding every other by at least ``margin`` (the score margin before scaling by β)."""
    T = draw(_s(T))
    d = draw(_s(d))
    g = draw(_s(margin))
    g = min(float(g), (hi - lo) * 0.999)
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    X = rng.uniform(lo, hi, size=(T, d))
    top = rng.uniform(lo + g, hi) if T > 1 else hi
    rest = rng.uniform(lo, top - g, size=T - 1) if T > 1 else np.zeros(0)
    pos = draw(st.integers(0, T - 1))
    col = np.insert(rest, pos, top)
    X[:, 0] = (lo + hi - col) if minimum else col
    return X


@st.composite
def max_tasks(draw, T=st.integers(2, 32), kind=st.sampled_from(["scalar_max", "max_plus_min",
                                                                    "synthetic", "pairwise"]),
              d=st.integers(1, 4), D=st.integers(1, 4), seed=st.integers(0, 1000)):
    """A retrieval task instance (scalar max, max + min, synthetic Σ max aᵀx, pairwise max)."""
    T, kind, d, D, seed = (draw(_s(v)) for v in (T, kind, d, D, seed))
    if kind == "scalar_max":
        return ScalarMax(T)
    if kind == "max_plus_min":
        return MaxPlusMin(T)
    if kind == "synthetic":
        return SyntheticMaxSum(T, d=d, D=D, seed=seed)
    return PairwiseMax(T, d=d, D=D, seed=seed)


def betas(min_value: float = 1.0, max_value: float = 1e6) -> SearchStrategy:
    """Inverse temperatures on a log scale."""
    return st.floats(np.log10(min_value), np.log10(max_value)).map(lambda e: float(10 ** e))


@st.composite
def layer_specs(draw, heads=st.integers(1, 8), head_dim=st.integers(1, 16),
                kv_groups=None, ffn_hidden=st.lists(st.integers(1, 32), max_size=2)):
    h = draw(_s(heads))
    n = draw(_s(head_dim))
    if kv_groups is None:
        divisors = [g for g in range(1, h + 1) if h % g == 0]
        g = draw(st.sampled_from(divisors))
    else:
        g = draw(_s(kv_groups))
    return LayerSpec(heads=h, head_dim=n, kv_groups=g, ffn_hidden=tuple(draw(_s(ffn_hidden))))


@st.composite
def architectures(draw, d_in=st.integers(1, 4), width=st.integers(2, 32),
                  layers=st.integers(1, 3), layer=None, causal=st.booleans(),
                  rope=st.sampled_from([None, "full"]), bias=st.booleans(),
                  layernorm=st.booleans(), readout=st.sampled_from(["cls", "tokens"]),
                  dtype="float64"):
    """A :class:`ModelConfig`: per-layer head counts and widths drawn independently (uniform,
    Prism-style and fat-head models alike). RoPE forces even head widths."""
    nl = draw(_s(layers))
    r = draw(_s(rope))
    specs = []
    for _ in range(nl):
        spec = draw(layer if layer is not None else layer_specs())
        if r is not None and spec.head_dim % 2:
            spec = LayerSpec(spec.heads, spec.head_dim + 1, kv_groups=spec.kv_groups,
                             ffn_hidden=spec.ffn_hidden)
        specs.append(spec)
    return ModelConfig(d_in=draw(_s(d_in)), width=draw(_s(width)), layers=specs,
                       causal=draw(_s(causal)), rope=r, bias=draw(_s(bias)),
                       layernorm=draw(_s(layernorm)), readout=draw(_s(readout)),
                       dtype=draw(_s(dtype)))


_KNOB_STRATS = {
    "T": st.integers(2, 32),
    "beta": betas(1.0, 1e4),
    "gate": st.floats(-4.0, -0.5),
    "D": st.integers(1, 3),
    "d": st.integers(1, 4),
    "seed": st.integers(0, 100),
    "eps": st.floats(0.02, 0.5),
    "N": st.integers(8, 256),
    "F": st.integers(1, 8),
    "B": st.floats(0.5, 3.0),
    "k": st.integers(0, 3),
}


@st.composite
def construction_knobs(draw, name, **overrides):
    """Knobs for the construction ``name``: each knob from ``overrides`` (value or strategy) or a
    default strategy in its valid range."""
    from .constructions import REGISTRY
    name = draw(_s(name))
    _fn, spec, _c, _s_ = REGISTRY[name]
    out = {}
    for k, knob in spec.items():
        if k in overrides:
            out[k] = draw(_s(overrides[k]))
        elif knob.choices:
            out[k] = knob.default
        elif k in _KNOB_STRATS:
            out[k] = draw(_KNOB_STRATS[k])
        else:
            out[k] = knob.default
    return out
