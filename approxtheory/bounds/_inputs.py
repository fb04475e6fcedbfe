"""Input validation of the bounds API: boxes, tasks, memory, budgets, weights.

Part of :mod:`approxtheory.bounds` (see its docstring for the method)."""

from __future__ import annotations

import math

import torch

from .._validate import check_real
from ..errors import ConfigError, InvalidValueError
from ._af import _DT


def _check_memory(nbytes: int, what: str) -> None:
    """Refuse (ResourceLimitError) before allocating ``nbytes``. Work below 1 MiB is never
    refused (no limit lookup on the propagation's many small calls)."""
    if nbytes > 1 << 20:
        from ..resources import require

        require(bytes=nbytes, what=what)


def _as_f64(x, what: str, err=InvalidValueError):
    try:
        return torch.as_tensor(x, dtype=_DT)
    except (TypeError, ValueError, RuntimeError):
        raise err(f"{what} must be arrays of real numbers (got {type(x).__name__})") from None


def _box_pair(lo, hi, what: str, err=InvalidValueError):
    """``lo``, ``hi`` as float64 tensors broadcast to one shape (refusing NaN)."""
    lo, hi = _as_f64(lo, f"{what}: lo and hi", err), _as_f64(hi, f"{what}: lo and hi", err)
    try:
        lo, hi = torch.broadcast_tensors(lo, hi)
    except RuntimeError:
        raise err(
            f"{what}: lo and hi must have one shape (got {tuple(lo.shape)} and {tuple(hi.shape)})"
        ) from None
    if torch.isnan(lo).any() or torch.isnan(hi).any():
        raise err(f"{what}: lo and hi must not be NaN (a NaN bound is not a box)")
    return lo, hi


def _as_boxes(lo, hi, d: int, T: int | None = None, what: str = "the box"):
    """Boxes ``lo <= X <= hi`` as float64 tensors (B, T, d): arrays of shape (T, d) or
    (B, T, d), or scalars when ``T`` is known; finite, ``lo <= hi``. ConfigError otherwise."""
    lo, hi = _box_pair(lo, hi, what, ConfigError)
    given = tuple(lo.shape)
    shape = f"(T, {d}) or (B, T, {d})" if T is None else f"({T}, {d}) or (B, {T}, {d})"
    if lo.dim() == 0 and T is not None:
        lo, hi = lo.expand(T, d), hi.expand(T, d)
    if lo.dim() == 2:
        lo, hi = lo[None], hi[None]
    if lo.dim() != 3 or lo.shape[-1] != d or (T is not None and lo.shape[1] != T):
        raise ConfigError(f"{what}: lo and hi must be arrays of shape {shape} (got {given})")
    if lo.shape[0] == 0 or lo.shape[1] == 0:
        raise ConfigError(f"{what}: lo and hi must hold at least one box of T >= 1 tokens")
    if not (torch.isfinite(lo).all() and torch.isfinite(hi).all()):
        raise ConfigError(f"{what}: lo and hi must be finite (the bounds need a bounded box)")
    if (lo > hi).any():
        raise ConfigError(f"{what}: lo must be <= hi in every coordinate")
    return lo.contiguous(), hi.contiguous()


def _check_task(task) -> None:
    missing = [a for a in ("T", "d", "lo", "hi", "target") if not hasattr(task, a)]
    if missing:
        raise ConfigError(
            f"task must be an approxtheory task with T, d, lo, hi and target (this "
            f"{type(task).__name__} has no {', '.join(missing)})"
        )


def _require_forms(model, B: int, T: int, d: int, what: str) -> None:
    """Refuse boxes whose affine forms cannot fit: the input's and the first residual stream's
    noise coefficients, (B, T, d, T·d) and (B, T + 1, width, T·d) float64 (a lower bound)."""
    E = int(getattr(getattr(model, "cfg", None), "width", d))
    n = T * d
    _check_memory(8 * B * n * (T * d + (T + 1) * E), what)


def _no_nan(L, U):
    """A NaN bound (the propagation overflowed) bounds nothing: -inf / +inf, never NaN."""
    return (
        torch.where(torch.isnan(L), torch.full_like(L, -math.inf), L),
        torch.where(torch.isnan(U), torch.full_like(U, math.inf), U),
    )


def _pos_seconds(name, v):
    """``v`` seconds as a float; None (no limit) stays None."""
    must = "a positive number of seconds or None"
    return None if v is None else check_real(name, v, 0, lo_open=True, must=must, numpy=False)


def _nonfinite_weights(model) -> str | None:
    params = getattr(model, "parameters", None)
    if params is None:
        return None
    bad = [n for n, p in model.named_parameters() if not bool(torch.isfinite(p).all())]
    return None if not bad else "non-finite (NaN or inf) weights in " + ", ".join(bad[:4])
