"""Rate tests: power-law fits with calibrated intervals, rate assertions and cached measurements.

A rate test measures an error on a grid of a knob (β, 1/ε, T, ...), fits ``log error = a + p ·
log size`` and asserts something about the exponent ``p`` at a confidence level::

    >>> from approxtheory.testing import assert_rate
    >>> betas = [10.0, 100.0, 1000.0, 10000.0]
    >>> fit = assert_rate(betas, [0.6 / b for b in betas], at_most=-1 + 0.05, over="beta")
    >>> round(fit.slope, 3), fit.level
    (-1.0, 0.95)
    >>> assert_rate(betas, [0.50, 0.45, 0.51, 0.47], at_most=-1, over="beta")
    Traceback (most recent call last):
      ...
    approxtheory.testing.RateAssertionError: error ~ beta^-0.003, 95% interval [-0.061, +0.056] ...

**The interval** (:func:`fit_power_law`) is the Student-t interval of the least-squares slope on
log-log axes with the residual variance (``n - 2`` degrees of freedom): exact when the
log-errors are a power law plus independent Gaussian noise, whatever the number of points, so
its coverage is right by construction (a residual bootstrap of three or four points is not: it
cannot see the noise it resamples). Measurements that are an exact power law (a deterministic
construction) give an interval as narrow as float64 round-off.

**Floors** break every power-law fit: an error that levels off at the small-error end (round-off,
a mis-set weight, a search that stops improving) biases the slope towards 0, and no interval
built from the line covers the rate underneath. :func:`fit_power_law` therefore also fits
``log(C · size^p + F)`` with a floor ``F >= 0`` and tests it against the line (an F-test, one
parameter, ``n - 3`` degrees of freedom, so at least four points); a floor that is significant
(at ``floor_alpha``, 5 %) *and* consequential (its exponent lies outside the line's interval)
makes the fit undecidable: :func:`assert_rate` refuses it with :class:`RateUndecidedError`
instead of reporting a wrong exponent.

**Calibration** (:func:`calibrate`): over seeded synthetic grids with known exponents,
multiplicative noise and floors (:func:`synthetic_case`) the interval covers the true exponent
in about 95 % of the decided cases at ``confidence=0.95``; ``tests/test_testing.py`` holds it
within 0.93-0.97.

**Cached measurements** (:class:`Measured`, the ``measured`` fixture of the pytest plugin
:mod:`approxtheory.pytest_plugin`): ``sup_error`` and ``nmse`` results stored on disk under a key
of the model's weights, the task, the search settings and the code (as ``verify``'s cache), so
that an unchanged rate test measures nothing on its second run. A registered construction is
keyed by its name and knobs instead of its weights (:meth:`Measured.sup_error_of`, the weights
are a function of them and of the fingerprinted code), and what a rate test reads from the
catalogue and the constructions (:meth:`Measured.admissible`, :meth:`Measured.assert_claim_rate`)
is cached the same way: a second run reads JSON and loads neither torch nor sympy (this module
imports numpy alone; torch, sympy and the catalogue load where a miss needs them).
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from numbers import Integral, Real
from pathlib import Path
from typing import Any

import numpy as np

from .errors import ApproxTheoryError, ConfigError, InvalidValueError

__all__ = [
    "PowerLawFit",
    "fit_power_law",
    "assert_rate",
    "assert_claim_rate",
    "RateAssertionError",
    "RateUndecidedError",
    "Calibration",
    "calibrate",
    "synthetic_case",
    "Measured",
    "model_digest",
    "task_digest",
    "short_repr",
    "PROFILES",
    "FLOOR_ALPHA",
]

#: the significance level of the floor test (a floor must also be consequential to refuse a fit)
FLOOR_ALPHA = 0.05
#: residuals (in log units) below this are float64 round-off of an exact power law: the floor
#: test is skipped and the interval is widened to this relative slack
_ROUNDOFF = 1e-9
#: the floor levels tried (fractions of the smallest error) before the exact residual is taken
_FLOOR_GRID = np.concatenate([np.geomspace(1e-4, 0.5, 24), 1.0 - np.geomspace(0.5, 1e-4, 24)[1:]])

#: search budget of ``measured.sup_error`` and the grid size of generated tests, per profile
#: (``quick`` matches ``verify``'s quick profile)
PROFILES = {"quick": {"budget": 256, "points": 5}, "full": {"budget": 1024, "points": 9}}


class RateAssertionError(AssertionError):
    """The measured rate contradicts the asserted one at the stated confidence. ``fit`` is the
    :class:`PowerLawFit`; the message gives the fitted exponent, its interval, what it had to
    exclude and the worst point."""

    def __init__(self, message: str, fit: PowerLawFit | None = None):
        super().__init__(message)
        self.fit = fit


class RateUndecidedError(InvalidValueError):
    """The measurements cannot decide the asserted rate: too few points, a non-finite or zero
    error, an error floor, or an interval that straddles the bound. ``reason`` is one of
    ``too-few-points``, ``nonfinite``, ``zero``, ``one-size``, ``floor``, ``wide``; ``fit`` the
    :class:`PowerLawFit` where one was made."""

    def __init__(self, message: str, reason: str, fit: PowerLawFit | None = None):
        super().__init__(message)
        self.reason = reason
        self.fit = fit


# ------------------------------------------------------------------------------- validation
def _is_number(v) -> bool:
    return isinstance(v, Real) and not isinstance(v, (bool, np.bool_))


def _real(name: str, v, *, finite: bool = True) -> float:
    if not _is_number(v):
        raise InvalidValueError(f"{name} must be a real number (got {v!r})")
    x = float(v)
    if finite and not math.isfinite(x):
        raise InvalidValueError(f"{name} must be finite (got {v!r})")
    return x


def _confidence(v) -> float:
    if not _is_number(v) or not (0.0 < float(v) < 1.0):
        raise InvalidValueError(f"confidence must be a number in (0, 1), e.g. 0.95 (got {v!r})")
    return float(v)


def _series(name: str, values) -> np.ndarray:
    """``values`` as a 1-D float64 array of numbers (strings, booleans and nested lists refused;
    nothing is parsed)."""
    if isinstance(values, (str, bytes, Mapping)) or values is None:
        raise InvalidValueError(
            f"{name} must be a sequence of numbers (got {type(values).__name__})"
        )
    if isinstance(values, np.ndarray):
        arr = values
        if arr.dtype.kind not in "iuf":
            raise InvalidValueError(
                f"{name} must hold real numbers (got an array of dtype {arr.dtype})"
            )
    else:
        try:
            items = list(values)
        except TypeError:
            raise InvalidValueError(
                f"{name} must be a sequence of numbers (got {type(values).__name__})"
            ) from None
        for i, v in enumerate(items):
            if isinstance(v, np.ndarray) and v.ndim == 0 and v.dtype.kind in "iuf":
                continue
            if not _is_number(v):
                raise InvalidValueError(f"{name}[{i}] must be a real number (got {v!r})")
        arr = np.array([float(v) for v in items], dtype=np.float64)
    if arr.ndim != 1:
        raise InvalidValueError(f"{name} must be 1-D (got shape {arr.shape})")
    return arr.astype(np.float64)


def _checked(sizes, errors, over: str, what: str) -> tuple[np.ndarray, np.ndarray]:
    x = _series("sizes", sizes)
    y = _series("errors", errors)
    if len(x) != len(y):
        raise InvalidValueError(
            f"sizes and errors must have the same length (got {len(x)} sizes and {len(y)} errors)"
        )
    if len(x) < 3:
        raise RateUndecidedError(
            f"a rate needs at least 3 sizes (got {len(x)}); allowed: 3 or more (4 or more to "
            f"tell a rate from an error floor)",
            "too-few-points",
        )
    bad = np.flatnonzero(~np.isfinite(x))
    if bad.size:
        i = int(bad[0])
        raise InvalidValueError(f"sizes must be finite (got sizes[{i}] = {x[i]})")
    bad = np.flatnonzero(x <= 0)
    if bad.size:
        i = int(bad[0])
        raise InvalidValueError(f"sizes must be > 0 for a log-log fit (got sizes[{i}] = {x[i]:g})")
    bad = np.flatnonzero(~np.isfinite(y))
    if bad.size:
        i = int(bad[0])
        raise RateUndecidedError(
            f"{what}s[{i}] is {y[i]} (at {over}={x[i]:g}): a NaN or infinite {what} is a failure "
            f"of what was measured, never a point of a rate; allowed: finite {what}s > 0",
            "nonfinite",
        )
    bad = np.flatnonzero(y < 0)
    if bad.size:
        i = int(bad[0])
        raise InvalidValueError(
            f"{what}s must be >= 0 (got {what}s[{i}] = {y[i]:g} at {over}={x[i]:g})"
        )
    bad = np.flatnonzero(y == 0)
    if bad.size:
        i = int(bad[0])
        raise RateUndecidedError(
            f"{what}s[{i}] is exactly 0 (at {over}={x[i]:g}): an exact zero has no rate on "
            f"log-log axes; allowed: {what}s > 0 (assert exactness separately)",
            "zero",
        )
    if np.unique(x).size < 2:
        raise RateUndecidedError(
            f"all sizes are equal ({over}={x[0]:g}): a rate needs at least 2 distinct sizes",
            "one-size",
        )
    return x, y


# ------------------------------------------------------------------------------- the fitter
@functools.lru_cache(maxsize=256)
def _t_quantile(df: int, confidence: float) -> float:
    from scipy.special import stdtrit

    return float(stdtrit(df, 0.5 + confidence / 2))


def _f_sf(stat: float, dfd: int) -> float:
    from scipy.special import fdtrc

    return float(fdtrc(1, dfd, stat))


@dataclass
class PowerLawFit:
    """``log error = intercept + slope · log size`` with the Student-t interval of the slope
    (``ci_low``, ``ci_high`` at ``level``), and the floor test.

    Its first six fields and :meth:`contains` are those of
    :class:`approxtheory.measure.RateFit` (the bootstrap fit); it is defined here without that
    module so that a rate test whose measurements come from the cache loads no torch.

    ``se`` is the slope's standard error, ``df`` its degrees of freedom (n - 2), ``residual_sd``
    the residuals' standard deviation in log units. ``floor_p`` is the p-value of the floor
    model against the line (None where it cannot be tested: fewer than 4 points or 3 distinct
    sizes, or an exact power law), ``floor_exponent`` and ``floor_level`` the floor model's
    exponent and floor ``F``; ``floor`` says that the floor is significant and consequential
    (the fit is then undecidable). ``sizes`` and ``errors`` are the data fitted."""

    slope: float
    intercept: float
    ci_low: float
    ci_high: float
    level: float
    n_points: int
    se: float = 0.0
    df: int = 1
    residual_sd: float = 0.0
    floor_p: float | None = None
    floor_exponent: float | None = None
    floor_level: float | None = None
    floor: bool = False
    sizes: tuple = ()
    errors: tuple = ()

    def contains(self, value: float) -> bool:
        """Whether ``value`` lies in the interval (up to float64 round-off, 1e-9 relative)."""
        slack = 1e-9 * max(1.0, abs(value))
        return self.ci_low - slack <= value <= self.ci_high + slack

    def to_dict(self) -> dict:
        d = dict(self.__dict__)
        d["sizes"], d["errors"] = list(self.sizes), list(self.errors)
        return d

    def __repr__(self) -> str:
        return short_repr(self)


def _line(lx: np.ndarray, ly: np.ndarray) -> tuple[float, float, np.ndarray]:
    """Least squares ``ly = a + b·lx``: (b, a, residuals)."""
    xm = lx.mean()
    z = lx - xm
    b = float((z * (ly - ly.mean())).sum() / (z * z).sum())
    a = float(ly.mean() - b * xm)
    return b, a, ly - a - b * lx


def _floor_model(lx: np.ndarray, ly: np.ndarray) -> tuple[float, float, float]:
    """The best fit of ``log(C·size^p + F)`` over a grid of floors ``F`` below the smallest
    error: (residual sum of squares, p, F). For each F the line through ``log(error - F)`` is
    fitted with the delta-method weights ``((error - F)/error)²``, and the *exact* log-space
    residual of that model (with its best overall scale) is what is returned, so the RSS is
    attained by a member of the model (the test built on it is conservative)."""
    top = float(ly.max())
    y = ly - top
    e = np.exp(y)
    F = (_FLOOR_GRID * e.min())[:, None]
    w = ((e - F) / e) ** 2
    yy = np.log(e - F)
    W = w.sum(1, keepdims=True)
    xm = (w * lx).sum(1, keepdims=True) / W
    ym = (w * yy).sum(1, keepdims=True) / W
    sxx = (w * (lx - xm) ** 2).sum(1, keepdims=True)
    bb = (w * (lx - xm) * (yy - ym)).sum(1, keepdims=True) / sxx
    aa = ym - bb * xm
    pred = np.logaddexp(aa + bb * lx, np.log(F))
    shift = (y - pred).mean(1, keepdims=True)
    rss = ((y - pred - shift) ** 2).sum(1)
    rss = np.where(np.isfinite(rss), rss, np.inf)
    j = int(np.argmin(rss))
    return float(rss[j]), float(bb[j, 0]), float(F[j, 0] * math.exp(top + shift[j, 0]))


def fit_power_law(
    sizes: Sequence[float],
    errors: Sequence[float],
    *,
    confidence: float = 0.95,
    floor_alpha: float = FLOOR_ALPHA,
    over: str = "size",
    what: str = "error",
) -> PowerLawFit:
    """Fit ``errors ~ C · sizes^slope`` on log-log axes: the least-squares slope, its Student-t
    interval at ``confidence`` (residual variance, ``n - 2`` degrees of freedom) and the floor
    test (see the module docstring).

    Refuses, before fitting, what no fit can use: sizes and errors of different lengths, fewer
    than 3 points, non-positive or non-finite sizes, negative errors (:class:`InvalidValueError`),
    NaN, infinite or zero errors and a single distinct size (:class:`RateUndecidedError`), a
    confidence outside (0, 1). ``over`` and ``what`` name the size and the error in messages.

    >>> fit = fit_power_law([1, 10, 100, 1000], [2.0, 0.21, 0.019, 0.0022])
    >>> round(fit.slope, 2), round(fit.ci_low, 2), round(fit.ci_high, 2), fit.floor
    (-0.99, -1.05, -0.93, False)
    """
    confidence = _confidence(confidence)
    if not _is_number(floor_alpha) or not (0.0 < float(floor_alpha) < 1.0):
        raise InvalidValueError(f"floor_alpha must be a number in (0, 1) (got {floor_alpha!r})")
    x, y = _checked(sizes, errors, over, what)
    lx, ly = np.log(x), np.log(y)
    n = len(x)
    b, a, r = _line(lx, ly)
    df = n - 2
    rss = float((r * r).sum())
    sxx = float(((lx - lx.mean()) ** 2).sum())
    se = math.sqrt(rss / df / sxx)
    half = _t_quantile(df, confidence) * se
    exact = math.sqrt(rss / n) < _ROUNDOFF
    half = max(half, _ROUNDOFF * max(1.0, abs(b)))
    lo, hi = b - half, b + half
    floor_p = floor_exp = floor_level = None
    floor = False
    if n >= 4 and np.unique(x).size >= 3 and not exact:
        rss_f, floor_exp, floor_level = _floor_model(lx, ly)
        if rss_f < rss:
            stat = (rss - rss_f) / (rss_f / (n - 3)) if rss_f > 0 else math.inf
            floor_p = 0.0 if math.isinf(stat) else _f_sf(stat, n - 3)
        else:
            floor_p = 1.0
        floor = bool(
            floor_p < float(floor_alpha)
            and not (lo <= floor_exp <= hi)
            and abs(floor_exp - b) > 1e-3 * max(1.0, abs(b))
        )
    return PowerLawFit(
        slope=b,
        intercept=a,
        ci_low=lo,
        ci_high=hi,
        level=confidence,
        n_points=n,
        se=se,
        df=df,
        residual_sd=math.sqrt(rss / df),
        floor_p=floor_p,
        floor_exponent=floor_exp,
        floor_level=floor_level,
        floor=floor,
        sizes=tuple(float(v) for v in x),
        errors=tuple(float(v) for v in y),
    )


# ------------------------------------------------------------------------------- assertions
def _e(p: float) -> str:
    return f"{p:+.3f}"


def _worst(fit: PowerLawFit, slope: float, side: str) -> tuple[int, float]:
    """The point farthest on the wrong side of the line of ``slope`` through the data (least
    squares intercept): (index, ratio error / line). ``side`` is ``above`` (a slower decay is
    wrong), ``below`` or ``both``."""
    lx, ly = np.log(np.array(fit.sizes)), np.log(np.array(fit.errors))
    r = ly - (ly - slope * lx).mean() - slope * lx
    i = int(np.argmax(r if side == "above" else -r if side == "below" else np.abs(r)))
    return i, float(math.exp(r[i]))


def _range(fit: PowerLawFit, over: str) -> str:
    return f"{fit.n_points} points, {over} {min(fit.sizes):g}..{max(fit.sizes):g}"


def _fitted(fit: PowerLawFit, over: str, what: str) -> str:
    pct = f"{100 * fit.level:g}%"
    return (
        f"{what} ~ {over}^{_e(fit.slope)}, {pct} interval [{_e(fit.ci_low)}, "
        f"{_e(fit.ci_high)}] ({_range(fit, over)})"
    )


def _floor_message(fit: PowerLawFit, over: str, what: str, prefix: str) -> str:
    assert fit.floor_exponent is not None and fit.floor_level is not None
    return (
        f"{prefix}cannot decide the rate: the {what}s flatten towards the small-{what} end, "
        f"an {what} floor near {fit.floor_level:.3g} (floor test p = {fit.floor_p:.2g}); the "
        f"line {over}^{_e(fit.slope)} [{_e(fit.ci_low)}, {_e(fit.ci_high)}] "
        f"({_range(fit, over)}) does not describe the rate under it ({over}^"
        f"{_e(fit.floor_exponent)} with the floor). Measure where the {what} is above the "
        f"floor, or find what sets it"
    )


def assert_rate(
    sizes: Sequence[float],
    errors: Sequence[float],
    *,
    exponent: float | None = None,
    at_most: float | None = None,
    at_least: float | None = None,
    tol: float = 0.0,
    confidence: float = 0.95,
    over: str = "size",
    what: str = "error",
    _prefix: str = "",
    _claim_note: str = "",
) -> PowerLawFit:
    """Assert the exponent of ``errors ~ sizes^p`` at ``confidence``; returns the fit.

    Exactly one of:

    * ``at_most=k``: the errors decay at least as fast as ``size^k`` (an upper bound's rate):
      the whole interval of ``p`` must lie at or below ``k + tol``;
    * ``at_least=k``: they decay no faster than ``size^k`` (a lower bound's rate): the whole
      interval at or above ``k - tol``;
    * ``exponent=k``: the rate is ``k``: the interval, widened by ``tol``, must contain it.

    A one-sided assertion whose interval lies wholly on the wrong side fails with
    :class:`RateAssertionError` (a compact message: the fitted exponent, its interval, what it
    had to exclude and the worst point); one whose interval straddles the bound, or whose
    errors show a floor, cannot decide and raises :class:`RateUndecidedError` (bad input too,
    see :func:`fit_power_law`). ``over`` and ``what`` name the size and the error in messages.
    """
    bounds = {"exponent": exponent, "at_most": at_most, "at_least": at_least}
    given = {k: v for k, v in bounds.items() if v is not None}
    if len(given) != 1:
        raise InvalidValueError(
            "assert_rate needs exactly one of exponent=, at_most= or at_least= (got "
            f"{', '.join(given) or 'none'})"
        )
    ((kind, k),) = given.items()
    k = _real(kind, k)
    tol = _real("tol", tol)
    if tol < 0:
        raise InvalidValueError(f"tol must be >= 0 (got {tol!r})")
    fit = fit_power_law(sizes, errors, confidence=confidence, over=over, what=what)
    if fit.floor:
        raise RateUndecidedError(_floor_message(fit, over, what, _prefix), "floor", fit)
    slack = 1e-9 * max(1.0, abs(k))
    lo, hi = fit.ci_low, fit.ci_high
    if kind == "exponent":
        if lo - tol - slack <= k <= hi + tol + slack:
            return fit
        i, ratio = _worst(fit, k, "both")
        need = (
            f"needed: the interval to contain {_e(k)}"
            + (f" within tol {tol:.3g}" if tol else "")
            + f", but it excludes it{_claim_note}"
        )
    else:
        bound = k + tol if kind == "at_most" else k - tol
        ok = hi <= bound + slack if kind == "at_most" else lo >= bound - slack
        if ok:
            return fit
        wrong = lo > bound + slack if kind == "at_most" else hi < bound - slack
        side = "at or below" if kind == "at_most" else "at or above"
        excluded = "above" if kind == "at_most" else "below"
        limit = f"{_e(bound)}" + (
            f" (= {_e(k)} + tol {tol:.3g})" if tol and kind == "at_most" else ""
        )
        if tol and kind == "at_least":
            limit = f"{_e(bound)} (= {_e(k)} - tol {tol:.3g})"
        if not wrong:
            raise RateUndecidedError(
                f"{_prefix}cannot decide the rate: {_fitted(fit, over, what)} straddles "
                f"{_e(bound)}; needed: the interval {side} {limit}{_claim_note}. Measure more "
                f"sizes, over a wider range, or with less noise",
                "wide",
                fit,
            )
        i, ratio = _worst(fit, bound, "above" if kind == "at_most" else "below")
        need = (
            f"needed: the interval {side} {limit}, excluding every exponent {excluded} it"
            f"{_claim_note}"
        )
        k = bound
    where = "above" if ratio >= 1 else "below"
    factor = ratio if ratio >= 1 else 1 / ratio
    raise RateAssertionError(
        f"{_prefix}{_fitted(fit, over, what)}\n  {need}\n  worst point: {over}="
        f"{fit.sizes[i]:g}, {what}={fit.errors[i]:.4g}, {factor:.3g}x {where} the "
        f"{over}^{_e(k)} line through the data",
        fit,
    )


def _bound_slope(c, expr: str | None, over: str, sizes: np.ndarray, values: dict) -> float:
    """The claimed expression's own log-log slope over the grid (least squares)."""
    bound = np.array(
        [c.evaluate_float(expr, **{**values, over: float(s)}) for s in sizes], dtype=np.float64
    )
    if not (np.isfinite(bound).all() and (bound > 0).all()):
        raise InvalidValueError(
            f"{c.id}: {c.expr_name(expr)} is not finite and positive on the grid "
            f"({over} {sizes.min():g}..{sizes.max():g}); pass tol= explicitly"
        )
    return _line(np.log(sizes), np.log(bound))[0]


#: (claim id, id of the Claim object, symbol, expression, point) -> (the Claim, its exponent
#: with the other symbols left free): sympy's limit costs about a second, and a rate test asks
#: for it at every drawn case (the Claim is kept so that its id is not reused)
_SYMBOLIC_EXPONENTS: dict[tuple, tuple[Any, Any]] = {}


def _asymptotic_exponent(c, sym: str, expr, at, at_zero: bool, values: dict) -> float:
    """``c.asymptotic_exponent(sym, expr, at, **values)`` as a float, computed once per claim
    with the other symbols left free and substituted here; where the free form has no finite
    value at ``values``, or disagrees with the expression's own log-log slope far out (beyond
    the share a slowly varying factor can take, a special value such as a vanishing term), the
    exact limit at ``values`` is computed instead."""
    import sympy as sp

    from .catalogue._claim import substitute

    key = (c.id, id(c), sym, expr, str(at))
    if key not in _SYMBOLIC_EXPONENTS:
        try:
            free = c.asymptotic_exponent(sym, expr, at)
        except ApproxTheoryError:
            free = None
        _SYMBOLIC_EXPONENTS[key] = (c, free)
    free = _SYMBOLIC_EXPONENTS[key][1]
    if free is not None:
        try:
            v = substitute(free, {c.symbol(k): sp.sympify(float(x)) for k, x in values.items()})
            p = float(v) if v.is_number else math.nan
            far = (1e-12, 1e-13) if at_zero else (1e12, 1e13)
            e1, e2 = (c.evaluate_float(expr, **{**values, sym: x}) for x in far)
            slope = math.log(e2 / e1) / math.log(far[1] / far[0])
            if math.isfinite(p) and abs(slope - p) <= 0.05:
                return p
        except (ApproxTheoryError, TypeError, ValueError, ZeroDivisionError, OverflowError):
            pass
    return float(c.asymptotic_exponent(sym, expr, at, **values))


def assert_claim_rate(
    claim_id: str,
    sizes: Sequence[float],
    errors: Sequence[float],
    *,
    over: str,
    values: Mapping[str, Any] | None = None,
    expr: str | None = None,
    at: Any = "oo",
    tol: float | None = None,
    confidence: float = 0.95,
    what: str = "error",
    kind: str | None = None,
) -> PowerLawFit:
    """Assert that measured ``errors`` over ``sizes`` of the symbol ``over`` follow the rate the
    catalogue states for ``claim_id``: the asymptotic exponent ``p`` of its expression (``expr``,
    the primary one by default) in ``over`` as ``over -> at`` (∞ by default; ``at=0`` for a
    precision ε), at ``values`` of its other symbols.

    The claim's kind (or ``kind``, the kind of bound the expression is, e.g. a construction's
    ``bound_kind``) sets the side: an upper bound's errors must decay at least as fast
    (``at_most=p`` as ``over -> ∞``, ``at_least=p`` as ``over -> 0``), a lower bound's no faster,
    any other kind at the rate (``exponent=p``). ``tol`` defaults to the share of the
    expression's slowly varying factor over the grid: its own log-log slope there minus ``p``
    (``ln(βT)`` for IF-T2), as ``verify``'s rate criterion; this needs values for all its
    symbols. Every grid point must lie in the claim's regime
    (:class:`~approxtheory.errors.RegimeError`).

    >>> betas = [10.0, 100.0, 1000.0, 10000.0]
    >>> fit = assert_claim_rate("IF-T2", betas, [0.06 / b for b in betas], over="beta",
    ...                         values={"T": 4})
    >>> round(fit.slope, 3)
    -1.0
    """
    terms = _claim_rate_terms(claim_id, sizes, errors, over, values, expr, at, tol, kind, what)
    return _assert_claim_terms(terms, sizes, errors, confidence, what)


def _claim_rate_terms(claim_id, sizes, errors, over, values, expr, at, tol, kind, what) -> dict:
    """What :func:`assert_claim_rate` reads from the catalogue, as plain values: the side
    (``at_most``, ``at_least`` or ``exponent``), the exponent, ``tol``, the symbol, the message
    prefix and note, and the regime error where a size lies outside the claim's regime (a
    deterministic function of the arguments and the catalogue's code: :class:`Measured` caches
    it, keyed without ``errors``: they are only checked here, as :func:`assert_rate` checks
    them). Bad arguments raise here."""
    from .catalogue import claim

    if not isinstance(claim_id, str):
        raise InvalidValueError(f"claim_id must be a claim id string (got {claim_id!r})")
    c = claim(claim_id)
    if not isinstance(over, str):
        raise InvalidValueError(f"over must be a symbol name (got {over!r})")
    sym = c.symbol(over).name
    vals = dict(values or {})
    if any(c.symbol(name).name == sym for name in vals):
        raise InvalidValueError(
            f"{c.id}: values= must not give {sym}, the symbol the rate is measured over"
        )
    if kind is None:
        kind = c.kind
    elif not isinstance(kind, str):
        raise InvalidValueError(f"kind must be a string such as upper or lower (got {kind!r})")
    x, _ = _checked(sizes, errors, sym, what)
    for s in x:
        if not c.in_regime(**{**vals, sym: float(s)}):
            conds = "; ".join(cond.text() for cond in c.regime)
            return {
                "symbol": sym,
                "regime_error": f"{c.id}: {sym}={s:g} lies outside the claim's regime "
                f"({conds}); allowed: sizes where it applies",
            }
    at_zero = str(at).strip() in ("0", "0.0") or (_is_number(at) and float(at) == 0.0)
    p = _asymptotic_exponent(c, sym, expr, at, at_zero, vals)
    if not math.isfinite(p):
        raise InvalidValueError(f"{c.id}: the asymptotic exponent in {sym} is {p}: no rate")
    if tol is None:
        own = _bound_slope(c, expr, sym, x, vals)
        if kind == "upper":
            tol = max(0.0, own - p) if not at_zero else max(0.0, p - own)
        elif kind == "lower":
            tol = max(0.0, p - own) if not at_zero else max(0.0, own - p)
        else:
            tol = abs(own - p)
    else:
        tol = _real("tol", tol)  # as assert_rate refuses it
    name = c.expr_name(expr)
    if kind == "upper":
        side = "at_least" if at_zero else "at_most"
        note = f" ({c.id}'s upper bound {name} ~ {sym}^{_e(p)})"
    elif kind == "lower":
        side = "at_most" if at_zero else "at_least"
        note = f" ({c.id}'s lower bound {name} ~ {sym}^{_e(p)})"
    else:
        side = "exponent"
        note = f" ({c.id}'s {name} ~ {sym}^{_e(p)})"
    return {
        "regime_error": None,
        "side": side,
        "exponent": float(p),
        "tol": float(tol),
        "symbol": sym,
        "prefix": f"{c.id}: ",
        "note": note,
    }


def _assert_claim_terms(terms: dict, sizes, errors, confidence, what) -> PowerLawFit:
    from .errors import RegimeError

    _checked(sizes, errors, terms["symbol"], what)  # as assert_claim_rate checks them
    if terms["regime_error"] is not None:
        raise RegimeError(terms["regime_error"])
    return assert_rate(
        sizes,
        errors,
        **{terms["side"]: terms["exponent"]},
        tol=terms["tol"],
        confidence=confidence,
        over=terms["symbol"],
        what=what,
        _prefix=terms["prefix"],
        _claim_note=terms["note"],
    )


# ------------------------------------------------------------------------------- calibration
#: the synthetic family of :func:`synthetic_case`
SYNTHETIC: dict[str, Any] = {
    "points": (3, 4, 5, 6, 8, 10, 12),
    "decades": (2.0, 4.0),
    "exponent": (0.5, 3.0),
    "noise": (0.0, 0.01, 0.03, 0.1),
    "floor_share": 0.5,
    "floor_decades": (-3.0, 2.0),
}


def synthetic_case(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, float, dict]:
    """One synthetic rate measurement with a known exponent: (sizes, errors, exponent, info).

    ``n`` sizes (3 to 12) log-spaced over 2 to 4 decades; the exponent ``p`` uniform in
    ±[0.5, 3]; errors ``(C · size^p + F) · exp(σ Z)`` with σ in {0, 1 %, 3 %, 10 %} and, in
    half of the cases, a floor ``F`` from 10⁻³ to 10² times the smallest noiseless error (at
    most a tenth of the largest: the rate is visible at the large-error end)."""
    s = SYNTHETIC
    n = int(rng.choice(s["points"]))
    sizes = 10 ** rng.uniform(0, 2) * np.logspace(0, rng.uniform(*s["decades"]), n)
    p = float(rng.uniform(*s["exponent"]) * rng.choice([-1.0, 1.0]))
    sigma = float(rng.choice(s["noise"]))
    pure = 10 ** rng.uniform(-2, 2) * sizes**p
    has_floor = bool(rng.random() < s["floor_share"])
    F = 0.0
    if has_floor:
        F = min(10 ** rng.uniform(*s["floor_decades"]) * pure.min(), pure.max() / 10)
    errors = (pure + F) * np.exp(sigma * rng.standard_normal(n))
    return sizes, errors, p, {"n": n, "noise": sigma, "floor": F, "has_floor": has_floor}


@dataclass(frozen=True)
class Calibration:
    """The outcome of :func:`calibrate`: ``coverage`` is the share of decided cases whose
    interval holds the true exponent; ``by_kind`` the same for the cases without a floor
    (``power law``) and with one (``floor``): (cases, refused, covered)."""

    confidence: float
    n_cases: int
    n_decided: int
    n_covered: int
    n_refused: int
    by_kind: dict = field(default_factory=dict)

    @property
    def coverage(self) -> float:
        return self.n_covered / self.n_decided if self.n_decided else math.nan


def calibrate(n_cases: int = 4000, *, confidence: float = 0.95, seed: int = 0) -> Calibration:
    """The interval's coverage over ``n_cases`` seeded :func:`synthetic_case` s: each is fitted
    by :func:`fit_power_law`; a fit the floor test refuses is counted as refused, the others as
    covered when ``ci_low <= exponent <= ci_high``. Deterministic for a seed (a local
    generator; the global numpy state is not touched)."""
    if isinstance(n_cases, bool) or not isinstance(n_cases, Integral) or n_cases < 1:
        raise InvalidValueError(f"n_cases must be a positive integer (got {n_cases!r})")
    if isinstance(seed, bool) or not isinstance(seed, Integral) or seed < 0:
        raise InvalidValueError(f"seed must be an integer >= 0 (got {seed!r})")
    confidence = _confidence(confidence)
    rng = np.random.default_rng(seed)
    counts = {"power law": [0, 0, 0], "floor": [0, 0, 0]}
    for _ in range(int(n_cases)):
        sizes, errors, p, info = synthetic_case(rng)
        fit = fit_power_law(sizes, errors, confidence=confidence)
        row = counts["floor" if info["has_floor"] else "power law"]
        row[0] += 1
        if fit.floor:
            row[1] += 1
        elif fit.ci_low <= p <= fit.ci_high:
            row[2] += 1
    cases = sum(r[0] for r in counts.values())
    refused = sum(r[1] for r in counts.values())
    return Calibration(
        confidence=confidence,
        n_cases=cases,
        n_decided=cases - refused,
        n_covered=sum(r[2] for r in counts.values()),
        n_refused=refused,
        by_kind={k: tuple(v) for k, v in counts.items()},
    )


# ------------------------------------------------------------------------------- short reprs
def short_repr(obj: Any) -> str:
    """A one-line repr of the toolkit's objects (a construction, a model, its config, a task, a
    sup-error result, a fit) for assertion output and falsifying examples; ``repr`` otherwise.

    >>> from approxtheory.constructions import build
    >>> short_repr(build("softmax_retrieval", T=4, beta=10.0))
    '<Construction softmax_retrieval (IF-T2) T=4, beta=10.0: upper bound 0.4689>'
    """
    name = type(obj).__name__
    module = type(obj).__module__ or ""
    try:
        if isinstance(obj, PowerLawFit):
            return (
                f"<PowerLawFit size^{_e(obj.slope)} [{_e(obj.ci_low)}, {_e(obj.ci_high)}] "
                f"at {obj.level:g}, {obj.n_points} points" + (", floor" if obj.floor else "") + ">"
            )
        if not module.startswith("approxtheory"):
            return repr(obj)
        if name == "Construction":
            knobs = ", ".join(f"{k}={v}" for k, v in obj.knobs.items())
            return (
                f"<Construction {obj.name} ({obj.claim}) {knobs}: {obj.bound_kind} bound "
                f"{obj.claimed_bound:.4g}>"
            )
        if name == "ModelConfig":
            heads = [s.heads for s in obj.layers]
            return (
                f"<ModelConfig d_in={obj.d_in} width={obj.width} layers={len(obj.layers)} "
                f"heads={heads} d_out={obj.d_out} {obj.dtype}>"
            )
        if hasattr(obj, "cfg") and hasattr(obj, "count_params"):
            cfg = obj.cfg
            return (
                f"<{name} width={cfg.width} layers={len(cfg.layers)} "
                f"params={obj.count_params()} {cfg.dtype}>"
            )
        if name == "SupErrorResult":
            return (
                f"<SupErrorResult {obj.value:.4g} at a {tuple(np.shape(obj.witness))} witness, "
                f"{obj.n_evals} evals" + (", non-finite" if obj.nonfinite else "") + ">"
            )
        if hasattr(obj, "describe") and hasattr(obj, "target"):
            d = obj.describe()
            rest = " ".join(f"{k}={v}" for k, v in d.items() if k != "task")
            return f"<{name} {rest}>"
        if name == "Measured":
            return repr(obj)
    except Exception:  # a half-built object: its own repr
        pass
    return repr(obj)


# ------------------------------------------------------------------------------- digests
def _update_array(h, label: str, a) -> None:
    a = np.ascontiguousarray(a)
    h.update(f"{label}\0{a.dtype.str}\0{a.shape}\0".encode())
    h.update(a.tobytes())


def _update_value(h, label: str, v, depth: int = 0) -> None:
    """Hash a plain attribute value (numbers, strings, tuples of them, arrays, tensors)."""
    import torch

    if isinstance(v, torch.Tensor):
        t = v.detach().cpu()
        if t.dtype == torch.bfloat16:
            t = t.to(torch.float32)
        _update_array(h, label, t.numpy())
    elif isinstance(v, np.ndarray):
        _update_array(h, label, v)
    elif v is None or isinstance(v, (bool, int, float, str, np.generic)):
        h.update(f"{label}\0{type(v).__name__}\0{v!r}\0".encode())
    elif isinstance(v, (tuple, list)) and depth < 3:
        h.update(f"{label}\0{type(v).__name__}\0{len(v)}\0".encode())
        for i, item in enumerate(v):
            _update_value(h, f"{label}[{i}]", item, depth + 1)


def _probe(task) -> np.ndarray:
    """Fixed inputs of the task's shape (a local generator, seed 12345)."""
    return np.asarray(task.sample(3, np.random.default_rng(12345)), dtype=np.float64)


def model_digest(model, task=None) -> str:
    """SHA-256 of what a model computes: its class, its config, every parameter and buffer (name,
    dtype, shape, bytes), the plain attributes of its modules (an attention scale) and, with a
    ``task``, its outputs on three fixed inputs of the task's shape."""
    import torch

    h = hashlib.sha256()
    h.update(f"{type(model).__module__}.{type(model).__qualname__}\0".encode())
    cfg = getattr(model, "cfg", None)
    if cfg is not None and hasattr(cfg, "to_dict"):
        h.update(json.dumps(cfg.to_dict(), sort_keys=True, default=str).encode())
    if isinstance(model, torch.nn.Module):
        for name, t in sorted(model.state_dict().items()):
            _update_value(h, f"param {name}", t)
        for name, t in sorted(model.named_buffers()):
            _update_value(h, f"buffer {name}", t)
        for mname, m in model.named_modules():
            for k, v in sorted(vars(m).items()):
                if not k.startswith("_") and k != "training":
                    _update_value(h, f"attr {mname}.{k}", v)
    if task is not None:
        try:
            X = torch.tensor(_probe(task), dtype=torch.float64)
            was = getattr(model, "training", False)
            model.eval()  # what sup_error does; no dropout draws from the global RNG
            with torch.no_grad():
                out = model(X)
            if was:
                model.train()
            _update_value(h, "probe", out)
        except Exception as e:  # a model the probe cannot run: its failure is part of the key
            h.update(f"probe failed\0{type(e).__name__}\0".encode())
    return h.hexdigest()


def task_digest(task) -> str:
    """SHA-256 of a task: its class, ``describe()``, domain, its plain attributes and arrays and
    its targets on three fixed inputs."""
    h = hashlib.sha256()
    h.update(f"{type(task).__module__}.{type(task).__qualname__}\0".encode())
    describe = task.describe() if hasattr(task, "describe") else {}
    h.update(json.dumps(describe, sort_keys=True, default=str).encode())
    for k in ("T", "d", "domain", "lo", "hi", "per_token", "name"):
        _update_value(h, f"class {k}", getattr(task, k, None))
    for k, v in sorted(vars(task).items()):
        if not k.startswith("__"):
            _update_value(h, f"attr {k}", v)
    try:
        _update_value(h, "probe", np.asarray(task.target(_probe(task)), dtype=np.float64))
    except Exception as e:
        h.update(f"probe failed\0{type(e).__name__}\0".encode())
    return h.hexdigest()


# ------------------------------------------------------------------------------- the cache
#: the cache scheme (bumped when an entry's layout changes)
CACHE_SCHEME = "approxtheory.testing.measured/2"
#: the largest cache entry read (anything larger is a miss)
MAX_ENTRY_BYTES = 16 * 2**20


@functools.cache
def _versions() -> str:
    """The versions of python and of the libraries a measurement depends on, read from the
    package metadata (what :func:`approxtheory.provenance.libraries` reports, without importing
    torch, sympy and scipy: a cache hit loads none of them)."""
    import importlib.metadata
    import platform

    from .provenance import package_version

    out: dict[str, str | None] = {
        "approxtheory": package_version(),
        "python": platform.python_version(),
    }
    for lib in ("torch", "numpy", "scipy", "sympy"):
        try:
            out[lib] = importlib.metadata.version(lib)
        except importlib.metadata.PackageNotFoundError:
            out[lib] = None
    return json.dumps(out, sort_keys=True)


def _key(*parts: str) -> str:
    """A cache key (24 hex digits) covering ``parts``, the fingerprint of the source of the
    package and its checks and experiments (:func:`approxtheory.provenance.source_fingerprint`,
    every ``.py`` file: the constructions, the catalogue, the search) and the library versions,
    as ``verify``'s :func:`~approxtheory.provenance.cache_key`."""
    from .provenance import source_fingerprint

    h = hashlib.sha256()
    for part in (*parts, source_fingerprint(), _versions()):
        h.update(part.encode("utf-8"))
        h.update(b"\0")
    return h.hexdigest()[:24]


def _settings_text(settings: dict) -> str:
    return json.dumps(settings, sort_keys=True, default=repr)


def _as_float(v) -> float | None:
    return float(v) if _is_number(v) else None


def _sup_error_entry_ok(d: dict) -> bool:
    """Whether a cached dict has the fields of a sup-error result, well typed (what
    :meth:`Measured._sup_error_from` accepts, checked without building the result)."""
    try:
        value = d["sup_error"]
        if not _is_number(value) or (isinstance(value, float) and math.isnan(value)):
            return False
        witness = np.asarray(d["witness"], dtype=np.float64)
        np.asarray(d["model_output"], dtype=np.float64)
        np.asarray(d["target"], dtype=np.float64)
        if witness.ndim != 2:
            return False
        ints = (d["n_evals"], d["budget"])
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in ints):
            return False
        by_source, evals = d["by_source"], d["evals_by_source"]
        if not (isinstance(by_source, dict) and isinstance(evals, dict)):
            return False
        if not all(_is_number(v) for v in by_source.values()):
            return False
        if not all(isinstance(v, int) for v in evals.values()):
            return False
        return isinstance(d["nonfinite"], bool)
    except (KeyError, TypeError, ValueError):
        return False


class Measured:
    """``sup_error`` and ``nmse`` with an on-disk cache (what the pytest fixture ``measured``
    returns).

    An entry is stored under ``cache_dir/<kind>/<key>.json``, the key covering the model's
    weights (:func:`model_digest`), the task (:func:`task_digest`), the search settings and the
    source and libraries (:func:`_key`, as ``verify``'s cache).
    Entries are written atomically with a digest of their content; anything unreadable,
    truncated, edited or of the wrong shape is a miss and is measured again. ``cache_dir=None``
    measures every time. ``budget`` is the default search budget, ``profile`` (``quick`` or
    ``full``) the grid size generated tests use, ``mutant`` the declared mutant a generated test
    runs against (``--approxtheory-mutant``).
    """

    cache_dir: Path | None
    budget: int
    profile: str
    mutant: str | None
    points: int
    hits: int
    misses: int
    seconds_computed: float
    seconds_saved: float
    write_error: str | None

    def __init__(
        self,
        cache_dir: str | Path | None = None,
        *,
        budget: int | None = None,
        profile: str = "quick",
        mutant: str | None = None,
    ):
        if profile not in PROFILES:
            raise ConfigError(f"profile must be one of {', '.join(PROFILES)} (got {profile!r})")
        if budget is None:
            budget = PROFILES[profile]["budget"]
        if isinstance(budget, bool) or not isinstance(budget, Integral) or budget < 1:
            raise ConfigError(f"budget must be a positive integer (got {budget!r})")
        if mutant is not None and (not isinstance(mutant, str) or not mutant.strip()):
            raise ConfigError(f"mutant must be a mutant name (got {mutant!r})")
        self.cache_dir = None if cache_dir is None else Path(cache_dir)
        self.budget = int(budget)
        self.profile = profile
        self.mutant = mutant
        self.points = PROFILES[profile]["points"]
        self.hits = 0
        self.misses = 0
        self.seconds_computed = 0.0
        self.seconds_saved = 0.0
        self.write_error: str | None = None

    def __repr__(self) -> str:
        where = "no cache" if self.cache_dir is None else f"cache={str(self.cache_dir)!r}"
        extra = f", mutant={self.mutant!r}" if self.mutant else ""
        return f"Measured(profile={self.profile!r}, budget={self.budget}, {where}{extra})"

    @property
    def used(self) -> bool:
        return bool(self.hits or self.misses)

    # -- the store -------------------------------------------------------------------------
    def _path(self, kind: str, key: str) -> Path | None:
        return None if self.cache_dir is None else self.cache_dir / kind / f"{key}.json"

    def _read(self, path: Path | None, key: str, kind: str) -> dict | None:
        if path is None:
            return None
        from .io import DIGEST_FIELD, content_digest, read_json_entry

        d = read_json_entry(path, max_bytes=MAX_ENTRY_BYTES)
        if not isinstance(d, dict) or not isinstance(d.get(DIGEST_FIELD), str):
            return None
        digest = d.pop(DIGEST_FIELD)
        if digest != content_digest(d):
            return None
        if d.get("scheme") != CACHE_SCHEME or d.get("key") != key or d.get("kind") != kind:
            return None
        if not isinstance(d.get("result"), dict):
            return None
        return d

    def _write(self, path: Path | None, entry: dict) -> None:
        if path is None:
            return
        from .io import atomic_write_checked_json

        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_checked_json(path, entry)
        except (OSError, ValueError) as e:  # an unwritable cache measures, it does not fail
            if self.write_error is None:
                self.write_error = f"{type(e).__name__}: {e}"

    @staticmethod
    def _split(model_or_construction, task):
        if task is None:
            model = getattr(model_or_construction, "model", None)
            task = getattr(model_or_construction, "task", None)
            if model is None or task is None:
                raise ConfigError(
                    "pass a construction, or a model and its task (got "
                    f"{type(model_or_construction).__name__} and no task)"
                )
            return model, task
        return model_or_construction, task

    # -- sup_error -------------------------------------------------------------------------
    def _settings(self, budget, seed, search) -> dict:
        return {"budget": self.budget if budget is None else budget, "seed": seed, **search}

    def _cached_sup_error(self, kind: str, key: str, settings: dict, compute, shape):
        path = self._path(kind, key)
        entry = self._read(path, key, kind)
        if entry is not None:
            r = self._sup_error_from(entry["result"], shape)
            if r is not None:
                self.hits += 1
                self.seconds_saved += _as_float(entry.get("seconds")) or 0.0
                return r
        t0 = time.perf_counter()
        r = compute()
        dt = time.perf_counter() - t0
        self.misses += 1
        self.seconds_computed += dt
        self._write(
            path,
            {
                "scheme": CACHE_SCHEME,
                "kind": kind,
                "key": key,
                "settings": settings,
                "seconds": dt,
                "result": r.to_dict(),
            },
        )
        return r

    def sup_error(
        self,
        model_or_construction,
        task=None,
        *,
        budget: int | None = None,
        seed: int = 0,
        **search,
    ):
        """:func:`approxtheory.measure.sup_error` of a construction (or a model and its task),
        from the cache when the same model (its weights, :func:`model_digest`), task, settings
        and code were measured before. ``budget`` defaults to the fixture's
        (``--approxtheory-budget`` or the profile's); ``search`` holds the other keywords of
        ``sup_error``."""
        from .measure import sup_error

        model, task = self._split(model_or_construction, task)
        settings = self._settings(budget, seed, search)
        key = _key(
            CACHE_SCHEME,
            "sup_error",
            model_digest(model, task),
            task_digest(task),
            _settings_text(settings),
        )
        return self._cached_sup_error(
            "sup_error",
            key,
            settings,
            lambda: sup_error(model, task, **settings),
            (task.T, task.d),
        )

    def _of(self, name, knobs, mutant, mutate, budget, seed, search):
        """The key, settings and compute function of :meth:`sup_error_of`."""
        if not isinstance(name, str):
            raise ConfigError(f"name must be a construction name (got {name!r})")
        if not isinstance(knobs, Mapping):
            raise ConfigError(f"knobs must be a mapping of knob values (got {knobs!r})")
        if mutant is not None and mutate is None:
            raise ConfigError(f"mutant {mutant!r} needs mutate(construction, name) to apply it")
        how = ""
        if mutant is not None:
            import inspect

            try:
                how = inspect.getsource(mutate)
            except (OSError, TypeError):
                how = f"{getattr(mutate, '__module__', '')}.{getattr(mutate, '__qualname__', '')}"
        settings = self._settings(budget, seed, search)
        knobs = dict(knobs)
        key = _key(
            CACHE_SCHEME,
            "sup_error_of",
            name,
            _settings_text(knobs),
            "" if mutant is None else mutant,
            hashlib.sha256(how.encode()).hexdigest(),
            _settings_text(settings),
        )

        def compute():
            from .constructions import build
            from .measure import sup_error

            c = build(name, **knobs)
            if mutant is not None:
                mutate(c, mutant)
            return sup_error(c.model, c.task, **settings)

        return key, settings, compute

    def sup_error_of(
        self,
        name: str,
        knobs: Mapping[str, Any],
        *,
        mutant: str | None = None,
        mutate=None,
        budget: int | None = None,
        seed: int = 0,
        **search,
    ):
        """The sup error of the registered construction ``name`` built with ``knobs`` (and,
        with ``mutant``, edited by ``mutate(construction, mutant)``), from the cache without
        building it when it was measured before. The key holds the name, the knobs, the mutant
        and the source of ``mutate``, the search settings and the code and libraries: the
        weights are a function of these (the construction is built by the fingerprinted code),
        so this is the weights' key without the cost of a build (seconds for a large
        construction) on a hit."""
        key, settings, compute = self._of(name, knobs, mutant, mutate, budget, seed, search)
        return self._cached_sup_error("sup_error", key, settings, compute, None)

    def sup_error_value_of(
        self,
        name: str,
        knobs: Mapping[str, Any],
        *,
        mutant: str | None = None,
        mutate=None,
        budget: int | None = None,
        seed: int = 0,
        **search,
    ) -> float:
        """``sup_error_of(...).value``, under the same key; a hit reads the value of a complete,
        well-formed entry (as :meth:`sup_error_of` checks it) without loading torch, the
        constructions or :mod:`approxtheory.measure`."""
        key, settings, compute = self._of(name, knobs, mutant, mutate, budget, seed, search)
        path = self._path("sup_error", key)
        entry = self._read(path, key, "sup_error")
        if entry is not None and _sup_error_entry_ok(entry["result"]):
            self.hits += 1
            self.seconds_saved += _as_float(entry.get("seconds")) or 0.0
            return float(entry["result"]["sup_error"])
        return self._cached_sup_error("sup_error", key, settings, compute, None).value

    # -- facts of the code, cached -------------------------------------------------------
    def _fact(self, kind: str, parts: tuple, compute) -> dict:
        """``compute()`` (a JSON-ready dict that is a function of ``parts`` and the code alone),
        cached under ``<cache>/facts/`` with a key of ``kind``, ``parts``, the source fingerprint
        and the library versions: any edit of the package (a claim, a construction's
        requirement) misses."""
        key = _key(CACHE_SCHEME, "fact", kind, *parts)
        path = self._path("facts", key)
        entry = self._read(path, key, "fact")
        if entry is not None and entry.get("fact") == kind:
            return entry["result"]
        r = compute()
        self._write(
            path,
            {"scheme": CACHE_SCHEME, "kind": "fact", "fact": kind, "key": key, "result": r},
        )
        return r

    def admissible(
        self,
        name: str,
        cases: Sequence[Mapping[str, Any]],
        *,
        claim: str | None = None,
        symbols: Mapping[str, str] | None = None,
    ) -> bool:
        """Whether every knob dict of ``cases`` is in the ranges of the registered construction
        ``name``'s knobs and meets its requirements and, with ``claim``, lies in that claim's
        regime (its symbols set by the knobs ``symbols`` maps to them); computed by the
        constructions and the catalogue once, then read from the cache (keyed by the code)."""
        if not isinstance(name, str):
            raise ConfigError(f"name must be a construction name (got {name!r})")
        table = [dict(c) for c in cases]
        symbols = dict(symbols or {})

        def compute() -> dict:
            from .constructions import REGISTRY

            entry = REGISTRY.get(name)
            if entry is None:
                raise ConfigError(
                    f"unknown construction {name!r}; known: {', '.join(sorted(REGISTRY))}"
                )
            c = None
            if claim is not None:
                from .catalogue import claim as lookup

                c = lookup(claim)
            for knobs in table:
                for k, v in knobs.items():
                    kn = entry.knobs.get(k)
                    if kn is None or kn.range_error(v) is not None:
                        return {"ok": False}
                if any(r.check(knobs) is not None for r in entry.requires):
                    return {"ok": False}
                if c is not None:
                    vals = {symbols[k]: v for k, v in knobs.items() if k in symbols}
                    if not c.in_regime(**vals):
                        return {"ok": False}
            return {"ok": True}

        parts = (name, _settings_text({"cases": table, "claim": claim, "symbols": symbols}))
        return bool(self._fact("admissible", parts, compute).get("ok"))

    def assert_claim_rate(
        self,
        claim_id: str,
        sizes: Sequence[float],
        errors: Sequence[float],
        *,
        over: str,
        values: Mapping[str, Any] | None = None,
        expr: str | None = None,
        at: Any = "oo",
        tol: float | None = None,
        confidence: float = 0.95,
        what: str = "error",
        kind: str | None = None,
    ) -> PowerLawFit:
        """:func:`assert_claim_rate`, with what it reads from the catalogue (the exponent, the
        tolerance, the regime of the sizes) cached as a function of the arguments other than
        ``errors`` and of the code: the same fit, the same failures."""
        vals = dict(values or {})

        def compute() -> dict:
            return _claim_rate_terms(claim_id, sizes, errors, over, vals, expr, at, tol, kind, what)

        try:
            parts = (
                _settings_text(
                    {
                        "claim": claim_id,
                        "sizes": [float(v) for v in sizes],
                        "over": over,
                        "values": vals,
                        "expr": expr,
                        "at": str(at),
                        "tol": tol,
                        "kind": kind,
                        "what": what,
                    }
                ),
            )
        except (TypeError, ValueError):  # arguments assert_claim_rate refuses: its error
            return assert_claim_rate(
                claim_id,
                sizes,
                errors,
                over=over,
                values=vals,
                expr=expr,
                at=at,
                tol=tol,
                confidence=confidence,
                what=what,
                kind=kind,
            )
        terms = self._fact("claim_rate", parts, compute)
        return _assert_claim_terms(terms, sizes, errors, confidence, what)

    @staticmethod
    def _sup_error_from(d: dict, shape):
        """A :class:`~approxtheory.measure.SupErrorResult` from a cached dict, or None when the
        dict is not one (a miss); ``shape`` is the witness's (T, d) where known."""
        if not _sup_error_entry_ok(d):
            return None
        witness = np.asarray(d["witness"], dtype=np.float64)
        if shape is not None and witness.shape != tuple(shape):
            return None
        from .measure import SupErrorResult

        return SupErrorResult(
            value=float(d["sup_error"]),
            witness=witness,
            model_output=np.asarray(d["model_output"], dtype=np.float64),
            target=np.asarray(d["target"], dtype=np.float64),
            n_evals=d["n_evals"],
            by_source={str(k): float(v) for k, v in d["by_source"].items()},
            budget=d["budget"],
            evals_by_source={str(k): int(v) for k, v in d["evals_by_source"].items()},
            nonfinite=d["nonfinite"],
        )

    # -- nmse ------------------------------------------------------------------------------
    def nmse(
        self, model_or_construction, task=None, *, n: int = 4096, seed: int = 0, X=None
    ) -> float:
        """:func:`approxtheory.measure.nmse`, cached like :meth:`sup_error` (``X``, when given,
        is part of the key)."""
        from .measure import nmse

        model, task = self._split(model_or_construction, task)
        h = hashlib.sha256()
        if X is not None:
            _update_array(h, "X", np.asarray(X, dtype=np.float64))
        settings = {"n": n, "seed": seed, "X": h.hexdigest() if X is not None else None}
        key = _key(
            CACHE_SCHEME,
            "nmse",
            model_digest(model, task),
            task_digest(task),
            _settings_text(settings),
        )
        path = self._path("nmse", key)
        entry = self._read(path, key, "nmse")
        if entry is not None:
            v = entry["result"].get("nmse")
            if _is_number(v) and not math.isnan(float(v)):
                self.hits += 1
                self.seconds_saved += _as_float(entry.get("seconds")) or 0.0
                return float(v)
        t0 = time.perf_counter()
        v = nmse(model, task, n=n, seed=seed, X=X)
        dt = time.perf_counter() - t0
        self.misses += 1
        self.seconds_computed += dt
        self._write(
            path,
            {
                "scheme": CACHE_SCHEME,
                "kind": "nmse",
                "key": key,
                "settings": settings,
                "seconds": dt,
                "result": {"nmse": v},
            },
        )
        return v

    def summary(self) -> str:
        """One line: how many measurements came from the cache and how many were computed."""
        where = "no cache" if self.cache_dir is None else f"cache {self.cache_dir}"
        line = (
            f"approxtheory: {self.hits + self.misses} measurements, {self.hits} from the cache "
            f"(~{self.seconds_saved:.1f} s saved), {self.misses} computed "
            f"({self.seconds_computed:.1f} s); {where}"
        )
        if self.write_error:
            line += f"; the cache could not be written ({self.write_error})"
        return line
