"""The strategies' shared limits and drawn defaults, their argument checks and :func:`minimal`."""

from __future__ import annotations

import math
from numbers import Integral, Real
from typing import TYPE_CHECKING

import numpy as np
from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument
from hypothesis.strategies import SearchStrategy

from ..model import ModelConfig

if TYPE_CHECKING:
    pass


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

    >>> from approxtheory.strategies import minimal, betas
    >>> minimal(betas(10, 1e3))
    10.0
    """
    from hypothesis import find, settings

    return find(
        strategy,
        condition,
        settings=settings(database=None, max_examples=max_examples, deadline=None),
    )
