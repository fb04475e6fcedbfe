"""Targets on affine forms and the model-minus-max relaxations.

Part of :mod:`approxtheory.bounds` (see its docstring for the method)."""

from __future__ import annotations

import math

import torch

from ._af import _AF, _DT, _TINY, _U, _gam, _Unsupported
from .forward import _forward_af, model_reason


# ============================================================================== targets
def _reference_model(task):
    """The reference model of a model-as-target task (``target(X) = reference(X)[..., 0]``, as
    the tradeoffs' truncation target), else None (duck-typed: bounds sit below constructions)."""
    ref = getattr(task, "reference", None)
    return ref if getattr(ref, "cfg", None) is not None and hasattr(ref, "layers") else None


def _target_reason(task) -> str | None:
    from ..tasks import GeneralizedRetrieval, KthLargest, LagExtraction, Memorize, PairwiseMax

    ref = _reference_model(task)
    if ref is not None:
        r = model_reason(ref)
        if r is None and ref.cfg.readout != "tokens":
            r = "a per-token reference needs the per-token read-out"
        return None if r is None else f"the reference model (the target): {r}"
    if isinstance(task, (LagExtraction, PairwiseMax)):
        return None
    if isinstance(task, GeneralizedRetrieval):
        if task.affine is None or task.outer_affine is None:
            return (
                "the target's features or outer map are not affine; the bound needs "
                "GeneralizedRetrieval(affine=..., outer_affine=...)"
            )
        return None
    if isinstance(task, Memorize):
        return None
    if isinstance(task, KthLargest):
        if _kth_f(task) is None:
            return (
                "KthLargest with a read-out f other than the identity or the digest's "
                "sin 6u + 0.5|u - 0.3| cannot be bounded"
            )
        return None
    return f"target {type(task).__name__} ({getattr(task, 'name', '?')}) has no bound"


def _kth_f(task):
    """'identity' or 'sin' if task.f agrees with that function on a grid, else None."""
    u = torch.linspace(-0.5, 1.5, 257, dtype=_DT)
    with torch.no_grad():
        fu = task.f(u)
    for name, g in (("identity", u), ("sin", torch.sin(6 * u) + 0.5 * (u - 0.3).abs())):
        if (
            torch.is_tensor(fu)
            and fu.shape == u.shape
            and torch.allclose(fu, g, atol=1e-12, rtol=0)
        ):
            return name
    return None


def _sin_range(a, b):
    """Range of sin over [a, b] (elementwise tensors), outward."""
    s1, s2 = torch.sin(a), torch.sin(b)
    lo, hi = torch.minimum(s1, s2), torch.maximum(s1, s2)
    # a maximum at π/2 + 2πk, a minimum at -π/2 + 2πk inside [a, b]
    kmax = torch.ceil((a - math.pi / 2) / (2 * math.pi))
    has_max = math.pi / 2 + 2 * math.pi * kmax <= b
    kmin = torch.ceil((a + math.pi / 2) / (2 * math.pi))
    has_min = -math.pi / 2 + 2 * math.pi * kmin <= b
    hi = torch.where(has_max | (b - a >= 2 * math.pi), torch.ones_like(hi), hi)
    lo = torch.where(has_min | (b - a >= 2 * math.pi), -torch.ones_like(lo), lo)
    e = 1e-15 * (1 + a.abs() + b.abs())
    return (lo - e).clamp(min=-1.0), (hi + e).clamp(max=1.0)


def _opt_af(g: _AF, S, opt: str) -> _AF:
    """opt_{t∈S} g_t (g: (B, T)) as an affine form: one token's form plus a one-sided interval."""
    idx = torch.tensor(S)
    gs = g.index(1, idx)  # (B, |S|)
    sign = 1.0 if opt == "max" else -1.0
    gs = gs.scale(torch.tensor(sign, dtype=_DT)) if sign < 0 else gs
    star = gs.c.argmax(-1)  # (B,)
    g_star = gs.gather(1, star[:, None])  # (B, 1)
    diffU = (gs - g_star.expand_to(gs.shape)).bounds()[1].clamp_min(0.0).amax(-1)  # (B,)
    m = g_star.reshape(-1).add_interval(torch.zeros_like(diffU), diffU)
    return m.scale(torch.tensor(sign, dtype=_DT)) if sign < 0 else m


def _retrieval_parts(task, x: _AF):
    """[(g (B, T) = c_i f_i(x(t)), S_i, opt_i)] with c_i f_i's opt over S_i giving c_i z_i."""
    W, b = task.affine
    c, _ = task.outer_affine
    parts = []
    for i in range(task.D):
        if c[i] == 0:
            continue
        w = torch.tensor(c[i] * W[i], dtype=_DT)[None, :]
        bb = torch.tensor([c[i] * b[i]], dtype=_DT)
        g = x.linear(w, bb).reshape(x.shape[0], x.shape[1])
        same = (task.mode == "max") == (c[i] > 0)
        parts.append((g, task.sets[i], "max" if same else "min"))
    return parts


def _target_rows(task, m: int):
    """The outputs (m,) that have a target (bool), or None when all have: a lag task's first k
    rows have none (its target is NaN there; the error measures skip them)."""
    from ..tasks import LagExtraction

    if isinstance(task, LagExtraction) and _reference_model(task) is None:
        rows = torch.arange(m) >= task.k
        return rows
    return None


def _target_af(task, x: _AF) -> _AF:
    """The target on the boxes as an affine form, shape (B, m)."""
    from ..tasks import GeneralizedRetrieval, KthLargest, LagExtraction, Memorize, PairwiseMax

    B, T, d = x.shape
    if isinstance(task, PairwiseMax):  # Σ_i max_{s,t} x(s)ᵀ A_i x(t): products of forms
        from ._af import _dot

        y = _AF.const(torch.zeros(B, dtype=_DT), x.n)
        for A in task.A:
            Ax = x.linear(torch.as_tensor(A, dtype=_DT))  # (B, T, d): A x(t)
            g = _dot(x, Ax, "bsd", "btd", "bst").reshape(B, T * T)
            y = y + _opt_af(g, list(range(T * T)), "max")
        return y.reshape(B, 1)
    ref = _reference_model(task)
    if ref is not None:  # the reference model on the same noise symbols (shared: it cancels)
        out = _forward_af(ref, x)  # (B, T, d_out)
        return out.narrow(2, 0, 1).reshape(B, T)
    if isinstance(task, LagExtraction):  # y_t = x(t - k), no target (0 here) for t < k
        k = task.k
        first = x.narrow(2, 0, 1).reshape(B, T)
        z = _AF.const(torch.zeros(B, k, dtype=_DT), x.n)
        return _AF.cat([z, first.narrow(1, 0, T - k)], 1) if k else first
    if isinstance(task, GeneralizedRetrieval):
        assert task.outer_affine is not None  # _target_reason turned the others away
        y = _AF.const(torch.full((B,), float(task.outer_affine[1]), dtype=_DT), x.n)
        for g, S, opt in _retrieval_parts(task, x):
            y = y + _opt_af(g, S, opt)
        return y.reshape(B, 1)
    if isinstance(task, Memorize):
        return x.reshape(B, T * d)
    if isinstance(task, KthLargest):
        lo, hi = x.narrow(2, 0, 1).bounds()
        k = task.k
        vlo = torch.topk(lo[..., 0], k, dim=1).values[:, -1]
        vhi = torch.topk(hi[..., 0], k, dim=1).values[:, -1]
        if _kth_f(task) == "sin":
            slo, shi = _sin_range(6 * vlo, 6 * vhi)
            a, b = vlo - 0.3, vhi - 0.3
            alo = torch.where(
                (a <= 0) & (b >= 0), torch.zeros_like(a), torch.minimum(a.abs(), b.abs())
            )
            ahi = torch.maximum(a.abs(), b.abs())
            vlo, vhi = slo + 0.5 * alo, shi + 0.5 * ahi
            e = 1e-15 * (1 + vlo.abs() + vhi.abs())
            vlo, vhi = vlo - e, vhi + e
        return _AF.interval(vlo, vhi, x.n).reshape(B, 1)
    raise _Unsupported(_target_reason(task) or "unsupported target")


# ============================================================================== model minus max
def _greedy_lambda(F: _AF, g: _AF):
    """Heuristic weights λ on the simplex (B, C) for ``min_λ max_ε F(ε) - Σ_t λ_t g_t(ε)``
    (F: (B,), g: (B, C) forms): exact when every noise symbol enters one g_t only (features of
    single tokens), where the objective is separable and convex piecewise linear in each λ_t,
    so the greedy fill of its segments by increasing slope is optimal. Soundness never
    depends on λ (any point of the simplex gives a valid bound)."""
    B, C = g.shape
    n = g.n
    Aa = g.A.abs()  # (B, C, n)
    own = Aa.argmax(1, keepdim=True)  # (B, 1, n)
    w = torch.where(torch.arange(C)[None, :, None] == own, Aa, torch.zeros_like(Aa))
    nz = w > 0
    beta = torch.where(
        nz,
        F.A[:, None, :] / torch.where(nz, g.A, torch.ones_like(g.A)),
        torch.full_like(Aa, math.inf),
    )
    beta = beta.clamp(0.0, 1.0)
    bs, order = beta.sort(-1)
    ws = w.gather(-1, order)
    s0 = g.r - g.c - w.sum(-1)  # (B, C)
    slopes = torch.cat([s0[..., None], s0[..., None] + 2 * ws.cumsum(-1)], -1)
    edges = torch.cat([torch.zeros(B, C, 1, dtype=_DT), bs, torch.ones(B, C, 1, dtype=_DT)], -1)
    lens = (edges[..., 1:] - edges[..., :-1]).clamp_min(0.0)  # (B, C, n + 1)
    _, fo = slopes.reshape(B, -1).sort(-1)
    fl = lens.reshape(B, -1).gather(-1, fo)
    before = fl.cumsum(-1) - fl
    alloc = torch.minimum(fl, (1.0 - before).clamp_min(0.0))
    a = torch.zeros_like(fl).scatter(-1, fo, alloc).reshape(B, C, n + 1).sum(-1)
    a = a.clamp_min(0.0)
    tot = a.sum(-1, keepdim=True)
    return torch.where(
        tot > 0, a / torch.where(tot > 0, tot, torch.ones_like(tot)), torch.full_like(a, 1.0 / C)
    )


def _minus_mix_upper(F: _AF, g: _AF, lam):
    """Upper bounds of ``F(ε) - max_t g_t(ε)`` via ``max_t g_t >= Σ_t λ_t g_t`` for each row of
    weights ``lam`` (B, K, C) (λ >= 0, Σ λ = 1 up to rounding, allowed for). Returns (B, K)."""
    B, C = g.shape
    gm = g.mag()
    c = torch.einsum("bkc,bc->bk", lam, g.c)
    A = torch.einsum("bkc,bcn->bkn", lam, g.A)
    r = torch.einsum("bkc,bc->bk", lam, g.r)
    r = r + _gam(C + g.n + 4) * torch.einsum("bkc,bc->bk", lam, gm) + _TINY
    K = lam.shape[1]
    D = F.unsqueeze(1).expand_to((B, K)) - _AF(c, A, r)
    s = lam.sum(-1)
    gmax = gm.amax(-1, keepdim=True)
    return D.bounds()[1] + ((s - 1).abs() + _gam(C + 4)) * gmax * (1 + 8 * _U)


def _minus_opt(F: _AF, g: _AF, opt: str, side: str):
    """Bound of ``F(ε) - opt_t g_t(ε)`` over ε ∈ [-1, 1]^n (F: (B,), g: (B, C) forms):
    ``side='upper'``: an upper bound of the upper end, ``'lower'``: a lower bound of the lower
    end. Where opt_t g_t is convex in ε (max on the upper side, min on the lower side) the
    bound is the LP dual ``min_λ max_ε F - Σ λ_t g_t`` (λ on the simplex: the greedy λ and the
    vertices); otherwise it is exact by enumerating t."""
    B, C = g.shape
    if (opt == "max") != (side == "upper"):
        D = F.unsqueeze(1).expand_to((B, C)) - g
        lo, hi = D.bounds()
        return lo.amin(-1) if side == "lower" else hi.amax(-1)
    if side == "lower":  # F - min g >= -(max_λ ... ): negate to the upper case
        return -_minus_opt(-F, -g, "max", "upper")
    lam = torch.cat(
        [_greedy_lambda(F, g)[:, None, :], torch.eye(C, dtype=_DT)[None].expand(B, C, C)], 1
    )
    return _minus_mix_upper(F, g, lam).amin(-1)


def unsupported_reason(model, task=None) -> str | None:
    """Why the sound bound cannot handle ``model`` (and ``task``'s target), or None: the
    model's reason (:func:`.forward.model_reason`), then the target's."""
    r = model_reason(model, task)
    if r is None and task is not None:
        r = _target_reason(task)
    return r or None
