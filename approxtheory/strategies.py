"""Hypothesis strategies for tasks, architectures and construction knobs, in the style of
``hypothesis.extra.numpy``: every argument takes a value or a strategy.

Example::

    >>> from hypothesis import given, settings
    >>> from approxtheory import strategies as ats
    >>> @settings(max_examples=20)
    ... @given(ats.retrieval_inputs(T=8, margin=0.1))
    ... def test(X):
    ...     top2 = sorted(X[:, 0])[-2:]
    ...     assert top2[1] - top2[0] >= 0.1
    >>> test()

Retrieval strategies control the **logit margin** — the gap between the top score and the rest —
because a softmax head's error is governed by it: without control, rates are invisible.

The strategies draw *values* (the margin, the top value, the slack of every other entry, the top
position, the feature vectors), never a seed that numpy expands into an array, so a failing case
shrinks: the margin toward its lower bound, the other entries toward a near-tie with the top one,
the top position toward 0.

An impossible argument raises :class:`hypothesis.errors.InvalidArgument`, saying what was wrong
and what is allowed: at once where the argument is a plain value, when the value is drawn where
it is a strategy (hypothesis's own convention). So does a size beyond what a strategy draws, before
anything is generated: ``T``, ``d``, ``D``, ``heads``, ``head_dim``, ``kv_groups``, ``d_in``,
``width`` and every FFN width at most 4096, ``layers`` at most 256, at most 16 FFN widths, and at
most 2^20 entries in one drawn array (``T·d`` inputs, ``D·d`` features, ``D·d²`` matrices).
"""

from __future__ import annotations

import math
from numbers import Integral, Real
from typing import TYPE_CHECKING

import numpy as np
from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument
from hypothesis.extra.numpy import arrays
from hypothesis.strategies import SearchStrategy

from .model import LayerSpec, ModelConfig
from .tasks import MaxPlusMin, PairwiseMax, ScalarMax, SyntheticMaxSum

if TYPE_CHECKING:
    from .constructions import Requirement

__all__ = [
    "retrieval_inputs",
    "margins",
    "max_tasks",
    "architectures",
    "layer_specs",
    "construction_knobs",
    "betas",
    "minimal",
]

_KINDS = ("scalar_max", "max_plus_min", "synthetic", "pairwise")
_SEED_MAX = 2**32 - 1  # the seeds the rest of the package accepts (numpy, torch)
_TINY = 1e-100  # drawn feature rows/matrices of smaller norm count as zero
_READOUTS = ("cls", "tokens")
_DTYPES = ("float64", "float32")

# default strategies of the arguments (module-level singletons: strategies are immutable)
_T_RETRIEVAL = st.integers(2, 64)
_T_TASK = st.integers(2, 32)
_KIND = st.sampled_from(_KINDS)
_SMALL = st.integers(1, 4)
_HEADS = st.integers(1, 8)
_HEAD_DIM = st.integers(1, 16)
_FFN = st.lists(st.integers(1, 32), max_size=2)
_WIDTH = st.integers(2, 32)
_LAYERS = st.integers(1, 3)
_BOOL = st.booleans()
_ROPE = st.sampled_from([None, "full"])
_READOUT = st.sampled_from(_READOUTS)
_RMS_EPS_DEFAULT: float = ModelConfig.rms_eps  # the model's default ε, 1e-6
_RMS_EPS = st.sampled_from((_RMS_EPS_DEFAULT, 1e-5, 1e-3))

# The largest arguments the strategies take (above them: InvalidArgument, before anything is
# generated): strategies draw test inputs, and a size beyond these would hang the drawing or
# allocate arrays of gigabytes.
_MAX_SIZE = 4096  # T, d, D, heads, head_dim, kv_groups, d_in, width, every FFN width
_MAX_LAYERS = 256  # layers of an architecture
_MAX_FFN_DEPTH = 16  # hidden widths of one FFN
_MAX_ELEMENTS = 2**20  # entries of one drawn array: T·d inputs, D·d features, D·d² matrices


# --- validation -------------------------------------------------------------------------------


def _s(x) -> SearchStrategy:
    return x if isinstance(x, SearchStrategy) else st.just(x)


def _values(**args) -> dict:
    """The arguments that are plain values (strategies are checked once drawn)."""
    return {k: v for k, v in args.items() if not isinstance(v, SearchStrategy)}


def _int(
    name: str,
    v,
    low: int | None = None,
    high: int | None = None,
    why: str = "",
    cap: int | None = None,
) -> int:
    """``v`` as an int in low..high; ``cap``: the largest size a strategy draws (a separate
    message: a size above it is refused before anything is generated)."""
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, Integral):
        raise InvalidArgument(f"{name} must be an integer{_range(low, high)} (got {v!r})")
    iv = int(v)
    if (low is not None and iv < low) or (high is not None and iv > high):
        raise InvalidArgument(f"{name} must be an integer{_range(low, high)}{why} (got {v!r})")
    if cap is not None and iv > cap:
        raise InvalidArgument(
            f"{name} must be at most {cap}{why}, the largest a strategy draws (got {v!r})"
        )
    return iv


def _elements(what: str, dims: dict) -> None:
    """InvalidArgument when an array of these dimensions would exceed ``_MAX_ELEMENTS``."""
    n = 1
    for x in dims.values():
        n *= int(x)
    if n > _MAX_ELEMENTS:
        shape = "·".join(f"{k.strip()}" for k in dims)
        got = ", ".join(f"{k}={x!r}" for k, x in dims.items() if k == k.strip())
        raise InvalidArgument(
            f"{what} would have {shape} = {n} entries, more than the {_MAX_ELEMENTS} "
            f"(2^20) a strategy draws (got {got})"
        )


def _range(low, high) -> str:
    if low is not None and high is not None:
        return f" in {low}..{high}"
    if low is not None:
        return f" >= {low}"
    if high is not None:
        return f" <= {high}"
    return ""


def _real(name: str, v) -> float:
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, Real):
        raise InvalidArgument(f"{name} must be a finite real number (got {v!r})")
    if not math.isfinite(float(v)):
        raise InvalidArgument(f"{name} must be a finite real number (got {v!r})")
    return float(v)


def _bool(name: str, v) -> bool:
    if not isinstance(v, (bool, np.bool_)):
        raise InvalidArgument(f"{name} must be True or False (got {v!r})")
    return bool(v)


def _one_of(name: str, v, allowed) -> None:
    if not any(v is a or (type(v) is type(a) and v == a) for a in allowed):
        raise InvalidArgument(f"{name} must be one of {', '.join(map(repr, allowed))} (got {v!r})")


def minimal(strategy: SearchStrategy, condition=lambda _: True, max_examples: int = 200):
    """The simplest example of ``strategy`` satisfying ``condition``, as Hypothesis shrinks it
    (:func:`hypothesis.find` without the example database, so the answer is reproducible).

    >>> minimal(betas(10, 1e3))
    10.0
    """
    from hypothesis import find, settings

    return find(
        strategy,
        condition,
        settings=settings(database=None, max_examples=max_examples, deadline=None),
    )


# --- retrieval inputs ----------------------------------------------------------------------------


def _check_retrieval(v: dict) -> None:
    v = {k: x for k, x in v.items() if not (k in ("margin", "position") and x is None)}
    if "T" in v:
        _int("T", v["T"], 1, why=" (the sequence length)", cap=_MAX_SIZE)
    if "d" in v:
        _int(
            "d",
            v["d"],
            1,
            why=" (the token dimension; the score is the first coordinate)",
            cap=_MAX_SIZE,
        )
    if "T" in v and "d" in v:
        _elements("an input", {"T": v["T"], "d": v["d"]})
    if "minimum" in v:
        _bool("minimum", v["minimum"])
    for k in ("lo", "hi", "margin"):
        if k in v:
            _real(k, v[k])
    if "margin" in v and v["margin"] < 0:
        raise InvalidArgument(f"margin must be >= 0 (got {v['margin']!r})")
    if "lo" in v and "hi" in v:
        lo, hi = float(v["lo"]), float(v["hi"])
        if not lo < hi:
            raise InvalidArgument(f"lo must be less than hi (got lo={v['lo']!r}, hi={v['hi']!r})")
        if not math.isfinite(hi - lo):
            raise InvalidArgument(
                f"hi - lo must be a finite number (got lo={v['lo']!r}, hi={v['hi']!r})"
            )
        if "margin" in v and not v["margin"] < hi - lo:
            raise InvalidArgument(
                f"margin must be less than hi - lo = {hi - lo!r} (got margin={v['margin']!r}, "
                f"lo={v['lo']!r}, hi={v['hi']!r}): 0 <= margin < hi - lo"
            )
    if "position" in v:
        T = v.get("T")
        _int(
            "position",
            v["position"],
            0,
            None if T is None else T - 1,
            why="" if T is None else f" (a position of a sequence of length T={T})",
        )


def _check_margins(v: dict) -> None:
    for k in ("min_value", "max_value"):
        if k in v:
            x = _real(k, v[k])
            if x < 0:
                raise InvalidArgument(f"{k} must be >= 0: a margin is a gap (got {v[k]!r})")
    if "min_value" in v and "max_value" in v and v["min_value"] > v["max_value"]:
        raise InvalidArgument(
            f"min_value must be <= max_value (got min_value="
            f"{v['min_value']!r}, max_value={v['max_value']!r})"
        )


def margins(min_value=0.0, max_value=0.5) -> SearchStrategy[float]:
    """Margins in ``[min_value, max_value]`` (0 <= min_value <= max_value, finite) that shrink to
    ``min_value`` exactly — the nearest admissible tie — where ``st.floats(a, b)`` shrinks to the
    float Hypothesis finds simplest (an integer, 0.0625, ...), not to ``a``.

    >>> from hypothesis import strategies as st
    >>> small = lambda m: m < 0.1
    >>> minimal(margins(0.01, 0.5), small), minimal(st.floats(0.01, 0.5), small)
    (0.01, 0.0625)
    """
    v = _values(min_value=min_value, max_value=max_value)
    _check_margins(v)
    if len(v) < 2:
        return st.tuples(_s(min_value), _s(max_value)).flatmap(lambda b: margins(*b))
    lo, hi = float(min_value), float(max_value)
    return st.floats(0.0, hi - lo).map(lambda u: min(lo + u, hi))


def retrieval_inputs(
    T=_T_RETRIEVAL, margin=None, d=1, lo=0.0, hi=1.0, minimum=False, position=None
) -> SearchStrategy[np.ndarray]:
    """An input ``(T, d)`` in ``[lo, hi]`` whose first coordinate has its largest value (smallest
    if ``minimum``) at ``position`` exceeding (below) every other by at least ``margin`` — the
    score margin before scaling by β.

    >>> from hypothesis import strategies as st
    >>> X = minimal(retrieval_inputs(T=4, margin=st.floats(0.0, 0.5)),
    ...             lambda X: float(np.ptp(X[:, 0])) < 1e-3)
    >>> X[:, 0]  # shrunk to the smallest margin: a tie at the top
    array([1., 1., 1., 1.])
    >>> minimal(retrieval_inputs(T=3, margin=0.25, minimum=True))[:, 0]
    array([0.  , 0.25, 0.25])

    * ``T``, ``d`` (1..4096, T·d at most 2^20): the shape;
    * ``margin``: ``0 <= margin < hi - lo``; default ``margins(0, (hi - lo) / 2)``;
    * ``lo < hi``: finite ends of the value range;
    * ``position``: where the top (bottom) value sits, ``0 <= position < T``; default any;
    * ``minimum``: the bottom value is separated instead of the top one.

    Each argument is a value or a strategy. Shrinking moves the margin to its lower bound, the
    top value to ``hi`` (bottom to ``lo``), every other entry to exactly ``margin`` below the
    top (a near-tie), the position to 0 and the other coordinates to simple values.
    """
    _check_retrieval(
        _values(T=T, margin=margin, d=d, lo=lo, hi=hi, minimum=minimum, position=position)
    )
    return _retrieval_inputs(T, margin, d, lo, hi, minimum, position)


def _nudge(x: float, ok, bound: float) -> float:
    """Move ``x`` toward ``bound`` until ``ok(x)`` (rounding can leave ``top - (top - g)`` just
    below ``g``): steps start at one ulp and double, so a deficit of many ulps of ``x`` takes few
    steps; ``bound`` itself is admissible (the arguments were checked)."""
    up = bound >= x
    step = 0.0
    while not ok(x):
        if x == bound:
            break
        step = max(2 * step, abs(float(np.nextafter(x, bound)) - x))
        x = min(x + step, bound) if up else max(x - step, bound)
    return float(x)


@st.composite
def _retrieval_inputs(draw, T, margin, d, lo, hi, minimum, position):
    T, d, lo, hi = (draw(_s(x)) for x in (T, d, lo, hi))
    _check_retrieval(dict(T=T, d=d, lo=lo, hi=hi))
    g = draw(margins(0.0, 0.5 * (float(hi) - float(lo))) if margin is None else _s(margin))
    minimum = draw(_s(minimum))
    _check_retrieval(dict(lo=lo, hi=hi, margin=g, minimum=minimum))
    T, d, lo, hi, g = int(T), int(d), float(lo), float(hi), float(g)
    pos = draw(st.integers(0, T - 1) if position is None else _s(position))
    _check_retrieval(dict(T=T, position=pos))
    # the separated value, at distance t from its end of the range (t shrinks to 0)
    room = hi - lo - g if T > 1 else hi - lo
    t = draw(st.floats(0.0, max(room, 0.0)))
    if T == 1:
        top = min(max(hi - t if not minimum else lo + t, lo), hi)
        edge = span = 0.0
    elif not minimum:
        top = _nudge(min(max(hi - t, lo), hi), lambda x: x - lo >= g, hi)  # lo stays admissible
        edge = _nudge(max(top - g, lo), lambda x: top - x >= g, lo)  # the rest's largest value
        span = edge - lo
    else:
        top = _nudge(max(min(lo + t, hi), lo), lambda x: hi - x >= g, lo)
        edge = _nudge(min(top + g, hi), lambda x: x - top >= g, hi)  # the rest's smallest value
        span = hi - edge
    # the rest: each at a slack s >= 0 beyond the edge (s shrinks to 0: a near-tie)
    slack = draw(arrays(np.float64, T - 1, elements=st.floats(0.0, max(float(span), 0.0))))
    rest = np.clip(edge - slack, lo, edge) if not minimum else np.clip(edge + slack, edge, hi)
    X = np.empty((T, d))
    X[:, 0] = np.insert(rest, pos, top)
    if d > 1:
        X[:, 1:] = draw(arrays(np.float64, (T, d - 1), elements=st.floats(lo, hi)))
    return X


# --- tasks and inverse temperatures --------------------------------------------------------------


def _check_task(v: dict) -> None:
    if "T" in v:
        _int("T", v["T"], 1, why=" (the sequence length)", cap=_MAX_SIZE)
    if "kind" in v:
        _one_of("kind", v["kind"], _KINDS)
    if "d" in v:
        _int("d", v["d"], 1, why=" (the token dimension)", cap=_MAX_SIZE)
    if "D" in v:
        _int("D", v["D"], 1, why=" (the number of features)", cap=_MAX_SIZE)
    if "D" in v and "d" in v and v.get("kind") == "synthetic":
        _elements("the features a_i", {"D": v["D"], "d": v["d"]})
    if "D" in v and "d" in v and v.get("kind") == "pairwise":
        _elements("the matrices A_i", {"D": v["D"], "d": v["d"], "d ": v["d"]})
    if "seed" in v and v["seed"] is not None:
        _int("seed", v["seed"], 0, _SEED_MAX)


def max_tasks(T=_T_TASK, kind=_KIND, d=_SMALL, D=_SMALL, seed=None) -> SearchStrategy:
    """A retrieval task instance: scalar max, max + min, synthetic Σ_i max_t a_iᵀx(t) or pairwise
    Σ_i max_{s,t} x(s)ᵀA_i x(t).

    >>> task = minimal(max_tasks(kind="synthetic", d=2, D=1))
    >>> task.T, task.a  # shrunk: the shortest sequence, the first unit vector
    (2, array([[1., 0.]]))

    * ``T``, ``d``, ``D`` (1..4096; D·d, or D·d² for ``pairwise``, at most 2^20); ``kind`` one
      of ``scalar_max``, ``max_plus_min``, ``synthetic``, ``pairwise``;
    * ``seed``: ``None`` (default) draws the features a_i (A_i) themselves as values — entries
      in [-1, 1], a row (matrix) of norm below 1e-100 read as e₁ (the identity), normalised as
      the task does — so they shrink; an integer in 0..2³²-1 uses the task's own seeded
      features instead.
    """
    _check_task(_values(T=T, kind=kind, d=d, D=D, seed=seed))
    return _max_tasks(T, kind, d, D, seed)


@st.composite
def _max_tasks(draw, T, kind, d, D, seed):
    T, kind, d, D, seed = (draw(_s(v)) for v in (T, kind, d, D, seed))
    _check_task(dict(T=T, kind=kind, d=d, D=D, seed=seed))
    if kind == "scalar_max":
        return ScalarMax(T)
    if kind == "max_plus_min":
        return MaxPlusMin(T)
    unit = st.floats(-1.0, 1.0)
    if kind == "synthetic":
        if seed is not None:
            return SyntheticMaxSum(T, d=d, D=D, seed=seed)
        a = draw(arrays(np.float64, (D, d), elements=unit))
        a[~(np.linalg.norm(a, axis=1) > _TINY)] = np.eye(d)[0]
        return SyntheticMaxSum(T, d=d, D=D, a=a / np.linalg.norm(a, axis=1, keepdims=True))
    if seed is not None:
        return PairwiseMax(T, d=d, D=D, seed=seed)
    A = draw(arrays(np.float64, (D, d, d), elements=unit))
    A[~(np.linalg.norm(A, 2, axis=(1, 2)) > _TINY)] = np.eye(d)
    return PairwiseMax(T, d=d, D=D, A=np.stack([0.5 * m / np.linalg.norm(m, 2) for m in A]))


def _check_betas(v: dict) -> None:
    for k in ("min_value", "max_value"):
        if k in v:
            x = _real(k, v[k])
            if not x > 0:
                raise InvalidArgument(
                    f"{k} must be positive: inverse temperatures are drawn on "
                    f"a log scale (got {v[k]!r})"
                )
    if "min_value" in v and "max_value" in v and v["min_value"] > v["max_value"]:
        raise InvalidArgument(
            f"min_value must be <= max_value (got min_value="
            f"{v['min_value']!r}, max_value={v['max_value']!r})"
        )


def betas(min_value=1.0, max_value=1e6) -> SearchStrategy[float]:
    """Inverse temperatures β in ``[min_value, max_value]`` (0 < min_value <= max_value, finite),
    uniform on a log scale; β shrinks to ``min_value`` (the softest softmax, its largest error).

    >>> minimal(betas(10, 1e3)), minimal(betas(0.1, 10), lambda b: b > 5)
    (10.0, 10.0)
    """
    v = _values(min_value=min_value, max_value=max_value)
    _check_betas(v)
    if len(v) < 2:
        return st.tuples(_s(min_value), _s(max_value)).flatmap(lambda b: betas(*b))
    lo, hi = float(min_value), float(max_value)
    return st.floats(0.0, math.log10(hi) - math.log10(lo)).map(
        lambda e: float(min(max(lo * 10.0**e, lo), hi))
    )


# --- architectures -------------------------------------------------------------------------------


def _check_layer(v: dict) -> None:
    if "heads" in v:
        _int("heads", v["heads"], 1, cap=_MAX_SIZE)
    if "head_dim" in v:
        _int("head_dim", v["head_dim"], 1, cap=_MAX_SIZE)
    if v.get("kv_groups") is not None:
        g = _int("kv_groups", v["kv_groups"], 1, cap=_MAX_SIZE)
        if "heads" in v and v["heads"] % g:
            raise InvalidArgument(
                f"kv_groups must divide heads (got kv_groups={g}, heads={v['heads']})"
            )
    if "ffn_hidden" in v:
        w = v["ffn_hidden"]
        if isinstance(w, (str, bytes)) or not hasattr(w, "__iter__"):
            raise InvalidArgument(
                f"ffn_hidden must be a sequence of positive integers (the FFN "
                f"hidden widths; empty: no FFN) (got {w!r})"
            )
        w = list(w)
        if len(w) > _MAX_FFN_DEPTH:
            raise InvalidArgument(
                f"ffn_hidden must hold at most {_MAX_FFN_DEPTH} widths (got {len(w)})"
            )
        for x in w:
            _int("every ffn_hidden width", x, 1, cap=_MAX_SIZE)


def layer_specs(
    heads=_HEADS, head_dim=_HEAD_DIM, kv_groups=None, ffn_hidden=_FFN
) -> SearchStrategy[LayerSpec]:
    """A :class:`~approxtheory.model.LayerSpec`: ``heads`` (1..4096) heads of width ``head_dim``
    (1..4096), ``kv_groups`` key/value groups dividing ``heads`` (default: any divisor), FFN hidden
    widths ``ffn_hidden`` (a sequence of at most 16 integers in 1..4096).

    >>> minimal(layer_specs())
    LayerSpec(heads=1, head_dim=1, value_dim=1, kv_groups=1, ffn_hidden=())
    >>> minimal(layer_specs(heads=6), lambda s: s.kv_groups > 2).kv_groups
    3
    """
    _check_layer(
        _values(heads=heads, head_dim=head_dim, kv_groups=kv_groups, ffn_hidden=ffn_hidden)
    )
    return _layer_specs(heads, head_dim, kv_groups, ffn_hidden)


@st.composite
def _layer_specs(draw, heads, head_dim, kv_groups, ffn_hidden):
    h = draw(_s(heads))
    n = draw(_s(head_dim))
    _check_layer(dict(heads=h, head_dim=n))
    if kv_groups is None:
        g = draw(st.sampled_from([g for g in range(1, h + 1) if h % g == 0]))
    else:
        g = draw(_s(kv_groups))
    w = draw(_s(ffn_hidden))
    _check_layer(dict(heads=h, kv_groups=g, ffn_hidden=w))
    return LayerSpec(
        heads=int(h), head_dim=int(n), kv_groups=int(g), ffn_hidden=tuple(int(x) for x in w)
    )


def _check_arch(v: dict) -> None:
    for k in ("d_in", "width"):
        if k in v:
            _int(k, v[k], 1, cap=_MAX_SIZE)
    if "layers" in v:
        _int("layers", v["layers"], 1, cap=_MAX_LAYERS)
    for k in ("causal", "bias", "tie_embeddings"):
        if k in v:
            _bool(k, v[k])
    norms = {}  # the norm flags given as values (None: drawn where valid)
    for k in ("layernorm", "rmsnorm", "final_norm"):
        if v.get(k) is not None:
            norms[k] = _bool(k, v[k])
    if norms.get("layernorm") and norms.get("rmsnorm"):
        raise InvalidArgument(
            "layernorm and rmsnorm are exclusive: at most one pre-norm kind can be True "
            "(got layernorm=True, rmsnorm=True; pass None for one of them to draw it where valid)"
        )
    if (
        norms.get("final_norm")
        and norms.get("layernorm") is False
        and norms.get("rmsnorm") is False
    ):
        raise InvalidArgument(
            "final_norm=True needs a norm kind: layernorm or rmsnorm must be True or None "
            "(drawn where valid) (got final_norm=True, layernorm=False, rmsnorm=False)"
        )
    if "rms_eps" in v:
        if not _real("rms_eps", v["rms_eps"]) > 0:
            raise InvalidArgument(
                f"rms_eps must be a finite real number > 0 (RMSNorm's ε) (got {v['rms_eps']!r})"
            )
    if "rope" in v:
        r = v["rope"]
        if not (r is None or r == "full"):
            _int("rope", r, 0, why=" (or None, or 'full': the number of rotated dims per head)")
            if r % 2:
                raise InvalidArgument(
                    f"rope must be None, 'full' or an even number of rotated dims (got {r!r})"
                )
    if "readout" in v:
        _one_of("readout", v["readout"], _READOUTS)
    if "dtype" in v:
        _one_of("dtype", v["dtype"], _DTYPES)
    if v.get("layer") is not None and not isinstance(v["layer"], LayerSpec):
        raise InvalidArgument(
            f"layer must be None, a LayerSpec or a strategy of LayerSpecs (got {v['layer']!r})"
        )


def architectures(
    d_in=_SMALL,
    width=_WIDTH,
    layers=_LAYERS,
    layer=None,
    causal=_BOOL,
    rope=_ROPE,
    bias=_BOOL,
    layernorm=None,
    readout=_READOUT,
    dtype="float64",
    rmsnorm=None,
    rms_eps=_RMS_EPS,
    final_norm=None,
    tie_embeddings=_BOOL,
) -> SearchStrategy[ModelConfig]:
    """A :class:`~approxtheory.model.ModelConfig`: ``layers`` layers, each drawn from ``layer``
    (a LayerSpec or a strategy; default :func:`layer_specs`, so head counts and widths vary per
    layer: uniform, Prism-style and fat-head models alike). RoPE widens odd head widths by one
    (``rope='full'``) or to the rotated width (an even integer ``rope``).

    >>> cfg = minimal(architectures())
    >>> cfg.d_in, cfg.width, len(cfg.layers), cfg.rope, cfg.readout
    (1, 2, 1, None, 'cls')
    >>> cfg.layernorm, cfg.rmsnorm, cfg.final_norm, cfg.tie_embeddings
    (False, False, False, False)

    Arguments (values or strategies): ``d_in``, ``width`` (1..4096), ``layers`` (1..256);
    ``causal``, ``bias``, ``tie_embeddings`` (booleans); ``rope`` (None, ``'full'`` or an even
    integer >= 0); ``readout`` (``'cls'`` or ``'tokens'``); ``dtype`` (``'float64'`` or
    ``'float32'``); ``rms_eps`` (a finite real > 0, RMSNorm's ε; drawn only where
    ``rmsnorm``, default one of 1e-6, 1e-5, 1e-3, shrinking to the model's 1e-6).

    The norms: ``layernorm``, ``rmsnorm`` (the pre-norm kind: exclusive, at most one True) and
    ``final_norm`` (one more norm, of that kind, before the read-out: needs one of the two) are
    booleans, strategies of booleans or None (the default): a boolean drawn where it is valid,
    False where it is not (``rmsnorm`` where ``layernorm`` is True, ``final_norm`` without a
    norm kind) and True where it must be (``final_norm=True`` with the other kind False). A
    tied read-out (``tie_embeddings``) maps back to the input: such a config has
    ``d_out = d_in`` (the others ``d_out = 1``). Everything shrinks to off.
    """
    _check_arch(
        _values(
            d_in=d_in,
            width=width,
            layers=layers,
            layer=layer,
            causal=causal,
            rope=rope,
            bias=bias,
            layernorm=layernorm,
            readout=readout,
            dtype=dtype,
            rmsnorm=rmsnorm,
            rms_eps=rms_eps,
            final_norm=final_norm,
            tie_embeddings=tie_embeddings,
        )
    )
    return _architectures(
        d_in,
        width,
        layers,
        layer,
        causal,
        rope,
        bias,
        layernorm,
        readout,
        dtype,
        rmsnorm,
        rms_eps,
        final_norm,
        tie_embeddings,
    )


def _draw_norms(draw, layernorm, rmsnorm, final_norm) -> tuple[bool, bool, bool]:
    """``(layernorm, rmsnorm, final_norm)``: the given ones drawn (and checked together), the
    None ones drawn where valid, False where not, True where they must be."""
    given = {
        k: None if x is None else draw(_s(x))
        for k, x in (("layernorm", layernorm), ("rmsnorm", rmsnorm), ("final_norm", final_norm))
    }
    _check_arch(given)
    ln, rms, fn = (None if x is None else bool(x) for x in given.values())
    if ln is None:
        ln = False if rms else True if (fn and rms is False) else draw(_BOOL)
    if rms is None:
        rms = False if ln else True if fn else draw(_BOOL)
    if fn is None:
        fn = draw(_BOOL) if (ln or rms) else False
    return ln, rms, fn


@st.composite
def _architectures(
    draw,
    d_in,
    width,
    layers,
    layer,
    causal,
    rope,
    bias,
    layernorm,
    readout,
    dtype,
    rmsnorm,
    rms_eps,
    final_norm,
    tie_embeddings,
):
    nl = draw(_s(layers))
    r = draw(_s(rope))
    _check_arch(dict(layers=nl, rope=r))
    specs = []
    for _ in range(nl):
        spec = draw(layer_specs() if layer is None else _s(layer))
        _check_arch(dict(layer=spec))
        need = (
            spec.head_dim + spec.head_dim % 2
            if r == "full"
            else max(spec.head_dim, r)
            if r is not None
            else spec.head_dim
        )
        if need != spec.head_dim:
            spec = LayerSpec(spec.heads, need, kv_groups=spec.kv_groups, ffn_hidden=spec.ffn_hidden)
        specs.append(spec)
    v = dict(
        d_in=draw(_s(d_in)),
        width=draw(_s(width)),
        causal=draw(_s(causal)),
        bias=draw(_s(bias)),
        readout=draw(_s(readout)),
        dtype=draw(_s(dtype)),
        tie_embeddings=draw(_s(tie_embeddings)),
    )
    _check_arch(v)
    ln, rms, fn = _draw_norms(draw, layernorm, rmsnorm, final_norm)
    # ε only matters with RMSNorm: a strategy is drawn only then (a plain value is kept)
    eps = draw(_s(rms_eps)) if rms or not isinstance(rms_eps, SearchStrategy) else _RMS_EPS_DEFAULT
    _check_arch(dict(rms_eps=eps))
    v["tie_embeddings"] = tie = bool(v["tie_embeddings"])
    return ModelConfig(
        layers=specs,
        rope=r,
        layernorm=ln,
        rmsnorm=rms,
        rms_eps=float(eps),
        final_norm=fn,
        d_out=v["d_in"] if tie else 1,  # a tied read-out maps back to the input space
        **v,
    )


# --- construction knobs --------------------------------------------------------------------------

# Ranges for knob ends declared open (None), chosen by the strategy so that builds stay small;
# each range is then widened to hold the knob's default, where draws shrink to:
_INT_SPAN = 30  # integers: low..low + 30 (low=2: 2..32); no low end: high - 30..high
_FLOAT_SPAN = 10.0  # floats: the default ± 10, clipped to the declared end
_LOG_DECADES = 2  # log scale: two decades beyond the default (β, default 100, low 1:
# 1..10⁴); a low end of 0 (a positive knob) becomes default·10⁻²


def _registry():
    from .constructions import REGISTRY

    return REGISTRY


def _knob_table(name) -> dict:
    return _registry()[name].knobs


def _coerce(name: str, knob, value):
    """The construction package's own per-knob validation, as InvalidArgument."""
    from .constructions._base import _coerce as coerce
    from .errors import ConfigError

    try:
        return coerce(name, knob, value)
    except ConfigError as e:
        raise InvalidArgument(f"knob {e}") from None


def _check_knobs(name, overrides: dict, values: bool) -> None:
    reg = _registry()
    if not isinstance(name, str) or name not in reg:
        from .errors import did_you_mean

        raise InvalidArgument(
            f"unknown construction {name!r}{did_you_mean(name, reg)} (known: {', '.join(reg)})"
        )
    table = _knob_table(name)
    unknown = sorted(set(overrides) - set(table))
    if unknown:
        raise InvalidArgument(
            f"{name} has no knob {', '.join(unknown)}; its knobs are: {', '.join(table) or 'none'}"
        )
    if values:
        fixed = {}  # the overrides given as values (None: the default, as build reads it)
        for k, v in overrides.items():
            if not isinstance(v, SearchStrategy):
                _coerce(k, table[k], v)
                fixed[k] = table[k].default if v is None else v
        for r in reg[name].requires:
            if set(r.knob_names) <= set(fixed) and r.check(fixed):
                raise InvalidArgument(f"{name}: {r.check(fixed)}")
        _check_satisfiable(name, fixed, overrides, table, reg[name].requires)


def _drawn_range(key: str, knob) -> str:
    """The values :func:`_knob_strategy` draws the knob from, in words (for messages)."""
    if knob.choices:
        return "one of " + ", ".join(map(repr, knob.choices))
    if knob.type is bool:
        return "True or False"
    if knob.type not in (int, float):
        return f"{knob.default!r} only (its default)"
    b = _knob_bounds(key, knob)
    scale = " on a log scale" if b[3] else ""
    if b[0] == "int":
        return f"{b[1]}..{b[2]}{scale}"
    return f"{b[1]:g}..{b[2]:g}{scale}"


def _check_satisfiable(name, fixed: dict, overrides: dict, table: dict, requires) -> None:
    """Raise InvalidArgument where the overrides given as values (``fixed``) leave a
    requirement that no value of the knobs not overridden fits, in the ranges the strategy draws
    them from (``softmax_retrieval`` with ``beta=0.001`` needs T >= 1000, drawn from 1..31):
    every draw would be rejected. The repair the draws use (:func:`_repair`) is run from the
    defaults; requirements that read a knob overridden by a strategy are judged per draw."""
    decidable = [r for r in requires if all(k in fixed or k not in overrides for k in r.knob_names)]
    if not any(k in fixed for r in decidable for k in r.knob_names):
        return  # the defaults keep every requirement
    knobs = {k: fixed.get(k, knob.default) for k, knob in table.items()}
    broken = _repair(knobs, table, set(overrides), decidable)
    if broken is None:
        return
    free = [k for k in broken.knob_names if k not in overrides]
    given = [k for k in broken.knob_names if k in fixed] or list(fixed)
    these = " and ".join(free) or "no knob"
    ranges = "; ".join(f"{k} in {_drawn_range(k, table[k])}" for k in free)
    defaults = ", ".join(f"{k}={table[k].default!r}" for k in broken.knob_names)
    raise InvalidArgument(
        f"{name}: the override {', '.join(f'{k}={fixed[k]!r}' for k in given)} breaks the "
        f'requirement "{broken.message}" for every {these} the strategy draws'
        f"{f' ({ranges})' if ranges else ''}, so every draw would be rejected. Allowed: "
        f"{'values' if len(given) > 1 else 'a value'} of {' and '.join(given)} for which some "
        f"{these} in that range keeps it (the defaults "
        f"{defaults} do), or {these} overridden as well (a value or a strategy) with values "
        f"that keep it"
    )


def _int_knob(key: str, lo: int, hi: int, default: int, log: bool) -> SearchStrategy[int]:
    """Integers in lo..hi (on a log scale where ``log``) shrinking to ``default`` (clipped)."""
    if lo > hi:
        raise InvalidArgument(
            f"knob {key}: its declared range holds no integer{' >= 1 (log scale)' if log else ''}"
        )
    t = min(max(default, lo), hi)
    if not log:
        return st.integers(lo - t, hi - t).map(lambda u: t + u)
    return st.floats(math.log(lo / t), math.log(hi / t)).map(
        lambda e: min(max(int(round(t * math.exp(e))), lo), hi)
    )


def _knob_bounds(key: str, knob):
    """The drawable range of a numeric knob: ``("int", lo, hi, log, default)`` or
    ``("float", lo, hi, log, t, inside)`` (``t`` the default clipped into the range, ``inside``
    the map that keeps a value inside the open or closed ends); see :func:`_knob_strategy`."""
    low, high, log, default = knob.low, knob.high, knob.log, knob.default
    x_low, x_high = knob.exclude_low and low is not None, knob.exclude_high and high is not None
    if knob.type is int:
        ilo = None if low is None else math.ceil(low) + (x_low and low == math.ceil(low))
        ihi = None if high is None else math.floor(high) - (x_high and high == math.floor(high))
        if log:
            lo_i = max(ilo if ilo is not None else 1, 1)
            hi_i = ihi if ihi is not None else max(lo_i, int(default)) * 10**_LOG_DECADES
        else:
            lo_i = (
                ilo
                if ilo is not None
                else min(ihi if ihi is not None else int(default), int(default)) - _INT_SPAN
            )
            hi_i = ihi if ihi is not None else max(lo_i + _INT_SPAN, int(default))
        return ("int", lo_i, hi_i, log, int(default))
    if log:
        anchor = float(default) if default > 0 else 1.0
        lo_ = float(low) if low is not None and low > 0 else anchor * 10.0**-_LOG_DECADES
        hi_ = float(high) if high is not None else max(lo_, anchor) * 10.0**_LOG_DECADES
    else:
        lo_ = (
            float(low)
            if low is not None
            else min(default, high if high is not None else default) - _FLOAT_SPAN
        )
        hi_ = float(high) if high is not None else max(default, lo_) + _FLOAT_SPAN
    x_lo, x_hi = x_low and lo_ == low, x_high and hi_ == high
    if lo_ > hi_ or (lo_ == hi_ and (x_lo or x_hi)):
        raise InvalidArgument(f"knob {key}: its declared range is empty")
    t = min(max(float(default), lo_), hi_)
    if (x_lo and t == lo_) or (x_hi and t == hi_):
        t = math.sqrt(lo_ * hi_) if log else (lo_ + hi_) / 2

    def inside(v):
        v = min(max(v, lo_), hi_)
        if x_lo and v <= lo_:
            v = float(np.nextafter(lo_, np.inf))
        if x_hi and v >= hi_:
            v = float(np.nextafter(hi_, -np.inf))
        return v

    return ("float", lo_, hi_, log, t, inside)


def _knob_strategy(key: str, knob) -> SearchStrategy:
    """Draw the knob from the range it declares: ``low``/``high`` (inclusive unless
    ``exclude_low``/``exclude_high``; an open end is closed as ``_INT_SPAN`` etc. say), on a log
    scale where ``log``; a knob with ``choices`` from its choices. Every draw shrinks to the knob's
    default (its nearest admissible value), so a failing case names only the knobs that matter."""
    if knob.choices:
        return st.sampled_from([knob.default] + [c for c in knob.choices if c != knob.default])
    if knob.type is bool:
        return st.booleans() if not knob.default else st.sampled_from([True, False])
    if knob.type not in (int, float):
        return st.just(knob.default)
    b = _knob_bounds(key, knob)
    if b[0] == "int":
        _, lo_i, hi_i, log, default = b
        return _int_knob(key, lo_i, hi_i, default, log)
    _, lo_, hi_, log, t, inside = b
    if log:
        return st.floats(math.log10(lo_) - math.log10(t), math.log10(hi_) - math.log10(t)).map(
            lambda e: inside(t * 10.0**e)
        )
    return st.floats(lo_ - t, hi_ - t).map(lambda u: inside(t + u))


#: the most values :func:`_within_requirements` tries for one knob when its default does not
#: repair a draw
_REPAIR_CANDIDATES = 512


def _knob_candidates(key: str, knob) -> list:
    """Values of the knob's drawable range to repair a draw with, nearest the default first
    (integers: every one up to ``_REPAIR_CANDIDATES``; floats: a grid of that many points)."""
    if knob.choices:
        return [knob.default] + [c for c in knob.choices if c != knob.default]
    if knob.type is bool:
        return [knob.default, not knob.default]
    if knob.type not in (int, float):
        return [knob.default]
    b = _knob_bounds(key, knob)
    if b[0] == "int":
        _, lo, hi, _log, t = b
        t = min(max(t, lo), hi)
        out, j = [t], 1
        while len(out) < _REPAIR_CANDIDATES and (t - j >= lo or t + j <= hi):
            out += [v for v in (t - j, t + j) if lo <= v <= hi]
            j += 1
        return out
    _, lo, hi, log, t, inside = b
    n = _REPAIR_CANDIDATES
    if log:
        grid = [inside(lo * (hi / lo) ** (i / (n - 1))) for i in range(n)]
        dist = [abs(math.log(v / t)) for v in grid]
    else:
        grid = [inside(lo + (hi - lo) * i / (n - 1)) for i in range(n)]
        dist = [abs(v - t) for v in grid]
    return [t] + [v for _, v in sorted(zip(dist, grid))]


def construction_knobs(name, **overrides) -> SearchStrategy[dict]:
    """Knobs for the registered construction ``name`` (a value or a strategy): each knob from
    ``overrides`` (a value or a strategy) or drawn from the range its :class:`Knob` declares.

    >>> from hypothesis import strategies as st
    >>> from approxtheory.constructions import build
    >>> knobs = minimal(construction_knobs("softmax_retrieval", T=st.integers(2, 4)))
    >>> knobs, build("softmax_retrieval", **knobs).claim
    ({'T': 2, 'beta': 100.0}, 'IF-T2')

    Unknown construction names, overrides for knobs the construction does not have, and override
    values the knob refuses raise InvalidArgument. A knob is drawn from the range it declares
    (``low``, ``high``, ``exclude_low``, ``exclude_high``, ``log``); an open end is closed here:
    integers low..low + 30 (low=2: 2..32), floats default ± 10, log scale two decades beyond the
    default (a low end of 0: default·10⁻²), each widened to hold the default. Every knob shrinks
    to its default, so a failing case differs from ``build(name)`` only in the knobs that matter.
    Constraints between knobs (the construction's :class:`~approxtheory.constructions.Requirement`
    s, say k < T // 2) hold in every draw: a draw that breaks one has the requirement's knobs
    that were not overridden set back to their defaults, one at a time, until it holds (the
    defaults are valid together); where the defaults do not fit the overrides (``h=3`` with ``D``
    defaulting to 4), one free knob takes the value nearest its default that keeps every
    requirement. Overrides given as values that no value of the free knobs' ranges fits
    (``softmax_retrieval`` with ``beta=0.001``: beta*T >= 1 needs T >= 1000, drawn from 1..31)
    raise InvalidArgument, naming the override, the requirement and the free knobs' ranges:
    when the strategy is built, or when first drawn where ``name`` is a strategy. Only a draw
    whose overrides were drawn from strategies (``T=st.integers(4, 9), k=st.integers(0, 4)``)
    is rejected where nothing repairs it. An override of None is the knob's default.

    >>> construction_knobs("softmax_retrieval", beta=0.001)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
      ...
    hypothesis.errors.InvalidArgument: softmax_retrieval: the override beta=0.001 breaks ...
    """
    drawn_name = isinstance(name, SearchStrategy)
    if not drawn_name:
        _check_knobs(name, overrides, values=True)
    return _construction_knobs(name, overrides, drawn_name)


@st.composite
def _construction_knobs(draw, name, overrides, drawn_name):
    name = draw(_s(name))
    # the override values are checked here where the name was drawn (else when built)
    _check_knobs(name, overrides, values=drawn_name)
    out = {}
    table = _knob_table(name)
    for k, knob in table.items():
        if k in overrides:
            v = draw(_s(overrides[k]))
            _coerce(k, knob, v)
            out[k] = knob.default if v is None else v  # None: the default, as in build
        else:
            out[k] = draw(_knob_strategy(k, knob))
    return _within_requirements(name, out, table, overrides)


def _within_requirements(name, knobs: dict, table: dict, overrides) -> dict:
    """``knobs`` with each broken requirement repaired (:func:`_repair`); the draw is rejected
    only when no value of the free knobs repairs it (drawn overrides that break it)."""
    from hypothesis import reject

    if _repair(knobs, table, set(overrides), _registry()[name].requires) is None:
        return knobs
    reject()


def _repair(knobs: dict, table: dict, frozen: set, requires) -> Requirement | None:
    """Repair ``knobs`` in place so that every requirement of ``requires`` holds, changing only
    knobs not in ``frozen`` (the overridden ones): first by resetting a broken requirement's
    knobs (in the order it names them) to their defaults; where the defaults do not repair it
    (an override or a drawn knob the defaults do not fit, e.g. ``h=3`` with ``D`` defaulting to
    4), by the value of one free knob of the requirement nearest its default
    (:func:`_knob_candidates`) for which every requirement that held still holds. Returns None
    when every requirement holds, else the first one still broken."""
    from .constructions._base import _coerce as coerce
    from .errors import ConfigError

    def first_broken():
        return next((r for r in requires if r.check(knobs)), None)

    for _ in range(len(table) + 1):  # each pass resets at least one knob, or all hold
        broken = first_broken()
        if broken is None:
            return None
        free = [k for k in broken.knob_names if k not in frozen and knobs[k] != table[k].default]
        if not free:
            break
        knobs[free[0]] = table[free[0]].default

    def repaired(r):  # a value of one free knob that makes r hold and breaks none that held
        held = [q for q in requires if q.check(knobs) is None]
        for k in (k for k in r.knob_names if k not in frozen):
            for v in _knob_candidates(k, table[k]):
                try:
                    coerce(k, table[k], v)
                except ConfigError:
                    continue
                trial = {**knobs, k: v}
                if r.check(trial) is None and all(q.check(trial) is None for q in held):
                    return k, v
        return None

    for _ in range(len(requires)):  # each pass makes one more requirement hold, or gives up
        broken = first_broken()
        if broken is None:
            return None
        fix = repaired(broken)
        if fix is None:
            break
        knobs[fix[0]] = fix[1]
    return first_broken()
