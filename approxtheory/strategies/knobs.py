"""Strategies for a registered construction's knobs, within its declared ranges and requirements."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument
from hypothesis.strategies import SearchStrategy

if TYPE_CHECKING:
    from ..constructions import Requirement
from .common import (
    _s,
)

# --- construction knobs --------------------------------------------------------------------------

# Ranges for knob ends declared open (None), chosen by the strategy so that builds stay small;
# each range is then widened to hold the knob's default, where draws shrink to:
_INT_SPAN = 30  # integers: low..low + 30 (low=2: 2..32); no low end: high - 30..high
_FLOAT_SPAN = 10.0  # floats: the default ± 10, clipped to the declared end
_LOG_DECADES = 2  # log scale: two decades beyond the default (β, default 100, low 1:
# 1..10⁴); a low end of 0 (a positive knob) becomes default·10⁻²


def _registry():
    from ..constructions import REGISTRY

    return REGISTRY


def _knob_table(name) -> dict:
    return _registry()[name].knobs


def _coerce(name: str, knob, value):
    """The construction package's own per-knob validation, as InvalidArgument."""
    from ..constructions._base import _coerce as coerce
    from ..errors import ConfigError

    try:
        return coerce(name, knob, value)
    except ConfigError as e:
        raise InvalidArgument(f"knob {e}") from None


def _check_knobs(name, overrides: dict, values: bool) -> None:
    reg = _registry()
    if not isinstance(name, str) or name not in reg:
        from ..errors import did_you_mean

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

    >>> from approxtheory.strategies import minimal
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
    from ..constructions._base import _coerce as coerce
    from ..errors import ConfigError

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
