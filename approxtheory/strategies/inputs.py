"""Strategies for retrieval inputs (by logit margin), max tasks and inverse temperatures."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument
from hypothesis.extra.numpy import arrays
from hypothesis.strategies import SearchStrategy

from ..tasks import MaxPlusMin, PairwiseMax, ScalarMax, SyntheticMaxSum

if TYPE_CHECKING:
    pass
from .common import (
    _KIND,
    _KINDS,
    _MAX_SIZE,
    _SEED_MAX,
    _SMALL,
    _T_RETRIEVAL,
    _T_TASK,
    _TINY,
    _bool,
    _elements,
    _int,
    _one_of,
    _real,
    _s,
    _values,
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


def _check_interval(v: dict, ok, allowed: str) -> None:
    """The plain ``min_value``/``max_value`` of ``v`` checked: each real and ``ok`` (else it
    ``must be {allowed}``), and in order."""
    for k in ("min_value", "max_value"):
        if k in v and not ok(_real(k, v[k])):
            raise InvalidArgument(f"{k} must be {allowed} (got {v[k]!r})")
    if "min_value" in v and "max_value" in v and v["min_value"] > v["max_value"]:
        raise InvalidArgument(
            f"min_value must be <= max_value (got min_value="
            f"{v['min_value']!r}, max_value={v['max_value']!r})"
        )


def _interval(min_value, max_value, ok, allowed: str, again, make) -> SearchStrategy[float]:
    """A strategy of floats between ``min_value`` and ``max_value`` (values or strategies, checked
    by :func:`_check_interval`): ``make(lo, hi)`` once both are values, else ``again`` (the
    public strategy) on the drawn pair."""
    v = _values(min_value=min_value, max_value=max_value)
    _check_interval(v, ok, allowed)
    if len(v) < 2:
        return st.tuples(_s(min_value), _s(max_value)).flatmap(lambda b: again(*b))
    return make(float(min_value), float(max_value))


def margins(min_value=0.0, max_value=0.5) -> SearchStrategy[float]:
    """Margins in ``[min_value, max_value]`` (0 <= min_value <= max_value, finite) that shrink to
    ``min_value`` exactly — the nearest admissible tie — where ``st.floats(a, b)`` shrinks to the
    float Hypothesis finds simplest (an integer, 0.0625, ...), not to ``a``.

    >>> from approxtheory.strategies import minimal
    >>> from hypothesis import strategies as st
    >>> small = lambda m: m < 0.1
    >>> minimal(margins(0.01, 0.5), small), minimal(st.floats(0.01, 0.5), small)
    (0.01, 0.0625)
    """
    return _interval(
        min_value,
        max_value,
        lambda x: not x < 0,
        ">= 0: a margin is a gap",
        margins,
        lambda lo, hi: st.floats(0.0, hi - lo).map(lambda u: min(lo + u, hi)),
    )


def retrieval_inputs(
    T=_T_RETRIEVAL, margin=None, d=1, lo=0.0, hi=1.0, minimum=False, position=None
) -> SearchStrategy[np.ndarray]:
    """An input ``(T, d)`` in ``[lo, hi]`` whose first coordinate has its largest value (smallest
    if ``minimum``) at ``position`` exceeding (below) every other by at least ``margin`` — the
    score margin before scaling by β.

    >>> from approxtheory.strategies import minimal
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

    >>> from approxtheory.strategies import minimal
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


def betas(min_value=1.0, max_value=1e6) -> SearchStrategy[float]:
    """Inverse temperatures β in ``[min_value, max_value]`` (0 < min_value <= max_value, finite),
    uniform on a log scale; β shrinks to ``min_value`` (the softest softmax, its largest error).

    >>> from approxtheory.strategies import minimal
    >>> minimal(betas(10, 1e3)), minimal(betas(0.1, 10), lambda b: b > 5)
    (10.0, 10.0)
    """
    return _interval(
        min_value,
        max_value,
        lambda x: x > 0,
        "positive: inverse temperatures are drawn on a log scale",
        betas,
        lambda lo, hi: st.floats(0.0, math.log10(hi) - math.log10(lo)).map(
            lambda e: float(min(max(lo * 10.0**e, lo), hi))
        ),
    )
