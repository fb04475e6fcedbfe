"""Softmax pieces: the interval softmax and the simplex linear program.

Part of :mod:`approxtheory.bounds` (see its docstring for the method)."""

from __future__ import annotations

import math

import torch

from ..errors import InvalidValueError
from ._af import _gam
from ._inputs import _as_f64, _box_pair, _check_memory

# ============================================================================== softmax pieces


def softmax_bounds(lo, hi):
    """Exact interval of ``softmax(s)_j`` over the box ``lo <= s <= hi`` (last dim), outward:
    ``[exp(l_j - lse(l_j, u_{-j})), exp(u_j - lse(u_j, l_{-j}))]``, computed in log space.
    Keys with ``lo = hi = -inf`` (masked) get [0, 0]; ``lo = -inf`` (unbounded below) gives a
    lower bound 0 and ``hi = +inf`` an upper bound 1.

    ``lo`` and ``hi`` have one shape (..., J) with J >= 1 keys. Raises
    :class:`~approxtheory.errors.InvalidValueError` for NaN (never read as masked), for
    ``lo > hi`` anywhere and for ``lo = +inf``; :class:`~approxtheory.errors.ResourceLimitError`,
    before allocating, when the (..., J, J) work arrays exceed the memory limit."""
    lo, hi = _box_pair(lo, hi, "softmax_bounds")
    if lo.dim() == 0 or lo.shape[-1] == 0:
        raise InvalidValueError(
            f"softmax_bounds: lo and hi must have shape (..., J) with J >= 1 keys "
            f"(got {tuple(lo.shape)})"
        )
    if (lo > hi).any():
        raise InvalidValueError("softmax_bounds: lo must be <= hi in every key (got lo > hi)")
    if (lo == math.inf).any():
        raise InvalidValueError(
            "softmax_bounds: lo must be < +inf (a key whose logit is +inf has no softmax)"
        )
    J = lo.shape[-1]
    # M_low, M_up and logsumexp's temporaries: three (..., J, J) float64 arrays
    _check_memory(
        3 * 8 * (lo.numel() // J) * J * J, f"softmax_bounds of {lo.numel() // J} row(s) x {J} keys"
    )
    eye = torch.eye(J, dtype=torch.bool)
    # M_low[j, i] = u_i (i != j), l_j (i = j);  M_up[j, i] = l_i (i != j), u_j (i = j)
    M_low = torch.where(eye, lo.unsqueeze(-1), hi.unsqueeze(-2))
    M_up = torch.where(eye, hi.unsqueeze(-1), lo.unsqueeze(-2))
    lse_low = torch.logsumexp(M_low, -1)
    lse_up = torch.logsumexp(M_up, -1)
    fin_l = torch.isfinite(lo)
    fin_u = torch.isfinite(hi)
    scale_l = torch.where(fin_l, lo.abs(), torch.zeros_like(lo))
    scale_u = torch.where(fin_u, hi.abs(), torch.zeros_like(hi))
    smax = torch.maximum(scale_l.amax(-1, keepdim=True), scale_u.amax(-1, keepdim=True))
    slack = 1e-14 * (1.0 + smax) + _gam(J) * math.log(max(J, 2))
    pl = torch.where(fin_l, torch.exp(lo - lse_low - slack), torch.zeros_like(lo))
    pu = torch.where(
        fin_u, torch.exp(torch.clamp(hi - lse_up + slack, max=0.0)), torch.zeros_like(hi)
    )
    pu = torch.where(hi == math.inf, torch.ones_like(pu), pu)  # unbounded above: up to 1
    return pl.clamp(0.0, 1.0), pu.clamp(0.0, 1.0)


def simplex_lp_max(a, pl, pu):
    """``max Σ_j p_j a_j`` over ``{pl <= p <= pu, Σ p = 1}`` (last dim), by the greedy sort
    (fractional knapsack): start at pl and pour the remaining mass ``1 - Σ pl`` into the largest
    a_j first. Returns an upper bound of the maximum (with a rounding allowance).

    ``a``, ``pl``, ``pu``: one shape (..., J), J >= 1, finite, ``0 <= pl <= pu <= 1``. An
    infeasible set (``Σ pl > 1`` or ``Σ pu < 1`` beyond a rounding allowance of
    ``1e-12 + γ_J``) has no maximum: :class:`~approxtheory.errors.InvalidValueError`, as for
    NaN, inf or other shapes."""
    a = _as_f64(a, "simplex_lp_max: a, pl and pu")
    pl = _as_f64(pl, "simplex_lp_max: a, pl and pu")
    pu = _as_f64(pu, "simplex_lp_max: a, pl and pu")
    if not (a.shape == pl.shape == pu.shape) or a.dim() == 0 or a.shape[-1] == 0:
        raise InvalidValueError(
            f"simplex_lp_max: a, pl and pu must have one shape (..., J) with J >= 1 (got "
            f"{tuple(a.shape)}, {tuple(pl.shape)}, {tuple(pu.shape)})"
        )
    for name, v in (("a", a), ("pl", pl), ("pu", pu)):
        if not torch.isfinite(v).all():
            raise InvalidValueError(f"simplex_lp_max: {name} must be finite (got NaN or inf)")
    if (pl < 0).any() or (pu > 1).any() or (pl > pu).any():
        raise InvalidValueError("simplex_lp_max: the box must satisfy 0 <= pl <= pu <= 1")
    J = a.shape[-1]
    tol = 1e-12 + _gam(J)
    if (pl.sum(-1) > 1 + tol).any():
        raise InvalidValueError(
            f"simplex_lp_max: infeasible: sum(pl) = {float(pl.sum(-1).max()):.12g} > 1 (no p in "
            f"the box sums to 1)"
        )
    if (pu.sum(-1) < 1 - tol).any():
        raise InvalidValueError(
            f"simplex_lp_max: infeasible: sum(pu) = {float(pu.sum(-1).min()):.12g} < 1 (no p in "
            f"the box sums to 1)"
        )
    return _simplex_lp_max(a, pl, pu)


def _simplex_lp_max(a, pl, pu):
    """:func:`simplex_lp_max` without the checks (the internal bound propagation)."""
    J = a.shape[-1]
    rem = (1.0 - pl.sum(-1, keepdim=True)).clamp_min(0.0) + _gam(J)
    cap = (pu - pl).clamp_min(0.0)
    order = torch.argsort(a, dim=-1, descending=True)
    a_s = a.gather(-1, order)
    cap_s = cap.gather(-1, order)
    before = torch.cumsum(cap_s, -1) - cap_s
    alloc = torch.minimum((rem - before).clamp_min(0.0), cap_s)
    val = (pl * a).sum(-1) + (alloc * a_s).sum(-1)
    mag = (pl * a.abs()).sum(-1) + (alloc * a_s.abs()).sum(-1) + a.abs().amax(-1)
    return val + _gam(2 * J) * mag + _gam(J) * a.abs().amax(-1)
