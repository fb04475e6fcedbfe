"""The power-law fit (calibrated interval, floor test), :func:`assert_rate`, :func:`short_repr`."""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from numbers import Real
from typing import Any

import numpy as np

from ..errors import InvalidValueError
from ..ratefit import SlopeFit

#: the significance level of the floor test (a floor must also be consequential to refuse a fit)
FLOOR_ALPHA = 0.05
#: residuals (in log units) below this are float64 round-off of an exact power law: the floor
#: test is skipped and the interval is widened to this relative slack
_ROUNDOFF = 1e-9
#: the floor levels tried (fractions of the smallest error) before the exact residual is taken
_FLOOR_GRID = np.concatenate([np.geomspace(1e-4, 0.5, 24), 1.0 - np.geomspace(0.5, 1e-4, 24)[1:]])


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


def _first(mask: np.ndarray) -> int | None:
    """The index of the first True of ``mask``; None where there is none."""
    bad = np.flatnonzero(mask)
    return int(bad[0]) if bad.size else None


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
    if (i := _first(~np.isfinite(x))) is not None:
        raise InvalidValueError(f"sizes must be finite (got sizes[{i}] = {x[i]})")
    if (i := _first(x <= 0)) is not None:
        raise InvalidValueError(f"sizes must be > 0 for a log-log fit (got sizes[{i}] = {x[i]:g})")
    if (i := _first(~np.isfinite(y))) is not None:
        raise RateUndecidedError(
            f"{what}s[{i}] is {y[i]} (at {over}={x[i]:g}): a NaN or infinite {what} is a failure "
            f"of what was measured, never a point of a rate; allowed: finite {what}s > 0",
            "nonfinite",
        )
    if (i := _first(y < 0)) is not None:
        raise InvalidValueError(
            f"{what}s must be >= 0 (got {what}s[{i}] = {y[i]:g} at {over}={x[i]:g})"
        )
    if (i := _first(y == 0)) is not None:
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
class PowerLawFit(SlopeFit):
    """``log error = intercept + slope · log size`` with the Student-t interval of the slope
    (``ci_low``, ``ci_high`` at ``level``), and the floor test.

    Its first six fields and :meth:`contains` are :class:`~approxtheory.ratefit.SlopeFit`'s (as
    :class:`approxtheory.measure.RateFit`'s, the bootstrap fit, whose class it is not), with
    these fields after them:

    ``se`` is the slope's standard error, ``df`` its degrees of freedom (n - 2), ``residual_sd``
    the residuals' standard deviation in log units. ``floor_p`` is the p-value of the floor
    model against the line (None where it cannot be tested: fewer than 4 points or 3 distinct
    sizes, or an exact power law), ``floor_exponent`` and ``floor_level`` the floor model's
    exponent and floor ``F``; ``floor`` says that the floor is significant and consequential
    (the fit is then undecidable). ``sizes`` and ``errors`` are the data fitted."""

    se: float = 0.0
    df: int = 1
    residual_sd: float = 0.0
    floor_p: float | None = None
    floor_exponent: float | None = None
    floor_level: float | None = None
    floor: bool = False
    sizes: tuple = ()
    errors: tuple = ()

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
    kind, k, tol = _rate_bound(exponent, at_most, at_least, tol)
    fit = fit_power_law(sizes, errors, confidence=confidence, over=over, what=what)
    if fit.floor:
        raise RateUndecidedError(_floor_message(fit, over, what, _prefix), "floor", fit)
    if kind == "exponent":
        miss = _exponent_miss(fit, k, tol, _claim_note)
    else:
        miss = _bound_miss(fit, kind, k, tol, over, what, _prefix, _claim_note)
    if miss is None:
        return fit
    i, ratio, need, k = miss
    where = "above" if ratio >= 1 else "below"
    factor = ratio if ratio >= 1 else 1 / ratio
    raise RateAssertionError(
        f"{_prefix}{_fitted(fit, over, what)}\n  {need}\n  worst point: {over}="
        f"{fit.sizes[i]:g}, {what}={fit.errors[i]:.4g}, {factor:.3g}x {where} the "
        f"{over}^{_e(k)} line through the data",
        fit,
    )


def _rate_bound(exponent, at_most, at_least, tol) -> tuple[str, float, float]:
    """``(kind, k, tol)`` of :func:`assert_rate`: exactly one of its bounds, and tol >= 0."""
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
    return kind, k, tol


def _exponent_miss(fit: PowerLawFit, k: float, tol: float, claim_note: str):
    """None where the interval, widened by ``tol``, contains ``k``; else ``(worst point, its
    ratio to the line, what was needed, the exponent of the line)``."""
    slack = 1e-9 * max(1.0, abs(k))
    if fit.ci_low - tol - slack <= k <= fit.ci_high + tol + slack:
        return None
    i, ratio = _worst(fit, k, "both")
    need = (
        f"needed: the interval to contain {_e(k)}"
        + (f" within tol {tol:.3g}" if tol else "")
        + f", but it excludes it{claim_note}"
    )
    return i, ratio, need, k


def _bound_miss(fit: PowerLawFit, kind, k, tol, over, what, prefix, claim_note):
    """None where the interval lies on the bound's side (``kind`` at_most or at_least, ``k``
    moved out by ``tol``); RateUndecidedError where it straddles it; else ``(worst point, its
    ratio to the line, what was needed, the bound)``."""
    slack = 1e-9 * max(1.0, abs(k))
    lo, hi = fit.ci_low, fit.ci_high
    bound = k + tol if kind == "at_most" else k - tol
    ok = hi <= bound + slack if kind == "at_most" else lo >= bound - slack
    if ok:
        return None
    wrong = lo > bound + slack if kind == "at_most" else hi < bound - slack
    side = "at or below" if kind == "at_most" else "at or above"
    excluded = "above" if kind == "at_most" else "below"
    limit = f"{_e(bound)}" + (f" (= {_e(k)} + tol {tol:.3g})" if tol and kind == "at_most" else "")
    if tol and kind == "at_least":
        limit = f"{_e(bound)} (= {_e(k)} - tol {tol:.3g})"
    if not wrong:
        raise RateUndecidedError(
            f"{prefix}cannot decide the rate: {_fitted(fit, over, what)} straddles "
            f"{_e(bound)}; needed: the interval {side} {limit}{claim_note}. Measure more "
            f"sizes, over a wider range, or with less noise",
            "wide",
            fit,
        )
    i, ratio = _worst(fit, bound, "above" if kind == "at_most" else "below")
    need = (
        f"needed: the interval {side} {limit}, excluding every exponent {excluded} it{claim_note}"
    )
    return i, ratio, need, bound


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
