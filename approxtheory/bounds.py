"""Certified upper bracket of the sup-norm error of a :class:`~approxtheory.model.Transformer`.

Example::

    >>> from approxtheory.constructions import build
    >>> from approxtheory.bounds import upper_bracket
    >>> c = build("softmax_retrieval", T=4, beta=100.0)
    >>> r = upper_bracket(c.model, c.task, max_boxes=8000)
    >>> r.lower <= r.upper <= 2 * r.lower
    True

:func:`approxtheory.measure.sup_error` searches for a bad input, so it gives a *lower* bound on
``sup_X ||model(X) - task(X)||_∞``. :func:`upper_bracket` gives an *upper* bound that holds for
every X in the task's box (``task.lo <= x(t)_k <= task.hi``), by bound propagation and
branch-and-bound over the input box; together they bracket the supremum.

Method
------
*Affine forms.* Every intermediate quantity on a sub-box is an affine form
``c + A ε + [-r, r]`` in the box's noise symbols ``ε ∈ [-1, 1]^{T·d}`` (one per input coordinate)
plus an independent interval (zonotope / affine arithmetic; interval bound propagation is the
special case ``A = 0``). Linear layers, residual sums and the read-out are exact on affine forms;
ReLU uses the zonotope relaxation ``relu(x) ∈ λx + [0, max(-λl, (1-λ)u)]``; a product of two forms
(the q·k logits, bilinear FFNs) keeps the two first-order terms and bounds the quadratic one by
the product of the radii.

*Softmax.* Given logit intervals ``[l_j, u_j]`` the exact interval of ``softmax_j`` is
``[exp(l_j - lse(l_j, u_{-j})), exp(u_j - lse(u_j, l_{-j}))]`` (:func:`softmax_bounds`, log
space, so it is stable at β = 1e4 and beyond). An attention output ``Σ_j p_j v_j`` is written
``v_r + Σ_j p_j e_j`` with ``e_j = v_j - v_r`` for a reference key r (Σ p = 1), and ``F = Σ_j p_j
e_j`` is bounded three ways, of which the tightest is kept: (i) the LP over
``{l <= p <= u, Σ p = 1}`` solved by the greedy sort (:func:`simplex_lp_max`); (ii) the coupled
ratio bound below; (iii) an affine form ``Σ_j p̂_j e_j`` at the centre weights p̂ plus
``Σ_j |p_j - p̂_j| max|e_j|`` (exact when the logits are constant on the box, e.g. ``W_Q = 0``;
then (i) and (ii) are skipped, as they cannot be narrower).

*Coupled ratio bound.* With ``δ_j = s_j - s_r`` (logit differences) and weights ``w_j = e^{δ_j}``,
``F = (e_r + Σ_{j≠r} w_j e_j) / (1 + Σ_{j≠r} w_j)``. For any λ, ``F >= λ`` iff
``(e_r - λ) + Σ_j w_j (e_j - λ) >= 0`` (Dinkelbach), and the sum splits over keys: each term is
minimised over the key's own region of ``(δ_j, e_j)``, a parallelogram ``δ ∈ [δL, δU]``,
``e ∈ [eL, eU]``, ``e - αδ ∈ [γL, γU]`` (α: least-squares slope of e's affine form on δ's),
in closed form (``min e^δ (αδ + c)`` sits at ``δ* = -c/α - 1``). The sum is concave and
decreasing in λ; chord, Newton and bisection steps find the largest λ it certifies, with every
term held as a sign and a log-magnitude (no overflow at β = 1e4 and beyond). This keeps the
softmax's key fact — a far-from-top key has a tiny weight — *coupled* to how far its value is
from the top's, which intervals lose. A second form keeps the reference's logit as one common
factor ``e^{-s_r}`` of all keys (so keys cannot each pick their own reference) and slices the
reference's range along its target feature; per candidate the tighter of the two is used.

*Model minus target, jointly.* When the last block is attention only, the read-out is linear and
the target is a generalized retrieval ``c0 + Σ_i c_i opt_{t∈S_i}(W_i x(t) + b_i)``
(:class:`~approxtheory.tasks.GeneralizedRetrieval` with ``affine`` and ``outer_affine``), heads
are matched to target terms by their read-out values, and each matched head's contribution
``Σ_j p_j u_j - opt_{t∈S} g_t`` is bounded by enumerating which t' attains the max (only those
that can on the box), writing it as ``Σ_j p_j (u_j - g_{t'})`` with the reference key t' and the
constraints ``g_j <= g_{t'}``, and applying the coupled ratio bound. For the single-head retrieval
head this is exact at the root box (up to the bisection). Otherwise the target is an affine form
(affine features; a min/max over tokens becomes the form of one token plus a one-sided interval)
and the error bound is the concretised ``model - target`` form.

*ReLU read-out (generic path): CROWN.* When the read-out after the CLS state is a ReLU MLP, it
is also bounded by back-substitution (CROWN): the CLS state is the zonotope form above; every
ReLU's input bounds come from back-substituting its rows to that form (intersected with the
zonotope's), and the outputs' bounds are linear functions of the noise symbols,
``L(ε) <= out <= U(ε)``. An unstable ReLU on ``[l, u]`` is bounded above by its chord, whose
offset is re-derived from both ends and rounded up (any float slope stays sound), and below by
``α z`` with α ∈ {adaptive, 0, 1} per ReLU layer: all combinations (up to two ReLU layers, else
the three uniform ones) run in one stacked pass and the tightest per box and row is kept (each
is a valid bound). The zonotope is also propagated with the tightened ReLU bounds; the final
bounds are the intersection of the two.

*Model minus a max (generic path).* For a one-term retrieval target ``c0 + opt_{t∈S} g_t``
(g_t affine in token t) the error is bounded without an interval for the target: where
``-opt`` is concave in ε (max on the upper side, min on the lower side) by LP duality,
``max_ε F(ε) - max_t g_t(ε) <= min_{λ∈Δ} max_ε F(ε) - Σ_t λ_t g_t(ε)``, with λ the greedy
optimum of that separable piecewise-linear problem (:func:`_greedy_lambda`) and the vertices
(any λ in the simplex is valid; a rounding error in Σλ is paid for with
``|Σλ - 1|·max|g|``); on the other side exactly, by enumerating t.

*Branch-and-bound.* Boxes sit in a priority queue keyed by their error bound; the worst boxes are
split along the coordinate (token, dim) whose split lowers the children's bound most among the
widest few ("strong branching"); the model is evaluated at box centres and at points found by a
short projected gradient ascent, which gives ``lower``. On the generic path, where the
read-out's first ReLUs each read (almost) one input coordinate (decided once, on the root), a
coordinate is split at the zero crossing of such an unstable ReLU nearest its midpoint (so the
children make it stable), the candidates are the coordinates with most such ReLUs (never one
much narrower than the widest: slivers shave the bound by tiny amounts that greedy strong
branching would prefer to progress), two per box, and near-ties go to the heuristic's choice;
boxes whose bound is at most ``lower`` are pruned. The search stops when
``upper <= (1 + tol) lower``, ``upper <= atol``, or the split or box budget is spent: work counts,
so the result does not depend on the machine's speed. (The old ``time_limit`` is deprecated: it
becomes a box budget; an optional ``wall_clock_cap`` is only a safety net whose stop is marked
``exhausted-by-time``, ``reproducible=False``, with the best sound bound so far.)

*Structured path (any T).* One attention-only layer of softmax retrieval heads against an affine
generalized retrieval (``softmax_retrieval``, ``hc_k1``, ``hc_k1_synthetic``) is bounded without
boxes over the T·d inputs: per head, a Dinkelbach check that splits over tokens, the exact
softmax-over-box optimum per token (vertex or critical point, "Vertex-Softmax"), positions grouped
into classes by symmetry, and a 1-D branch over the reference token's feature
(:mod:`approxtheory.bracket_softmax`). ``method="auto"`` uses it wherever it applies.

*Non-finite input.* NaN/inf weights, or a NaN/inf error at any evaluated input, give
``upper = +inf`` with ``unsound_input=True``: a NaN is never read as a zero error.

Soundness in floating point
---------------------------
The bound is for the exact real-arithmetic function of the stored weights. All propagation runs in
float64; every operation adds a rounding allowance to the interval part of the form (γ_k·magnitude
with ``γ_k = (k + 8)·2.3e-16`` for a k-term sum, covering ``k·u/(1 - k·u)``), endpoints are
rounded outward (relative 4·2^-53 plus 1e-300 absolute), softmax bounds are widened by a relative
``1e-14·(1 + |logits|)``, the ratio bound only accepts a λ whose Dinkelbach sum exceeds
``(1e-10 + 1e-15·max|δ|)`` times the sum of the absolute values of its terms' parts, and the final
upper bound is multiplied by ``1 + 1e-12`` and raised by ``1e-300``. CROWN's back-substitution
adds, at every step, ``γ·(|Λ||W|·|input| + |Λ||b| + |ν|)`` (linear) or ``γ·(|Λ'|·|z| + Σ Λ⁺t)``
(ReLU) to the row's offset, with |input| from the zonotope bounds, so the float products stand
for the exact ones. The float64 evaluation of
the model itself differs from the exact function by round-off of relative order 1e-15 (float32
models: 1e-7, not included). The tests check soundness against brute force (grids and random
points), per layer on random models, and with a deliberately narrowed softmax bound (a mutant
that the checks must catch; and a ReLU chord without its offset, that the CROWN containment
check on random MLPs must catch).

Unsupported (``upper=None`` with ``reason``): LayerNorm, RoPE, causal masks, per-token read-out,
GELU/SwiGLU activations, non-box domains, and targets other than affine generalized retrieval
(:class:`~approxtheory.tasks.ScalarMax`, :class:`~approxtheory.tasks.MaxPlusMin`,
:class:`~approxtheory.tasks.SyntheticMaxSum`, …), :class:`~approxtheory.tasks.Memorize` and
:class:`~approxtheory.tasks.KthLargest` with the identity or the digest's ``sin`` read-out.
"""

from __future__ import annotations

import heapq
import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from .errors import ConfigError, InvalidValueError

__all__ = [
    "BracketResult",
    "upper_bracket",
    "error_bounds",
    "layer_bounds",
    "softmax_bounds",
    "simplex_lp_max",
    "unsupported_reason",
]

_U = 2.0**-53
_TINY = 1e-300
_DT = torch.float64


def _gam(k: int) -> float:
    """Relative rounding allowance of a k-term float64 sum (>= γ_k = k·u/(1 - k·u))."""
    return (k + 8) * 2.3e-16


class _Unsupported(Exception):
    pass


# ============================================================================== affine forms
class _AF:
    """Batched affine forms ``c + A ε + [-r, r]``, ε ∈ [-1, 1]^n; c, r: shape S; A: S + (n,)."""

    __slots__ = ("c", "A", "r")

    def __init__(self, c, A, r):
        self.c, self.A, self.r = c, A, r

    @property
    def n(self) -> int:
        return self.A.shape[-1]

    @property
    def shape(self):
        return self.c.shape

    @staticmethod
    def const(c, n: int) -> _AF:
        c = c.to(_DT)
        return _AF(c, c.new_zeros(*c.shape, n), c.new_zeros(c.shape))

    @staticmethod
    def interval(lo, hi, n: int) -> _AF:
        c = 0.5 * lo + 0.5 * hi
        r = torch.maximum(hi - c, c - lo) * (1 + 4 * _U) + _TINY
        return _AF(c, c.new_zeros(*c.shape, n), r)

    def rad(self):
        return self.A.abs().sum(-1) + self.r

    def mag(self):
        return self.c.abs() + self.rad()

    def bounds(self):
        rad = self.rad() * (1 + _gam(self.n))
        m = (self.c.abs() + rad) * (4 * _U) + _TINY
        return self.c - rad - m, self.c + rad + m

    # ---- shape ops (dims refer to S; non-negative or negative)
    @staticmethod
    def _ad(dim):
        return dim - 1 if dim < 0 else dim

    def narrow(self, dim, start, length):
        return _AF(
            self.c.narrow(dim, start, length),
            self.A.narrow(self._ad(dim), start, length),
            self.r.narrow(dim, start, length),
        )

    def index(self, dim, idx):
        """index_select along dim with a 1-D LongTensor."""
        return _AF(
            self.c.index_select(dim, idx),
            self.A.index_select(self._ad(dim), idx),
            self.r.index_select(dim, idx),
        )

    def reshape(self, *shape):
        return _AF(self.c.reshape(*shape), self.A.reshape(*shape, self.n), self.r.reshape(*shape))

    def transpose(self, d1, d2):
        return _AF(
            self.c.transpose(d1, d2),
            self.A.transpose(self._ad(d1), self._ad(d2)),
            self.r.transpose(d1, d2),
        )

    def unsqueeze(self, dim):
        return _AF(self.c.unsqueeze(dim), self.A.unsqueeze(self._ad(dim)), self.r.unsqueeze(dim))

    def expand_to(self, shape):
        return _AF(self.c.expand(*shape), self.A.expand(*shape, self.n), self.r.expand(*shape))

    def gather(self, dim, idx):
        """torch.gather along dim (idx has the shape of the result)."""
        Ai = idx.unsqueeze(-1).expand(*idx.shape, self.n)
        return _AF(
            self.c.gather(dim, idx), self.A.gather(self._ad(dim), Ai), self.r.gather(dim, idx)
        )

    @staticmethod
    def cat(forms, dim):
        return _AF(
            torch.cat([f.c for f in forms], dim),
            torch.cat([f.A for f in forms], _AF._ad(dim)),
            torch.cat([f.r for f in forms], dim),
        )

    @staticmethod
    def where(cond, a: _AF, b: _AF) -> _AF:
        return _AF(
            torch.where(cond, a.c, b.c),
            torch.where(cond[..., None], a.A, b.A),
            torch.where(cond, a.r, b.r),
        )

    # ---- arithmetic
    def __add__(self, o):
        if isinstance(o, _AF):
            c = self.c + o.c
            return _AF(c, self.A + o.A, self.r + o.r + _gam(2 + self.n) * (self.mag() + o.mag()))
        o = torch.as_tensor(o, dtype=_DT)
        c = self.c + o
        A = self.A if self.A.shape[:-1] == c.shape else self.A.expand(*c.shape, self.n)
        return _AF(c, A, self.r + _gam(2) * (self.c.abs() + o.abs()))

    def __neg__(self):
        return _AF(-self.c, -self.A, self.r)

    def __sub__(self, o):
        return self + (-o)

    def scale(self, s):
        """Elementwise product with a constant tensor s (broadcast on S)."""
        s = torch.as_tensor(s, dtype=_DT)
        sa = s.abs()
        return _AF(self.c * s, self.A * s[..., None], self.r * sa + _gam(2) * sa * self.mag())

    def add_interval(self, lo, hi):
        mid = 0.5 * lo + 0.5 * hi
        half = torch.maximum(hi - mid, mid - lo)
        return _AF(
            self.c + mid,
            self.A,
            self.r + half + _gam(4) * (self.c.abs() + mid.abs() + half) + _TINY,
        )

    def linear(self, W, b=None):
        """x @ W.T + b on the last dim of S."""
        k = W.shape[1]
        Wa = W.abs()
        c = self.c @ W.T
        mag = self.mag() @ Wa.T
        if b is not None:
            c = c + b
            mag = mag + b.abs()
        A = torch.einsum("...kn,mk->...mn", self.A, W)
        return _AF(c, A, self.r @ Wa.T + _gam(k + self.n) * mag)

    def sum(self, dim):
        k = self.c.shape[dim]
        return _AF(
            self.c.sum(dim),
            self.A.sum(self._ad(dim)),
            self.r.sum(dim) + _gam(k + self.n) * self.mag().sum(dim),
        )

    def mul(self, o: _AF) -> _AF:
        """Elementwise product of two forms (broadcast on S)."""
        rx, ry = self.rad(), o.rad()
        c = self.c * o.c
        A = self.A * o.c[..., None] + o.A * self.c[..., None]
        r = self.c.abs() * o.r + o.c.abs() * self.r + rx * ry
        r = r + _gam(4 + self.n) * (self.c.abs() + rx) * (o.c.abs() + ry)
        return _AF(c, A, r)

    def relu(self, bounds=None):
        """Zonotope ReLU; ``bounds``: sound (lo, hi) of the input, tighter than the form's own
        (e.g. from back-substitution), used for the slopes and the offsets."""
        lo, hi = self.bounds() if bounds is None else bounds
        pos, neg = lo >= 0, hi <= 0
        cross = ~pos & ~neg
        lam = torch.where(
            cross, hi / torch.where(cross, hi - lo, torch.ones_like(hi)), pos.to(_DT)
        ).clamp(0.0, 1.0)
        off = torch.where(cross, torch.maximum(-lam * lo, (1 - lam) * hi), torch.zeros_like(hi))
        off = off * (1 + 8 * _U)
        y = self.scale(lam)
        return y.add_interval(torch.zeros_like(off), off)


def _dot(x: _AF, y: _AF, xeq: str, yeq: str, out: str) -> _AF:
    """Σ over the contracted index of x·y for two forms, as an einsum (e.g. bhqd, bhkd -> bhqk)."""
    xa, ya = x.c.abs(), y.c.abs()
    rx, ry = x.rad(), y.rad()
    c = torch.einsum(f"{xeq},{yeq}->{out}", x.c, y.c)
    A = torch.einsum(f"{xeq}z,{yeq}->{out}z", x.A, y.c) + torch.einsum(
        f"{xeq},{yeq}z->{out}z", x.c, y.A
    )
    r = (
        torch.einsum(f"{xeq},{yeq}->{out}", xa, y.r)
        + torch.einsum(f"{xeq},{yeq}->{out}", x.r, ya)
        + torch.einsum(f"{xeq},{yeq}->{out}", rx, ry)
    )
    k = 1
    for ch in xeq:
        if ch in yeq and ch not in out:
            k *= x.c.shape[xeq.index(ch)]
    r = r + _gam(k + x.n + 4) * torch.einsum(f"{xeq},{yeq}->{out}", xa + rx, ya + ry)
    return _AF(c, A, r)


def _proj_coef(a: _AF, b: _AF):
    """Least-squares slope κ of a's coefficients on b's (0 where b has none)."""
    num = (a.A * b.A).sum(-1)
    den = (b.A * b.A).sum(-1)
    ok = den > 1e-300
    return torch.where(ok, num / torch.where(ok, den, torch.ones_like(den)), torch.zeros_like(den))


# ============================================================================== softmax pieces
def _check_memory(nbytes: int, what: str) -> None:
    """Refuse (ResourceLimitError) before allocating ``nbytes``. Work below 1 MiB is never
    refused (no limit lookup on the propagation's many small calls)."""
    if nbytes > 1 << 20:
        from .resources import require

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


def _lse2(a, b):
    """log(e^a + e^b), elementwise, with -inf handled."""
    m = torch.maximum(a, b)
    m = torch.where(torch.isfinite(m), m, torch.zeros_like(m))
    return m + torch.log(torch.exp(a - m) + torch.exp(b - m))


def _ratio_lower(dL, dU, al, gL, eL, e0L, valid, phi=None, iters: int = 5, want_arg: bool = False):
    """Certified lower bound of ``F = (e0 + e^φ Σ_j w_j e_j) / (1 + e^φ Σ_j w_j)``,
    ``w_j = exp(δ_j)``, over ``e0 >= e0L``, a common ``φ ∈ [phi[0], phi[1]]`` (default 0) and, per
    valid key j, ``δ_j ∈ [dL, dU]``, ``e_j >= max(eL, al·δ_j + gL)`` (keys independent).
    Per-key tensors have shape (..., J); e0L and the phi bounds have shape (...).

    ``F >= λ`` iff ``H(λ) = (e0 - λ) + e^φ Σ_j w_j (e_j - λ) >= 0``. Each key's term is
    minimised in closed form (``min e^δ (αδ + c)`` at an end of its piece or at
    ``δ* = -c/α - 1``); H is concave and decreasing in λ (each term is a minimum of functions
    affine in λ; the worst φ is ``phi[0]`` where the key sum is >= 0 and ``phi[1]`` where it is
    < 0). Every term is kept as a sign and a log-magnitude, so logits of any size (β = 1e4 and
    beyond) neither overflow nor underflow. λ is found by chord and Newton steps from both ends
    of a bracket, with bisection as a safeguard; a λ is accepted only if the positive part of H
    exceeds the negative part by a relative margin of 1e-10 (+ 1e-15·max|δ|) of the magnitudes.
    With ``want_arg`` also returns each key's minimising δ at the final λ."""
    valid = valid & (dL <= dU)
    z = torch.zeros_like(dL)
    dL = torch.where(valid, dL, z)
    dU = torch.where(valid, dU, z)
    al = torch.where(valid, al, z)
    gL = torch.where(valid, gL, z)
    eL = torch.where(valid, eL, z)
    if phi is None:
        phi_lo = phi_hi = torch.zeros(dL.shape[:-1], dtype=_DT)
    else:
        phi_lo, phi_hi = (torch.as_tensor(p, dtype=_DT).expand(dL.shape[:-1]) for p in phi)
    # the line e = al·δ + gL is active (above eL) on piece A, the constant eL on piece B
    pos, negs = al > 0, al < 0
    t = (eL - gL) / torch.where(pos | negs, al, torch.ones_like(al))
    line_all = (al == 0) & (gL >= eL)
    A_lo = torch.where(pos, torch.maximum(dL, t), dL)
    A_hi = torch.where(negs, torch.minimum(dU, t), dU)
    A_ok = valid & (pos | negs | line_all) & (A_lo <= A_hi)
    B_lo = torch.where(negs, torch.maximum(dL, t), dL)
    B_hi = torch.where(pos, torch.minimum(dU, t), dU)
    B_ok = valid & ~line_all & (B_lo <= B_hi)
    A_lo = torch.where(A_ok, A_lo, z)
    A_hi = torch.where(A_ok, A_hi, z)
    B_lo = torch.where(B_ok, B_lo, z)
    B_hi = torch.where(B_ok, B_hi, z)
    inf = torch.full_like(dL, math.inf)
    ninf = -inf
    # F is a convex combination of e0 and the e_j: bracket from the reachable values
    emin = torch.minimum(
        torch.where(A_ok, torch.minimum(al * A_lo, al * A_hi) + gL, inf), torch.where(B_ok, eL, inf)
    )
    emin = torch.minimum(emin, eL.clamp_min(torch.minimum(al * dL, al * dU) + gL))
    lo_l = torch.minimum(e0L, torch.where(valid, emin, inf).amin(-1))
    top = torch.maximum(eL, torch.maximum(al * dL, al * dU) + gL)
    hi_l = torch.maximum(e0L, torch.where(valid, top, ninf).amax(-1))
    hi_l = torch.maximum(hi_l, lo_l)
    lo_l = lo_l - _gam(4) * lo_l.abs() - _TINY
    stp = pos & A_ok
    st_lo = torch.where(stp, gL + al * (A_lo + 1.0), inf)  # δ* ∈ [A_lo, A_hi]
    st_hi = torch.where(stp, gL + al * (A_hi + 1.0), ninf)
    inv_al = torch.where(stp, 1.0 / torch.where(stp, al, torch.ones_like(al)), z)
    log_al = torch.log(torch.where(stp, al, torch.ones_like(al)))
    dmax = (
        torch.where(valid, torch.maximum(dL.abs(), dU.abs()), z).amax(-1)
        if dL.shape[-1]
        else torch.zeros(dL.shape[:-1], dtype=_DT)
    )
    eta = torch.log(1e-10 + 1e-15 * dmax)  # log relative margin
    A_okf, B_okf = A_ok, B_ok

    def keyterms(lam):
        """Per key: sign, log-magnitude and δ of the minimal term at λ."""
        lj = lam.unsqueeze(-1)
        cands = []
        for dd, ok in ((A_lo, A_okf), (A_hi, A_okf)):
            v = al * dd + gL - lj
            cands.append(
                (
                    torch.sign(v),
                    dd + torch.log(v.abs()),
                    dd,
                    ok,
                    al.abs() * dd.abs() + gL.abs() + lj.abs(),
                )
            )
        ds = (lj - gL) * inv_al - 1.0
        st = stp & (lj >= st_lo) & (lj <= st_hi)
        cands.append((-torch.ones_like(ds), ds + log_al, ds, st, al.abs() * ds.abs()))
        q = eL - lj
        dB = torch.where(q >= 0, B_lo, B_hi)
        cands.append((torch.sign(q), dB + torch.log(q.abs()), dB, B_okf, eL.abs() + lj.abs()))
        # minimum: the largest negative, else a zero, else the smallest positive
        best_s = torch.ones_like(dL)
        best_l = inf.clone()
        best_d = z.clone()
        best_m = z.clone()
        for sg, lg, dd, ok, mg in cands:
            lg = torch.where(sg == 0, ninf, lg)
            better = ok & (
                (sg < best_s)
                | ((sg == best_s) & (sg < 0) & (lg > best_l))
                | ((sg == best_s) & (sg > 0) & (lg < best_l))
            )
            best_s = torch.where(better, sg, best_s)
            best_l = torch.where(better, lg, best_l)
            best_d = torch.where(better, dd, best_d)
            best_m = torch.where(better, dd + torch.log(mg.clamp_min(1e-300)), best_m)
        best_s = torch.where(valid, best_s, z)
        return best_s, best_l, best_d, best_m

    def H(lam):
        """Log-parts of H(λ): (log positive part, log negative part + margin, log |slope|)."""
        sg, lg, dd, lm = keyterms(lam)
        Pk = torch.logsumexp(torch.where(sg > 0, lg, ninf), -1)
        Nk = torch.logsumexp(torch.where(sg < 0, lg, ninf), -1)
        ph = torch.where(Pk >= Nk, phi_lo, phi_hi)
        r = e0L - lam
        lr = torch.log(r.abs())
        P = _lse2(Pk + ph, torch.where(r > 0, lr, torch.full_like(lr, -math.inf)))
        N = _lse2(Nk + ph, torch.where(r < 0, lr, torch.full_like(lr, -math.inf)))
        Mk = torch.logsumexp(torch.where(valid, lm, ninf), -1)
        M = _lse2(Mk + ph, torch.log(e0L.abs() + lam.abs() + _TINY))
        Nm = _lse2(N, M + eta)
        Wk = torch.logsumexp(torch.where(valid & (sg != 0) | valid, dd, ninf), -1)
        S = _lse2(torch.zeros_like(Wk), Wk + ph)  # log |dH/dλ|
        return P, Nm, N, S

    def newton(lam, P, N, S):
        """λ + H(λ)/|H'(λ)| (H = e^P - e^N)."""
        m = torch.maximum(P, N)
        d = (P - N).abs()
        lh = m + torch.log((-torch.expm1(-d)).clamp_min(1e-300))
        step = torch.exp((lh - S).clamp(max=700.0))
        step = torch.where(torch.isfinite(m), step, torch.zeros_like(step))
        return lam + torch.where(P >= N, step, -step)

    lo, hi = lo_l.clone(), hi_l.clone()
    Pl, Nl, _, Sl = H(lo)
    Ph, Nh, _, Sh = H(hi)
    ok_hi = Ph >= Nh
    one = torch.ones_like(lo)

    def chord():
        # H(lo) >= 0 > H(hi): f = H(lo) / (H(lo) - H(hi))
        ml = torch.maximum(Pl, Nl)
        lhl = ml + torch.log((-torch.expm1(-(Pl - Nl).abs())).clamp_min(1e-300))
        mh = torch.maximum(Ph, Nh)
        lhh = mh + torch.log((-torch.expm1(-(Ph - Nh).abs())).clamp_min(1e-300))
        f = torch.sigmoid(lhl - lhh)
        f = torch.where((Pl >= Nl) & (Ph < Nh), f, 0.5 * one)
        return lo + (hi - lo) * f

    # H concave: a tangent's root lies right of the root (Newton moves hi, monotonically from
    # the right), the chord's root left of it (moves lo); the mirror of the last Newton step
    # (hi - its length) usually lands just left of the root; bisection every third round
    last = [hi - lo]

    def newton_hi():
        x = newton(hi, Ph, Nh, Sh)
        last[0] = (hi - x).abs()
        return x

    def mirror():
        return hi - torch.maximum(2.0 * last[0], 1e-13 * (hi.abs() + lo.abs()))

    def bisect():
        return 0.5 * lo + 0.5 * hi

    for it in range(iters):
        for k, step in enumerate([newton_hi, mirror, chord] + ([bisect] if it % 3 == 2 else [])):
            x = step()
            x = torch.where(torch.isfinite(x), x, 0.5 * lo + 0.5 * hi)
            if k > 0:  # meant to move lo: keep it a little left of hi (float ties)
                x = torch.minimum(x, hi - 1e-13 * (hi.abs() + lo.abs()) - 1e-300)
            x = torch.minimum(torch.maximum(x, lo), hi)
            Px, Nx, _, Sx = H(x)  # N includes the margin: iterate on the margined H
            good = Px >= Nx
            mv_lo = good & (x > lo)
            mv_hi = ~good & (x < hi)
            lo = torch.where(mv_lo, x, lo)
            Pl, Nl, Sl = (torch.where(mv_lo, a, b) for a, b in ((Px, Pl), (Nx, Nl), (Sx, Sl)))
            hi = torch.where(mv_hi, x, hi)
            Ph, Nh, Sh = (torch.where(mv_hi, a, b) for a, b in ((Px, Ph), (Nx, Nh), (Sx, Sh)))
        if bool(((hi - lo) <= 1e-12 * (lo.abs() + hi.abs()) + 1e-300).all()):
            break
    lam = torch.where(ok_hi, hi_l, lo)
    if not want_arg:
        return lam
    return lam, keyterms(lam)[2]


def _ratio_bounds(dL, dU, al, gL, gU, eL, eU, e0L, e0U, valid, phi=None, want_arg=False):
    """(lower, upper) of F for the parallelogram regions (see :func:`_ratio_lower`); with
    ``want_arg`` also the minimising and maximising δ per key."""
    lower = _ratio_lower(dL, dU, al, gL, eL, e0L, valid, phi, want_arg=want_arg)
    upper = _ratio_lower(dL, dU, -al, -gU, -eU, -e0U, valid, phi, want_arg=want_arg)
    if want_arg:
        return lower[0], -upper[0], lower[1], upper[1]
    return lower, -upper


def _coupled_F(
    delta: _AF, e: _AF, e0L, e0U, valid, dL=None, dU=None, eL=None, eU=None, want_arg=False
):
    """Bounds of Σ_j p_j e_j (+ reference term e0) with logit differences ``delta`` (..., J)."""
    if dL is None:
        dL, dU = delta.bounds()
    if eL is None:
        eL, eU = e.bounds()
    al = _proj_coef(e, delta)
    gam = e - delta.scale(al)
    gL, gU = gam.bounds()
    return _ratio_bounds(dL, dU, al, gL, gU, eL, eU, e0L, e0U, valid, want_arg=want_arg)


# ============================================================================== the model
def unsupported_reason(model, task=None) -> str | None:
    """Why :func:`upper_bracket` cannot bound this model/task (None if it can)."""
    cfg = getattr(model, "cfg", None)
    if cfg is None or not hasattr(model, "layers"):
        return "not an approxtheory.model.Transformer"
    if cfg.layernorm:
        return "LayerNorm is not supported by the bound propagation"
    if cfg.rope is not None and (cfg.rope == "full" or int(cfg.rope) > 0):
        return "RoPE is not supported by the bound propagation"
    if cfg.causal:
        return "causal masks are not supported by the bound propagation"
    if cfg.readout != "cls":
        return "per-token read-out is not supported (only the CLS read-out)"
    if getattr(cfg, "tie_embeddings", False):
        return "a read-out tied to the embedding is not supported (an MLP read-out is)"
    if cfg.ffn_kind not in ("relu", "bilinear") and any(s.ffn_hidden for s in cfg.layers):
        return f"ffn_kind={cfg.ffn_kind!r} is not supported (relu or bilinear only)"
    if cfg.head_activation not in ("relu", "identity") and cfg.head_hidden:
        return f"head_activation={cfg.head_activation!r} is not supported (relu or identity)"
    if task is not None:
        if not all(hasattr(task, a) for a in ("T", "d", "lo", "hi", "target")):
            return "not an approxtheory task (it needs T, d, lo, hi and target)"
        if getattr(task, "domain", "box") != "box":
            return f"domain {task.domain!r} is not a box"
        if getattr(task, "per_token", False):
            return "per-token targets are not supported"
        if cfg.d_in != task.d:
            return f"model d_in={cfg.d_in} differs from the task's d={task.d}"
        if cfg.positions != "none" and cfg.seq_len != task.T:
            return f"model was built for T={cfg.seq_len}, the task has T={task.T}"
        r = _target_reason(task)
        if r:
            return r
    return None


def _t(x):
    return x.detach().to(_DT).cpu()


def _mlp_forward(mlp, h: _AF) -> _AF:
    for mod in mlp:
        if isinstance(mod, torch.nn.Linear):
            h = h.linear(_t(mod.weight), None if mod.bias is None else _t(mod.bias))
        elif isinstance(mod, torch.nn.ReLU):
            h = h.relu()
        elif isinstance(mod, torch.nn.Identity):
            pass
        else:
            raise _Unsupported(f"layer {type(mod).__name__} is not supported")
    return h


# ============================================================================== back-substitution
def _mlp_ops(mlp):
    """The MLP as a list of ('lin', W, b) and ('relu',) steps (Identity dropped)."""
    ops: list[tuple] = []
    for mod in mlp:
        if isinstance(mod, torch.nn.Linear):
            ops.append(("lin", _t(mod.weight), None if mod.bias is None else _t(mod.bias)))
        elif isinstance(mod, torch.nn.ReLU):
            ops.append(("relu",))
        elif isinstance(mod, torch.nn.Identity):
            pass
        else:
            raise _Unsupported(f"layer {type(mod).__name__} is not supported")
    return ops


def _relu_relax(lo, hi, alpha=None):
    """Linear relaxation of relu(z) on [lo, hi]: (upper slope, upper offset, lower slope) with
    ``slope_l·z <= relu(z) <= slope_u·z + off_u`` for every real z in [lo, hi]. Unstable units:
    the chord above (its offset re-derived from both ends, rounded up, so any float slope is
    sound) and ``α z`` below, α ∈ [0, 1] (default: 1 where hi >= -lo, else 0)."""
    on, off = lo >= 0, hi <= 0
    cross = ~on & ~off
    den = torch.where(cross, hi - lo, torch.ones_like(hi))
    s = torch.where(cross, hi / den, on.to(_DT)).clamp(0.0, 1.0)
    t = torch.maximum(-s * lo, hi - s * hi).clamp_min(0.0)
    t = t + 4 * _U * (s * lo.abs() + 2 * hi.abs()) + 4 * _TINY
    t = torch.where(cross, t, torch.zeros_like(t))
    if alpha is None:
        alpha = (hi >= -lo).to(_DT)
    a = torch.where(cross, alpha.clamp(0.0, 1.0), on.to(_DT))
    return s, t, a


def _backsub(ops, relax, mags, x0: _AF, Lam, nu):
    """Upper bound of ``Λ·y + ν`` (Λ: (B, R, w), ν: (B, R)) where y = ops(x), x ∈ x0, as a form
    ``κ + G ε`` (returned as an :class:`_AF` with r = 0 whose upper end bounds it): walk the ops
    backwards; a linear step is exact (plus a rounding allowance γ·|Λ||W|·|input|), a ReLU
    uses the chord where its coefficient is >= 0 and α z where it is < 0 (CROWN).
    ``relax[i]``: (s, t, a) of the i-th op if a ReLU; ``mags[i]``: a bound of |input of op i|."""
    for i in range(len(ops) - 1, -1, -1):
        op = ops[i]
        if op[0] == "lin":
            W, b = op[1], op[2]
            m = W.shape[0]
            La = Lam.abs()
            err = _gam(m + 2) * (
                torch.einsum("brm,mk->brk", La, W.abs()) * mags[i][:, None, :]
            ).sum(-1)
            new = torch.einsum("brm,mk->brk", Lam, W)
            if b is not None:
                nb = torch.einsum("brm,m->br", Lam, b)
                err = err + _gam(m + 2) * (torch.einsum("brm,m->br", La, b.abs()) + nu.abs())
                nu = nu + nb
            nu = nu + err * (1 + 4 * _U) + _TINY
            Lam = new
        else:
            s, t, a = relax[i]
            P, N = Lam.clamp_min(0.0), Lam.clamp_max(0.0)
            new = P * s[:, None, :] + N * (a[:, None, :] if a.dim() == 2 else a)
            off = (P * t[:, None, :]).sum(-1)
            w = Lam.shape[-1]
            err = _gam(w + 2) * (off + (new.abs() * mags[i][:, None, :]).sum(-1))
            nu = nu + off + err * (1 + 4 * _U) + _TINY
            Lam = new
    k = x0.shape[-1]
    La = Lam.abs()
    G = torch.einsum("brk,bkn->brn", Lam, x0.A)
    kap = nu + torch.einsum("brk,bk->br", Lam, x0.c) + torch.einsum("brk,bk->br", La, x0.r)
    err = _gam(k + x0.n + 4) * (torch.einsum("brk,bk->br", La, x0.mag()) + nu.abs())
    kap = kap + err * (1 + 4 * _U) + _TINY
    return _AF(kap, G, torch.zeros_like(kap))


def _alpha_choices(ops, i):
    """Lower-slope choices for the ReLUs before op i: each a dict {op index: 'a'|'0'|'1'}
    ('a': adaptive, '0'/'1': constant); all combinations for up to two ReLUs, else the three
    uniform choices."""
    idx = [k for k in range(i) if ops[k][0] == "relu"]
    if len(idx) <= 2:
        import itertools

        return [dict(zip(idx, c)) for c in itertools.product("a01", repeat=len(idx))]
    return [{k: c for k in idx} for c in "a01"]


def _crown_mlp(ops, x0: _AF):
    """CROWN bounds of an MLP (``ops`` from :func:`_mlp_ops`) on the input form x0 (B, k):
    every ReLU's input bounds by back-substitution to x0 (intersected with the zonotope's),
    then the outputs'; each back-substitution is run for a few choices of the lower slopes
    (:func:`_alpha_choices`) and the tightest bound per row is kept (each one is valid).
    Returns (U, L, z): forms whose upper (U) / lower (L) end bound every output from above /
    below as linear functions of the noise symbols (the best choice per box and output), and
    the zonotope output z (propagated with the tightened bounds)."""
    ranges: dict[int, tuple[torch.Tensor, torch.Tensor]] = {}
    mags: dict[int, torch.Tensor] = {}
    h = x0

    def best(upto, Lam):
        """Per row the tightest back-substituted upper form over the slope choices (all
        choices in one pass, stacked along the rows, each row with its own lower slopes)."""
        B, R = Lam.shape[:2]
        choices = _alpha_choices(ops, upto)
        K = len(choices)
        relax = {}
        for k, (lo, hi) in ranges.items():
            if k >= upto:
                continue
            s, t, a = _relu_relax(lo, hi)
            rows = []
            for ch in choices:
                c = ch.get(k, "a")
                ak = a if c == "a" else _relu_relax(lo, hi, torch.full_like(lo, float(c)))[2]
                rows.append(ak[:, None, :].expand(B, R, ak.shape[-1]))
            relax[k] = (s, t, torch.cat(rows, 1))
        g = _backsub(
            ops[:upto], relax, mags, x0, Lam.repeat(1, K, 1), torch.zeros(B, K * R, dtype=_DT)
        )
        gu = g.bounds()[1].reshape(B, K, R)
        j = gu.argmin(1)  # (B, R)
        idx = j * R + torch.arange(R)[None, :]  # rows of g
        f = g.gather(1, idx)
        return f, gu.amin(1)

    for i, op in enumerate(ops):
        lo, hi = h.bounds()
        if op[0] == "relu":
            if any(o[0] == "relu" for o in ops[:i]):
                B, w = h.shape
                eye = torch.eye(w, dtype=_DT)
                _, fu = best(i, torch.cat([eye, -eye])[None].expand(B, 2 * w, w))
                lo, hi = torch.maximum(lo, -fu[:, w:]), torch.minimum(hi, fu[:, :w])
                hi = torch.maximum(hi, lo)
            mags[i] = torch.maximum(lo.abs(), hi.abs())
            ranges[i] = (lo, hi)
            h = h.relu((lo, hi))
        else:
            mags[i] = torch.maximum(lo.abs(), hi.abs())
            h = h.linear(op[1], op[2])
    B, m = h.shape
    eye = torch.eye(m, dtype=_DT)
    f, _ = best(len(ops), torch.cat([eye, -eye])[None].expand(B, 2 * m, m))
    U = f.narrow(1, 0, m)
    L = -f.narrow(1, m, m)
    return U, L, h


def _input_af(lo, hi):
    """Input boxes (B, T, d) as affine forms with one noise symbol per coordinate."""
    B, T, d = lo.shape
    c = 0.5 * lo + 0.5 * hi
    half = torch.maximum(hi - c, c - lo) * (1 + 4 * _U)
    A = torch.diag_embed(half.reshape(B, T * d)).reshape(B, T, d, T * d)
    return _AF(c, A, torch.zeros_like(c))


def _embed(model, x: _AF) -> _AF:
    cfg = model.cfg
    B, T, _ = x.shape
    n = x.n
    h = x
    if cfg.positions == "onehot":
        eye = torch.eye(T, dtype=_DT).expand(B, T, T)
        h = _AF.cat([h, _AF.const(eye, n)], -1)
    h = _mlp_forward(model.embed, h)
    if model.pos is not None:
        h = h + _t(model.pos)
    if model.cls is not None:
        cls = _t(model.cls).expand(B, 1, h.shape[-1])
        h = _AF.cat([h, _AF.const(cls, n)], 1)
    return h


def _key_count(model, T_tot):
    """Keys attended to: the T input tokens (CLS not a key) or all T_tot tokens."""
    if model.cls is not None and not model.cfg.cls_is_key:
        return T_tot - 1
    return T_tot


def _qkv(attn, h: _AF, hq: _AF, Jk: int):
    B, Tq = hq.shape[0], hq.shape[1]
    H, n, c, G = attn.h, attn.n, attn.c, attn.g
    bias = lambda lin: None if lin.bias is None else _t(lin.bias)
    hk = h.narrow(1, 0, Jk)
    q = hq.linear(_t(attn.q.weight), bias(attn.q)).reshape(B, Tq, H, n).transpose(1, 2)
    k = hk.linear(_t(attn.k.weight), bias(attn.k)).reshape(B, Jk, G, n).transpose(1, 2)
    v = hk.linear(_t(attn.v.weight), bias(attn.v)).reshape(B, Jk, G, c).transpose(1, 2)
    if G != H:
        idx = torch.arange(H) // (H // G)
        k, v = k.index(1, idx), v.index(1, idx)
    return q, k, v


def _attend(logits: _AF, v: _AF) -> _AF:
    """Σ_j softmax(logits)_j v_j for logits (B, H, Tq, J) and values (B, H, J, c)."""
    B, H, Tq, J = logits.shape
    c = v.shape[-1]
    lL, lU = logits.bounds()
    # a NaN bound (overflowed forms) knows nothing: the widest interval, never a masked key
    lL = torch.where(torch.isnan(lL), torch.full_like(lL, -math.inf), lL)
    lU = torch.where(torch.isnan(lU), torch.full_like(lU, math.inf), lU)
    pl, pu = softmax_bounds(lL, lU)  # (B, H, Tq, J)
    ph = torch.softmax(logits.c, -1).clamp(min=0.0)
    ph = torch.minimum(torch.maximum(ph, pl), pu)
    ref = logits.c.argmax(-1)  # (B, H, Tq)
    vq = v.unsqueeze(2).expand_to((B, H, Tq, J, c))
    idx = ref[..., None, None].expand(B, H, Tq, 1, c)
    v_r = vq.gather(3, idx)  # (B, H, Tq, 1, c)
    e = vq - v_r.expand_to((B, H, Tq, J, c))  # (B, H, Tq, J, c)
    v_r = v_r.reshape(B, H, Tq, c)
    eL, eU = e.bounds()
    emax = torch.maximum(eL.abs(), eU.abs())
    # (iii) affine: Σ_j p̂_j e_j ± Σ_j |p_j - p̂_j| max|e_j|
    prad = torch.maximum(pu - ph, ph - pl).clamp_min(0.0)
    affine = v_r + e.scale(ph[..., None]).sum(3)
    dev = (prad[..., None] * emax).sum(3) * (1 + _gam(J))
    affine = affine.add_interval(-dev, dev)
    if bool((logits.A == 0).all()) and bool((logits.r == 0).all()):
        # constant logits (e.g. W_Q = 0): p = softmax(c) up to the softmax slack, so the
        # affine form is exact up to round-off and no interval of F can be narrower
        return affine
    # (i) LP over the simplex ∩ box and (ii) coupled ratio bound: an interval for F
    plx, pux = pl[..., None, :].expand(B, H, Tq, c, J), pu[..., None, :].expand(B, H, Tq, c, J)
    FU = _simplex_lp_max(eU.transpose(-1, -2), plx, pux)
    FL = -_simplex_lp_max(-eL.transpose(-1, -2), plx, pux)
    delta = logits - logits.gather(3, ref[..., None]).expand_to((B, H, Tq, J))
    onehot = torch.nn.functional.one_hot(ref, J).bool()
    valid = ~onehot
    dl = delta.unsqueeze(3).expand_to((B, H, Tq, c, J))
    el = e.transpose(3, 4)
    z = torch.zeros(B, H, Tq, c, dtype=_DT)
    cL, cU = _coupled_F(dl, el, z, z, valid[:, :, :, None, :].expand(B, H, Tq, c, J))
    FL, FU = torch.maximum(FL, cL), torch.minimum(FU, cU)
    FU = torch.maximum(FU, FL)
    interval = v_r.add_interval(FL, FU)
    use_aff = affine.rad() <= interval.rad()
    return _AF.where(use_aff, affine, interval)


def _ffn_forward(ffn, cfg, x: _AF) -> _AF:
    if cfg.ffn_kind == "bilinear":
        b = lambda lin: None if lin.bias is None else _t(lin.bias)
        a1 = x.linear(_t(ffn.w1.weight), b(ffn.w1))
        a3 = x.linear(_t(ffn.w3.weight), b(ffn.w3))
        return a1.mul(a3).linear(_t(ffn.w2.weight), b(ffn.w2))
    return _mlp_forward(ffn.mlp, x)


def _block(model, blk, h: _AF, n_query: int | None = None, stop_after_attn_logits=False):
    cfg = model.cfg
    attn = blk.attn
    B, T_tot = h.shape[0], h.shape[1]
    Jk = _key_count(model, T_tot)
    hq = h if n_query is None else h.narrow(1, T_tot - n_query, n_query)
    Tq = hq.shape[1]
    q, k, v = _qkv(attn, h, hq, Jk)
    logits = _dot(q, k, "bhqd", "bhkd", "bhqk").scale(torch.tensor(attn.scale, dtype=_DT))
    if stop_after_attn_logits:
        return hq, q, k, v, logits
    y = _attend(logits, v)  # (B, H, Tq, c)
    y = y.transpose(1, 2).reshape(B, Tq, attn.h * attn.c)
    o = y.linear(_t(attn.o.weight), None if attn.o.bias is None else _t(attn.o.bias))
    x = hq + o if cfg.residual else o
    if blk.ffn is not None:
        f = _ffn_forward(blk.ffn, cfg, x)
        x = x + f if cfg.ffn_residual else f
    return x


def _forward_af(model, x: _AF, all_states=False, head_input=False):
    h = _embed(model, x)
    states = [h]
    L = len(model.layers)
    for i, blk in enumerate(model.layers):
        last_only = (not all_states) and model.cls is not None and i == L - 1
        h = _block(model, blk, h, n_query=1 if last_only else None)
        states.append(h)
    if head_input:
        return h.narrow(1, h.shape[1] - 1, 1).reshape(h.shape[0], -1)
    out = _mlp_forward(
        model.head,
        h.narrow(1, h.shape[1] - 1, 1).reshape(h.shape[0], -1) if model.cls is not None else h,
    )
    return (out, states) if all_states else out


def layer_bounds(model, lo, hi):
    """Interval bounds of every residual-stream state (as :meth:`Transformer.hidden_states`:
    the input stream, then after each layer) and of the output, for inputs in the box(es)
    ``lo <= X <= hi`` of shape (T, d) or (B, T, d). Returns ``(states, out)``: a list of
    (lo, hi) pairs and one (lo, hi) pair. The box must be finite with ``lo <= hi``, d the
    model's ``d_in`` and T its ``seq_len`` when it has positions (ConfigError otherwise); a
    bound the propagation cannot give (overflow) is -inf / +inf, never NaN."""
    r = unsupported_reason(model)
    if r:
        raise ConfigError(r)
    cfg = model.cfg
    T = int(cfg.seq_len) if cfg.positions != "none" else None
    lo, hi = _as_boxes(lo, hi, int(cfg.d_in), T, "layer_bounds")
    B, T_, d_ = lo.shape
    _require_forms(model, B, T_, d_, f"layer_bounds on {B} box(es) of ({T_}, {d_})")
    with torch.no_grad():
        out, states = _forward_af(model, _input_af(lo, hi), all_states=True)
    return [_no_nan(*s.bounds()) for s in states], _no_nan(*out.bounds())


def _no_nan(L, U):
    """A NaN bound (the propagation overflowed) bounds nothing: -inf / +inf, never NaN."""
    return (
        torch.where(torch.isnan(L), torch.full_like(L, -math.inf), L),
        torch.where(torch.isnan(U), torch.full_like(U, math.inf), U),
    )


# ============================================================================== targets
def _target_reason(task) -> str | None:
    from .tasks import GeneralizedRetrieval, KthLargest, Memorize

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


def _target_af(task, x: _AF) -> _AF:
    """The target on the boxes as an affine form, shape (B, m)."""
    from .tasks import GeneralizedRetrieval, KthLargest, Memorize

    B, T, d = x.shape
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


# ============================================================================== error bounds
class _Ctx:
    """Everything fixed for one (model, task): support check, method, head matching."""

    def __init__(self, model, task):
        self.model, self.task = model, task
        r = unsupported_reason(model, task)
        if r:
            raise _Unsupported(r)
        from .tasks import GeneralizedRetrieval

        cfg = model.cfg
        last = model.block(-1) if len(model.layers) else None
        self.coupled = (
            isinstance(task, GeneralizedRetrieval)
            and last is not None
            and last.ffn is None
            and not cfg.cls_is_key
            and model.cls is not None
            and len(model.head) == 1
            and cfg.d_out == 1
        )
        self.match = None
        self.slices = 8
        self.method = "coupled" if self.coupled else "affine"
        # generic path: CROWN on a ReLU read-out after the CLS state
        self.head_ops = _mlp_ops(model.head)
        self.crown = (
            not self.coupled
            and model.cls is not None
            and any(o[0] == "relu" for o in self.head_ops)
        )
        self.split_heur = None
        # generic path: a one-term generalized retrieval target is bounded exactly (LP / t)
        self.one_term = None
        if isinstance(task, GeneralizedRetrieval) and cfg.d_out == 1:
            assert task.outer_affine is not None  # _target_reason turned the others away
            nz = [i for i in range(task.D) if task.outer_affine[0][i] != 0]
            if len(nz) == 1:
                self.one_term = nz[0]

    def split_points(self, lo, hi):
        """Where to split each coordinate of the boxes (B, T, d): the midpoint, or, on the
        generic path with a ReLU read-out, the zero crossing of a first-layer read-out ReLU
        that is unstable on the box and depends mainly on that coordinate (the one nearest
        the midpoint), so that the children make it stable (branching on the activation)."""
        mid = 0.5 * lo + 0.5 * hi
        if not self.crown or self.head_ops[0][0] != "lin" or self.split_heur is False:
            return mid, None
        B, T, d = lo.shape
        x = _input_af(lo, hi)
        h = _forward_af(self.model, x, head_input=True)
        z = h.linear(self.head_ops[0][1], self.head_ops[0][2])  # (B, w)
        Aa = z.A.abs()
        tot = Aa.sum(-1, keepdim=True) + z.r[..., None]
        dom = (Aa >= 0.99 * tot) & (Aa > 0)
        if self.split_heur is None:
            # decided once, on the first boxes: do the read-out's first ReLUs each read
            # (almost) one input coordinate? Otherwise keep the default branching.
            self.split_heur = bool((dom.any(-1) | (tot[..., 0] == 0)).to(_DT).mean() >= 0.9)
            if not self.split_heur:
                return mid, None
        es = -z.c[..., None] / torch.where(dom, z.A, torch.ones_like(z.A))  # (B, w, n)
        es = torch.where(dom & (es.abs() < 0.9), es, torch.full_like(es, math.inf))
        best = es.gather(1, es.abs().argmin(1, keepdim=True))[:, 0]  # (B, n)
        nun = (
            (dom & ((-z.c[..., None] / torch.where(dom, z.A, torch.ones_like(z.A))).abs() < 1))
            .sum(1)
            .to(_DT)
        )  # (B, n)
        n = x.n
        if n != T * d or not bool((nun > 0).all()):
            # some box has no unstable read-out ReLU tied to one coordinate: the default
            # (widest coordinates, midpoints)
            return mid, None
        half = torch.diagonal(x.A.reshape(B, n, n), dim1=-2, dim2=-1).reshape(B, T, d)
        pt = x.c + best.reshape(B, T, d) * half
        ok = torch.isfinite(best.reshape(B, T, d)) & (pt > lo) & (pt < hi)
        w = (hi - lo).reshape(B, n)
        wmax = w.amax(-1, keepdim=True).clamp_min(1e-300)
        # unstable ReLUs that a split of the coordinate can fix, then the width
        smear = nun / nun.amax(-1, keepdim=True).clamp_min(1.0) + 1e-3 * w / wmax
        # never a coordinate much narrower than the widest (slivers shave the bound by tiny
        # amounts that greedy strong branching would prefer to real progress)
        smear = torch.where(w > 0.05 * wmax, smear, -torch.ones_like(smear))
        return torch.where(ok, pt, mid), smear

    def _generic(self, x: _AF):
        """(errL, errU) on the generic path: the zonotope output and, with a ReLU read-out,
        CROWN's linear bounds, each against the target (exactly for a one-term retrieval
        target), intersected."""
        if self.crown:
            h = _forward_af(self.model, x, head_input=True)
            U, Lf, out = _crown_mlp(self.head_ops, h)
            pairs = [(out, out), (Lf, U)]
        else:
            out = _forward_af(self.model, x)
            pairs = [(out, out)]
        if self.one_term is None:
            y = _target_af(self.task, x)
            if out.shape != y.shape:
                raise _Unsupported(
                    f"model output shape {tuple(out.shape[1:])} does not match "
                    f"the target's {tuple(y.shape[1:])}"
                )
        else:
            if out.shape[-1] != 1:
                raise _Unsupported(
                    f"model output shape {tuple(out.shape[1:])} does not match the target's (1,)"
                )
            parts = _retrieval_parts(self.task, x)
            g, S, opt = parts[0]
            gS = g.index(1, torch.tensor(S))
            c0 = float(self.task.outer_affine[1])
        L = U = None
        for lo_f, hi_f in pairs:
            if self.one_term is None:
                l_ = (lo_f - y).bounds()[0]
                u_ = (hi_f - y).bounds()[1]
            else:
                B = lo_f.shape[0]
                l_ = _minus_opt(lo_f.reshape(B) - c0, gS, opt, "lower")[:, None]
                u_ = _minus_opt(hi_f.reshape(B) - c0, gS, opt, "upper")[:, None]
            L = l_ if L is None else torch.maximum(L, l_)
            U = u_ if U is None else torch.minimum(U, u_)
        return L, U

    # ---- coupled path pieces
    def _last_layer_terms(self, x: _AF):
        model = self.model
        cfg = model.cfg
        h = _embed(model, x)
        *first, blk = model.layers
        for b in first:
            h = _block(model, b, h)
        attn = blk.attn
        B = h.shape[0]
        hq, _, _, v, logits = _block(model, blk, h, n_query=1, stop_after_attn_logits=True)
        s = logits.reshape(B, attn.h, -1)  # (B, H, T)
        readout = model.readout_linear(0)
        W_head = _t(readout.weight)  # (1, E)
        b_head = None if readout.bias is None else _t(readout.bias)
        Wo = _t(attn.o.weight)  # (E, H·c)
        Wr = (W_head @ Wo).reshape(attn.h, attn.c)  # (H, c)
        # u[b, h, j] = Σ_c Wr[h, c] v[b, h, j, c]
        u = v.scale(Wr[None, :, None, :]).sum(3)  # (B, H, T)
        cls = hq.reshape(B, -1)
        base = cls if cfg.residual else _AF.const(torch.zeros(B, cls.shape[-1], dtype=_DT), x.n)
        if attn.o.bias is not None:
            base = base + _t(attn.o.bias)
        K = base.linear(W_head, b_head).reshape(B)
        return s, u, K

    def _make_match(self, s, u, parts):
        H = s.shape[1]
        cand = []
        for hh in range(H):
            for i, (g, S, _opt) in enumerate(parts):
                idx = torch.tensor(S)
                diff = u.index(1, torch.tensor([hh])).reshape(u.shape[0], -1).index(
                    1, idx
                ) - g.index(1, idx)
                dl, du = diff.bounds()
                gl, gu = g.index(1, idx).bounds()
                scale = float((gu.amax() - gl.amin()).clamp_min(1e-12))
                mis = float(torch.maximum(dl.abs(), du.abs()).amax()) / scale
                if mis < 0.5:
                    cand.append((mis, hh, i))
        cand.sort()
        used_h, used_i, match = set(), set(), {}
        for _, hh, i in cand:
            if hh not in used_h and i not in used_i:
                match[hh] = i
                used_h.add(hh)
                used_i.add(i)
        return match

    def bounds(self, lo, hi, want_witness: bool = False):
        """(errL, errU) of model - target on each box, shape (B, m); with ``want_witness``
        (coupled path only) also candidate inputs (n, T, d) near the bound's extremes."""
        x = _input_af(lo, hi)
        if not self.coupled:
            L, U = self._generic(x)
            return (L, U, None) if want_witness else (L, U)
        s, u, K = self._last_layer_terms(x)
        parts = _retrieval_parts(self.task, x)
        if self.match is None:
            self.match = self._make_match(s, u, parts)
        B = x.shape[0]
        total = K - float(self.task.outer_affine[1])
        L = torch.zeros(B, dtype=_DT)
        U = torch.zeros(B, dtype=_DT)
        matched_parts = set(self.match.values())
        rows: dict[str, list] = {"l": [], "u": []}
        for hh in range(s.shape[1]):
            sh = s.index(1, torch.tensor([hh])).reshape(B, -1)
            uh = u.index(1, torch.tensor([hh])).reshape(B, -1)
            if hh in self.match:
                g, S, opt = parts[self.match[hh]]
                r = _retrieval_term(sh, uh, g, S, opt, self.slices, want_witness)
                l_, u_ = r[0], r[1]
                if want_witness:
                    rows["l"].append(r[2])
                    rows["u"].append(r[3])
            else:
                ref = sh.c.argmax(-1)
                u_r = uh.gather(1, ref[:, None])
                s_r = sh.gather(1, ref[:, None])
                J = sh.shape[1]
                valid = ~torch.nn.functional.one_hot(ref, J).bool()
                z = torch.zeros(B, dtype=_DT)
                l_, u_ = _coupled_F(
                    sh - s_r.expand_to(sh.shape), uh - u_r.expand_to(uh.shape), z, z, valid
                )
                total = total + u_r.reshape(B)
            L, U = L + l_, U + u_
        for i, (g, S, opt) in enumerate(parts):
            if i not in matched_parts:
                total = total - _opt_af(g, S, opt)
        tl, tu = total.bounds()
        lo_, hi_ = tl + L, tu + U
        m = _gam(4) * (lo_.abs() + hi_.abs() + L.abs() + U.abs()) + _TINY
        lo_, hi_ = (lo_ - m)[:, None], (hi_ + m)[:, None]
        if not want_witness:
            return lo_, hi_
        Xs = [_invert(x, rows[side]) for side in ("l", "u") if rows[side]]
        return lo_, hi_, (torch.cat(Xs) if Xs else None)


def _invert(x: _AF, rows, iters: int = 300):
    """Inputs whose logit gaps match the bound's extremal gaps: box-constrained least squares
    ``min Σ (c + A ε - δ*)²`` over ε ∈ [-1, 1]^n by projected gradient (heuristic)."""
    c = torch.cat([r[0] for r in rows], 1)  # (B, R)
    A = torch.cat([r[1] for r in rows], 1)  # (B, R, n)
    tgt = torch.cat([r[2] for r in rows], 1)
    w = torch.cat([r[3] for r in rows], 1).to(_DT)
    # keys whose weight at the extremum is negligible hardly matter where they sit
    w = w * torch.exp(torch.nan_to_num(tgt, nan=0.0).clamp(-7.0, 0.0))
    fin = torch.isfinite(tgt) & torch.isfinite(c)
    w = w * fin
    tgt = torch.where(fin, tgt, torch.zeros_like(tgt))
    c = torch.where(fin, c, torch.zeros_like(c))
    lip = ((A * A).sum((1, 2)) * 1.0).clamp_min(1e-300)  # >= ||A||_2²
    eps = torch.zeros(A.shape[0], A.shape[2], dtype=_DT)
    for _ in range(iters):
        res = (c + torch.einsum("brn,bn->br", A, eps) - tgt) * w
        grad = torch.einsum("brn,br->bn", A, res)
        eps = (eps - grad / lip[:, None]).clamp(-1.0, 1.0)
    X = x.c + torch.einsum("btdn,bn->btd", x.A, eps)
    return X


def _tighten(lo, hi, kap, rhoL, bound, active):
    """Tighten [lo, hi] of x from ``κ x + ρ <= bound`` (ρ >= rhoL) where ``active``."""
    nz = active & (kap != 0)
    ka = torch.where(nz, kap, torch.ones_like(kap))
    tb = (bound - rhoL) / ka
    sg = torch.sign(kap)
    tb = tb + ((tb.abs() + (bound.abs() + rhoL.abs()) / ka.abs()) * (8 * _U) + _TINY) * sg
    hi = torch.where(nz & (kap > 0), torch.minimum(hi, tb), hi)
    lo = torch.where(nz & (kap < 0), torch.maximum(lo, tb), lo)
    return lo, hi


def _ref_slices(F: _AF, ar, ref_idx, a, zmid, zhalf):
    """Interval of the form F (B, C) on each slice ``a·ε_ref ∈ [zmid - zhalf, zmid + zhalf]``
    of its candidate's reference symbols: returns (lo, hi) of shape (B, C, K)."""
    FA = F.A[:, ar[:, None], ref_idx]  # (B, C, d)
    aa = (a * a).sum(-1)
    ok = aa > 0
    kap = torch.where(
        ok, (FA * a).sum(-1) / torch.where(ok, aa, torch.ones_like(aa)), torch.zeros_like(aa)
    )
    ka = kap[..., None] * a
    perp = (FA - ka).abs().sum(-1) + _gam(FA.shape[-1]) * (FA.abs() + ka.abs()).sum(-1)
    Aall = F.A.abs().sum(-1)
    rest = (Aall - FA.abs().sum(-1)).clamp_min(0.0) + _gam(F.n) * Aall + F.r
    c = F.c[..., None] + kap[..., None] * zmid
    rad = kap.abs()[..., None] * zhalf + (perp + rest)[..., None]
    m = _gam(F.n + 8) * (c.abs() + rad) + _TINY
    return c - rad - m, c + rad + m


def _retrieval_term(s: _AF, u: _AF, g: _AF, S, opt: str, slices: int = 8, want_arg: bool = False):
    """Bounds of ``Σ_j softmax(s)_j u_j - opt_{t∈S} g_t`` (all (B, T) forms), per box (B,).

    For each candidate t' in S that can attain the max, on the region where it does: the
    difference form (logit gaps δ_j = s_j - s_t', e_j = u_j - g_t', each key with its own copy
    of the reference) and, with ``slices`` > 0, the shared-reference form (one common factor
    e^{-s_t'} for all keys, the reference sliced along its target feature); the tighter of the
    two per candidate, then the extremes over candidates. ``want_arg``: also (for witnesses)
    the worst candidate and each key's extremal δ, for the lower and the upper side."""
    if opt == "min":
        r = _retrieval_term(s, -u, -g, S, "max", slices, want_arg)
        if want_arg:
            lo, hi, argl, argu = r
            return -hi, -lo, argu, argl
        return -r[1], -r[0]
    B, T = s.shape
    Sidx = torch.tensor(S)
    C = len(S)
    inS = torch.zeros(T, dtype=torch.bool)
    inS[Sidx] = True
    # ---- difference form: reference key t', e_j = u_j - g_t', δ_j = s_j - s_t'
    s_t = s.index(1, Sidx).unsqueeze(2).expand_to((B, C, T))
    g_t = g.index(1, Sidx).unsqueeze(2).expand_to((B, C, T))
    sj = s.unsqueeze(1).expand_to((B, C, T))
    uj = u.unsqueeze(1).expand_to((B, C, T))
    gj = g.unsqueeze(1).expand_to((B, C, T))
    delta = sj - s_t
    e = uj - g_t
    con = gj - g_t  # <= 0 for j in S
    self_mask = torch.zeros(C, T, dtype=torch.bool)
    self_mask[torch.arange(C), Sidx] = True
    valid = (~self_mask)[None].expand(B, C, T)
    cons = (inS[None, :] & ~self_mask)[None].expand(B, C, T)
    dL, dU = delta.bounds()
    eL, eU = e.bounds()
    cL, _ = con.bounds()
    feasible = ~((cL > 0) & cons).any(-1)  # (B, C)
    zero = torch.zeros_like(dL)
    for base in ("d", "e"):
        x = delta if base == "d" else e
        kap = _proj_coef(con, x)
        rL, _ = (con - x.scale(kap)).bounds()
        if base == "d":
            dL, dU = _tighten(dL, dU, kap, rL, zero, cons)
        else:
            eL, eU = _tighten(eL, eU, kap, rL, zero, cons)
    feasible = feasible & ~((dL > dU) & valid).any(-1) & ~((eL > eU) & valid).any(-1)
    e0 = u.index(1, Sidx) - g.index(1, Sidx)  # (B, C)
    e0L, e0U = e0.bounds()
    r = _coupled_F(delta, e, e0L, e0U, valid, dL, dU, eL, eU, want_arg=want_arg)
    lo, hi = r[0], r[1]
    # ---- shared-reference form, sliced along the reference's target feature
    if slices > 0 and s.n % T == 0:
        d = s.n // T
        K = int(slices)
        ar = torch.arange(C)
        ref_idx = Sidx[:, None] * d + torch.arange(d)[None, :]  # (C, d)
        sig = s.index(1, Sidx)
        gam = g.index(1, Sidx)
        a = gam.A[:, ar[:, None], ref_idx]  # (B, C, d)
        a_s = sig.A[:, ar[:, None], ref_idx]
        use_s = a.abs().sum(-1, keepdim=True) == 0
        a = torch.where(use_s, a_s, a)
        zmax = a.abs().sum(-1) * (1 + _gam(d))  # (B, C): |a·ε| <= zmax
        ks = torch.arange(K, dtype=_DT)
        zlo = -zmax[..., None] + 2 * zmax[..., None] * ks / K  # (B, C, K)
        zhi = -zmax[..., None] + 2 * zmax[..., None] * (ks + 1) / K
        zmid = 0.5 * (zlo + zhi)
        zhalf = torch.maximum(zhi - zmid, zmid - zlo) + _gam(8) * zmax[..., None] + _TINY
        sa, sb = _ref_slices(sig, ar, ref_idx, a, zmid, zhalf)
        ga, gb = _ref_slices(gam, ar, ref_idx, a, zmid, zhalf)
        e0a, e0b = _ref_slices(e0, ar, ref_idx, a, zmid, zhalf)
        # keys: own forms (full box), tightened by g_j <= γ <= gb on each slice
        kL, kU = s.bounds()
        uL, uU = u.bounds()
        gL, _ = g.bounds()
        al = _proj_coef(u, s)
        nuL, nuU = (u - s.scale(al)).bounds()
        ks_ = _proj_coef(g, s)
        rsL, _ = (g - s.scale(ks_)).bounds()
        ku_ = _proj_coef(g, u)
        ruL, _ = (g - u.scale(ku_)).bounds()
        shp = (B, C, K, T)
        ex = lambda t: t[:, None, None, :].expand(shp)
        gbj = gb[..., None].expand(shp)
        gaj = ga[..., None].expand(shp)
        consk = cons[:, :, None, :].expand(shp)
        validk = valid[:, :, None, :].expand(shp)
        sL2, sU2 = _tighten(ex(kL), ex(kU), ex(ks_), ex(rsL), gbj, consk)
        uL2, uU2 = _tighten(ex(uL), ex(uU), ex(ku_), ex(ruL), gbj, consk)
        feas_k = ~(((ex(gL) > gbj) & consk) | (((sL2 > sU2) | (uL2 > uU2)) & validk)).any(-1)
        eLk = uL2 - gbj
        eUk = uU2 - gaj
        lLk = ex(nuL) - gbj
        lUk = ex(nuU) - gaj
        slack = _gam(4) * (eLk.abs() + eUk.abs() + lLk.abs() + lUk.abs() + gbj.abs()) + _TINY
        eLk, eUk, lLk, lUk = eLk - slack, eUk + slack, lLk - slack, lUk + slack
        lo_k, hi_k = _ratio_bounds(
            sL2, sU2, ex(al), lLk, lUk, eLk, eUk, e0a, e0b, validk, phi=(-sb, -sa)
        )
        inf = torch.full_like(lo_k, math.inf)
        lo_s = torch.where(feas_k, lo_k, inf).amin(-1)  # (B, C)
        hi_s = torch.where(feas_k, hi_k, -inf).amax(-1)
        lo, hi = torch.maximum(lo, lo_s), torch.minimum(hi, hi_s)
    inf = torch.full_like(lo, math.inf)
    lo_c = torch.where(feasible, lo, inf)
    hi_c = torch.where(feasible, hi, -inf)
    lo_b, hi_b = lo_c.amin(-1), hi_c.amax(-1)
    if not want_arg:
        return lo_b, hi_b
    cl, cu = lo_c.argmin(-1), hi_c.argmax(-1)  # (B,)
    bi = torch.arange(B)
    # (δ form rows, target δ, valid) of the worst candidate per side
    argl = (delta.c[bi, cl], delta.A[bi, cl], r[2][bi, cl], valid[bi, cl])
    argu = (delta.c[bi, cu], delta.A[bi, cu], r[3][bi, cu], valid[bi, cu])
    return lo_b, hi_b, argl, argu


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


def error_bounds(model, task, lo, hi):
    """Certified bounds ``(errL, errU)`` of ``model(X) - task.target(X)`` over each box
    ``lo <= X <= hi`` (shape (T, d) or (B, T, d)); returns tensors of shape (B, m), m outputs.
    Scalars stand for the (T, d) box of the task's shape. Raises ConfigError if the model or task
    is unsupported, or for a box of another shape, not finite, or with ``lo > hi``. Where the
    propagation overflows (huge weights) the bounds are -inf / +inf, never NaN."""
    _check_task(task)
    lo, hi = _as_boxes(lo, hi, int(task.d), int(task.T), "error_bounds")
    B, T_, d_ = lo.shape
    _require_forms(model, B, T_, d_, f"error_bounds on {B} box(es) of ({T_}, {d_})")
    try:
        ctx = _Ctx(model, task)
        with torch.no_grad():
            L, U = ctx.bounds(lo, hi)
    except _Unsupported as e:
        raise ConfigError(str(e)) from None
    return _no_nan(L, U)


# ============================================================================== search
@dataclass
class BracketResult:
    """``lower <= sup_X |model(X) - target(X)|_∞ <= upper`` over the box (upper None: no bound,
    see ``reason``). ``lower`` is the largest error at an evaluated input (``witness``)."""

    upper: float | None
    lower: float | None
    witness: np.ndarray | None = None
    boxes: int = 0  # boxes whose bound was computed
    splits: int = 0
    open_boxes: int = 0  # boxes left unresolved when the search stopped
    seconds: float = 0.0
    reason: str | None = None  # why upper is None (unsupported, or no finite bound)
    method: str = ""  # "coupled" (model minus target jointly) or "affine"
    converged: bool = False  # upper <= (1 + tol) lower (or <= atol)
    stop: str = ""  # why the search stopped
    extra: dict = field(default_factory=dict)
    #: False only when the wall-clock safety net stopped the search ("exhausted-by-time"): the
    #: bound is still sound, but another machine may stop elsewhere
    reproducible: bool = True
    #: the model gave NaN/inf (weights, or an evaluated output): upper is +inf, never finite
    unsound_input: bool = False

    @property
    def ratio(self) -> float | None:
        if self.upper is None or not self.lower:
            return None
        return self.upper / self.lower

    def to_dict(self) -> dict:
        return {
            "upper": self.upper,
            "lower": self.lower,
            "ratio": self.ratio,
            "witness": None if self.witness is None else self.witness.tolist(),
            "boxes": self.boxes,
            "splits": self.splits,
            "open_boxes": self.open_boxes,
            "seconds": self.seconds,
            "reason": self.reason,
            "method": self.method,
            "converged": self.converged,
            "stop": self.stop,
            "reproducible": self.reproducible,
            "unsound_input": self.unsound_input,
        }


def _err(model, task, X: torch.Tensor) -> torch.Tensor:
    out = model(X)
    y = task.target(X)
    if out.dim() == 2 and y.dim() == 1 and out.shape[-1] == 1:
        out = out[:, 0]
    e = (out - y).abs()
    if e.dim() == 1:
        return e
    # a NaN in any output makes that input's error NaN (amax would skip nothing, but be explicit)
    bad = torch.isnan(e).flatten(1).any(-1)
    e = e.flatten(1).amax(-1)
    return torch.where(bad, torch.full_like(e, math.nan), e)


class _Lower:
    """Best evaluated error and its input. A NaN or infinite error (the model or the target
    failed at that input) is recorded in ``nonfinite`` with its input and makes ``value``
    +inf: it is never read as 0."""

    def __init__(self, model, task):
        self.model, self.task = model, task
        self.value, self.X = 0.0, None
        self.nonfinite = 0

    def _note(self, e, X):
        bad = ~torch.isfinite(e)
        if bool(bad.any()):
            if not self.nonfinite:
                self.X = X[int(bad.nonzero()[0, 0])].detach().clone()
            self.nonfinite += int(bad.sum())
            self.value = math.inf
            return torch.where(bad, torch.full_like(e, math.inf), e)
        return e

    def eval(self, X):
        with torch.no_grad():
            e = _err(self.model, self.task, X)
        e = self._note(e, X)
        if self.nonfinite:
            return e
        i = int(e.argmax())
        if float(e[i]) > self.value:
            self.value, self.X = float(e[i]), X[i].clone()
        return e

    def ascend(self, X0, lo, hi, steps=40):
        """Projected Adam ascent of the error from X0 inside [lo, hi] (per start)."""
        X = X0.clone().requires_grad_(True)
        for scale in (0.01, 1e-4):
            w = (hi - lo).amax()
            opt = torch.optim.Adam([X], lr=float(scale * w) + 1e-12)
            for _ in range(steps // 2):
                opt.zero_grad()
                e = _err(self.model, self.task, X)
                ed = self._note(e.detach(), X.detach())
                if self.nonfinite:
                    return
                i = int(ed.argmax())
                if float(ed[i]) > self.value:
                    self.value, self.X = float(ed[i]), X.detach()[i].clone()
                (-e.sum()).backward()
                if X.grad is None or not torch.isfinite(X.grad).all():
                    break
                opt.step()
                with torch.no_grad():
                    X.copy_(torch.maximum(torch.minimum(X, hi), lo))
        self.eval(X.detach())


#: work per second of the deprecated ``time_limit``: ``time_limit = t`` becomes a budget of
#: ``ceil(BOXES_PER_SECOND · t)`` box evaluations (the generic path's rate on the 2-core
#: reference machine, measured on hc_l9 T = 3..4), so that old callers keep about the work
#: they had, decided by a count instead of the clock
BOXES_PER_SECOND = 400
#: the wall-clock safety net a deprecated ``time_limit = t`` still sets: ``10 t`` seconds
TIME_LIMIT_CAP_FACTOR = 10.0

_METHODS = ("auto", "structured", "generic")


def _pos_int(name, v, what="a positive integer"):
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v <= 0:
        raise ConfigError(f"{name} must be {what} (got {v!r})")
    return int(v)


def _pos_seconds(name, v):
    if v is None:
        return None
    if isinstance(v, bool) or not (isinstance(v, (int, float)) and v > 0 and math.isfinite(v)):
        raise ConfigError(f"{name} must be a positive number of seconds or None (got {v!r})")
    return float(v)


def _nonfinite_weights(model) -> str | None:
    params = getattr(model, "parameters", None)
    if params is None:
        return None
    bad = [n for n, p in model.named_parameters() if not bool(torch.isfinite(p).all())]
    return None if not bad else "non-finite (NaN or inf) weights in " + ", ".join(bad[:4])


def upper_bracket(
    model,
    task,
    *,
    max_splits: int = 2000,
    max_boxes: int | None = None,
    max_pieces: int = 1024,
    method: str = "auto",
    time_limit: float | None = None,
    wall_clock_cap: float | None = None,
    tol: float = 0.05,
    atol: float = 1e-9,
    lo=None,
    hi=None,
    points=None,
    batch: int = 16,
    branch_candidates: int = 6,
    seed: int = 0,
) -> BracketResult:
    """Certified upper bound of ``sup_X ||model(X) - task.target(X)||_∞`` over the input box.

    The box is ``task.lo <= x(t)_k <= task.hi`` unless ``lo``/``hi`` (scalars or (T, d) arrays)
    restrict it. ``method``: ``"structured"`` (one attention-only layer of softmax retrieval
    heads against an affine generalized retrieval, at any T: :mod:`approxtheory.bracket_softmax`,
    budget ``max_pieces`` piece evaluations per head and side), ``"generic"`` (bound propagation
    with branch-and-bound, T <= 16-ish) or ``"auto"`` (structured where it applies, else
    generic).

    Budgets are deterministic work counts, never the clock: branch-and-bound stops when
    ``upper <= (1 + tol)·lower`` or ``upper <= atol``, after ``max_splits`` splits, or after
    ``max_boxes`` box evaluations (default 12000). ``time_limit`` is **deprecated**: it is
    converted to ``max_boxes = ceil(BOXES_PER_SECOND · time_limit)`` (when ``max_boxes`` is not
    given) and sets the safety net ``wall_clock_cap = 10 · time_limit``. ``wall_clock_cap``
    (seconds, default None: off) is only a safety net: if it stops the search the result has
    ``stop = "exhausted-by-time"`` and ``reproducible = False`` and ``upper`` is still the best
    *sound* bound so far. The bound is valid whenever the search stops.

    Non-finite input: NaN/inf weights, or a NaN/inf model output or target at an evaluated
    input, give ``upper = +inf``, ``unsound_input = True`` and ``stop = "unsound-input"``
    (never a finite number). ``points`` (n, T, d) or (T, d): extra inputs to evaluate for the
    lower bound (e.g. the witness of :func:`~approxtheory.measure.sup_error`), finite, clipped
    to the box; another shape is refused (ConfigError naming the expected one). ``seed`` seeds
    a local generator (the global torch and numpy RNG states are untouched). ``batch`` boxes are
    split per round, each along the best of its ``branch_candidates`` widest coordinates. See
    the module docstring for the method and the floating-point argument. Unsupported models or
    tasks give ``upper=None`` and a ``reason``."""
    t0 = time.perf_counter()
    max_splits = _pos_int("max_splits", max_splits)
    time_limit = _pos_seconds("time_limit", time_limit)
    wall_clock_cap = _pos_seconds("wall_clock_cap", wall_clock_cap)
    if max_boxes is not None:
        max_boxes = _pos_int("max_boxes", max_boxes)
    elif time_limit is not None:
        max_boxes = max(1, math.ceil(BOXES_PER_SECOND * time_limit))
    else:
        max_boxes = 12000
    if time_limit is not None and wall_clock_cap is None:
        wall_clock_cap = TIME_LIMIT_CAP_FACTOR * time_limit
    max_pieces = _pos_int("max_pieces", max_pieces)
    if method not in _METHODS:
        raise ConfigError(f"method must be one of {', '.join(_METHODS)} (got {method!r})")
    if not (isinstance(tol, (int, float)) and tol >= 0):
        raise ConfigError(f"tol must be >= 0 (got {tol!r})")
    if not (isinstance(atol, (int, float)) and atol >= 0):
        raise ConfigError(f"atol must be >= 0 (got {atol!r})")
    if not isinstance(batch, (int, np.integer)) or batch < 1:
        raise ConfigError(f"batch must be a positive integer (got {batch!r})")
    if not isinstance(branch_candidates, (int, np.integer)) or branch_candidates < 1:
        raise ConfigError(
            f"branch_candidates must be a positive integer (got {branch_candidates!r})"
        )
    _check_task(task)
    if not (callable(model) and hasattr(model, "eval")):
        raise ConfigError(
            f"model must be a torch module such as approxtheory.model.Transformer (got "
            f"{type(model).__name__})"
        )
    T, d = task.T, task.d
    dlo = task.lo if lo is None else lo
    dhi = task.hi if hi is None else hi
    try:
        blo = np.broadcast_to(np.asarray(dlo, dtype=np.float64), (T, d)).copy()
        bhi = np.broadcast_to(np.asarray(dhi, dtype=np.float64), (T, d)).copy()
    except (TypeError, ValueError):
        raise ConfigError(f"lo and hi must be scalars or arrays of shape ({T}, {d})") from None
    if not (np.isfinite(blo).all() and np.isfinite(bhi).all()):
        raise ConfigError("the domain bounds lo and hi must be finite")
    if (blo > bhi).any():
        raise ConfigError(f"domain lo must be <= hi (got lo={dlo}, hi={dhi})")
    if (lo is not None or hi is not None) and ((blo < task.lo).any() or (bhi > task.hi).any()):
        raise ConfigError(f"lo/hi must lie inside the task's domain [{task.lo}, {task.hi}]")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or not (0 <= seed < 2**63):
        raise ConfigError(f"seed must be an integer from 0 to 2**63 - 1 (got {seed!r})")
    P = None
    if points is not None:
        try:
            P = np.asarray(points, dtype=np.float64)
        except (TypeError, ValueError):
            raise ConfigError(
                f"points must be an array of shape (n, {T}, {d}) or ({T}, {d}) of reals"
            ) from None
        if P.shape == (T, d):
            P = P[None]
        if P.ndim != 3 or P.shape[1:] != (T, d):
            raise ConfigError(
                f"points must have shape (n, {T}, {d}) or ({T}, {d}), the task's (T, d) "
                f"(got {P.shape})"
            )
        if not np.isfinite(P).all():
            raise ConfigError("points must be finite (got NaN or inf)")
    budget = {"max_splits": max_splits, "max_boxes": max_boxes, "max_pieces": max_pieces}
    if time_limit is not None:
        budget["time_limit_deprecated"] = time_limit
    if wall_clock_cap is not None:
        budget["wall_clock_cap"] = wall_clock_cap
    bad_w = _nonfinite_weights(model)
    if bad_w:
        return BracketResult(
            math.inf,
            math.inf,
            None,
            seconds=time.perf_counter() - t0,
            reason=bad_w,
            stop="unsound-input",
            unsound_input=True,
            extra={"budget": budget},
        )
    if method != "generic":
        from . import bracket_softmax as bs

        try:
            sb = bs.structured_bracket(
                model, task, blo, bhi, tol=min(max(tol, 1e-9), 0.01), max_pieces=max_pieces
            )
        except bs.Unsupported as e:
            if method == "structured":
                return BracketResult(
                    None,
                    None,
                    None,
                    seconds=time.perf_counter() - t0,
                    reason=f"the structured bracket does not apply: {e}",
                    method="structured",
                    extra={"budget": budget},
                )
        else:
            return _structured_result(model, task, sb, blo, bhi, P, seed, tol, atol, t0, budget)
    _require_forms(model, 1, T, d, f"upper_bracket's affine forms on the (T={T}, d={d}) box")
    # a local generator: the caller's global torch RNG state is left alone (this draws the
    # stream torch.manual_seed(seed) gave the global one before, so results are unchanged)
    gen = torch.Generator().manual_seed(int(seed))
    rng = np.random.default_rng(seed)
    model.eval()
    low = _Lower(model, task)
    blo_t, bhi_t = torch.from_numpy(blo), torch.from_numpy(bhi)
    # initial points: the centre, random points, the task's structured inputs, given points
    try:
        starts = [
            torch.from_numpy(0.5 * (blo + bhi))[None],
            blo_t + (bhi_t - blo_t) * torch.rand(256, T, d, dtype=_DT, generator=gen),
        ]
        if getattr(task, "domain", "box") == "box":
            Xs = torch.from_numpy(np.clip(task.structured(rng, max_n=256), blo, bhi))
            starts.append(Xs)
        if P is not None:
            Pt = torch.from_numpy(P)
            starts.append(torch.maximum(torch.minimum(Pt, bhi_t), blo_t))
        X0 = torch.cat(starts)
        e0 = low.eval(X0)
    except Exception:  # noqa: BLE001  (the target may not be evaluable)
        e0 = None
    res: dict[str, Any] = dict(method="", boxes=0, splits=0)
    if low.nonfinite:
        return _unsound_eval(low, res, t0, "", budget)
    try:
        ctx = _Ctx(model, task)
    except _Unsupported as e:
        return BracketResult(
            None,
            low.value if low.X is not None else None,
            None if low.X is None else low.X.numpy(),
            seconds=time.perf_counter() - t0,
            reason=str(e),
        )
    res["method"] = ctx.method
    if e0 is not None:
        top = torch.argsort(e0, descending=True)[:8]
        low.ascend(X0[top], blo_t.expand(len(top), T, d), bhi_t.expand(len(top), T, d))

    def box_ub(L, U):
        return torch.maximum(U, -L).amax(-1)  # (B,)

    def bound_boxes(Lo, Hi):
        with torch.no_grad():
            L, U = ctx.bounds(Lo, Hi)
        ub = box_ub(L, U)
        return torch.nan_to_num(ub, nan=math.inf)

    def refine_lower(Lb, Hb, steps=40, n_starts=8):
        """Evaluate witnesses of the bound on these boxes (and jittered copies), then ascend
        from the best starts."""
        starts, slo, shi = (
            [0.5 * (Lb + Hb), Lb + (Hb - Lb) * torch.rand(Lb.shape, dtype=_DT, generator=gen)],
            [Lb, Lb],
            [Hb, Hb],
        )
        if ctx.coupled:
            with torch.no_grad():
                Xw = ctx.bounds(Lb, Hb, want_witness=True)[2]
            if Xw is not None:
                reps = len(Xw) // len(Lb)
                wl, wh = Lb.repeat(reps, 1, 1), Hb.repeat(reps, 1, 1)
                for k in range(4):
                    jit = 0.0 if k == 0 else 0.02 * 0.3 ** (k - 1)
                    Xj = Xw + jit * (wh - wl) * torch.randn(Xw.shape, dtype=_DT, generator=gen)
                    starts.append(torch.maximum(torch.minimum(Xj, wh), wl))
                    slo.append(wl)
                    shi.append(wh)
        Xs, Ls, Hs = torch.cat(starts), torch.cat(slo), torch.cat(shi)
        e = low.eval(Xs)
        top = torch.argsort(e, descending=True)[:n_starts]
        low.ascend(Xs[top], Ls[top], Hs[top], steps=steps)

    try:
        ub0 = bound_boxes(blo_t[None], bhi_t[None])
        refine_lower(blo_t[None], bhi_t[None], steps=60, n_starts=16)
        if low.nonfinite:
            return _unsound_eval(low, res, t0, ctx.method, budget)
    except _Unsupported as e:
        return BracketResult(
            None,
            low.value,
            None if low.X is None else low.X.numpy(),
            seconds=time.perf_counter() - t0,
            reason=str(e),
            method=ctx.method,
        )
    res["boxes"] = 1
    heap: list[tuple[float, int, torch.Tensor, torch.Tensor]] = []  # (-ub, counter, lo, hi)
    counter = 0
    pruned_max = -math.inf
    heapq.heappush(heap, (-float(ub0[0]), counter, blo_t, bhi_t))
    reason = None
    ndim = T * d
    rounds = 0
    while True:
        open_max = -heap[0][0] if heap else -math.inf
        upper = max(open_max, pruned_max)
        if upper <= atol or (low.value > 0 and upper <= (1 + tol) * low.value) or not heap:
            reason = "converged"
            break
        if not math.isfinite(upper) and res["splits"] >= max_splits:
            reason = "budget exhausted without a finite bound"
            break
        if res["splits"] >= max_splits:
            reason = f"split budget ({max_splits}) spent"
            break
        if res["boxes"] >= max_boxes:
            reason = f"box budget ({max_boxes}) spent"
            break
        if low.nonfinite:
            reason = "unsound-input"
            break
        if wall_clock_cap is not None and time.perf_counter() - t0 > wall_clock_cap:
            reason = "exhausted-by-time"
            break
        rounds += 1
        nb = min(batch, len(heap), max_splits - res["splits"])
        items = [heapq.heappop(heap) for _ in range(nb)]
        Lo = torch.stack([it[2] for it in items])  # (nb, T, d)
        Hi = torch.stack([it[3] for it in items])
        width = (Hi - Lo).reshape(nb, ndim)
        with torch.no_grad():
            sp, smear = ctx.split_points(Lo, Hi)
        # the generic path ranks its candidates by the split heuristic: fewer are enough
        kc = min(branch_candidates if smear is None else min(branch_candidates, 2), ndim)
        key = width if smear is None else smear
        cand = torch.argsort(
            key
            + 1e-9
            * key.amax(-1, keepdim=True).clamp_min(1e-300)
            * torch.rand(nb, ndim, dtype=_DT, generator=gen),
            -1,
            descending=True,
        )[:, :kc]  # (nb, kc)
        # children for every candidate split: (nb, kc, 2)
        Lc = Lo.reshape(nb, 1, 1, ndim).repeat(1, kc, 2, 1)
        Hc = Hi.reshape(nb, 1, 1, ndim).repeat(1, kc, 2, 1)
        mid = sp.reshape(nb, ndim).gather(1, cand)
        ar = torch.arange(nb)[:, None].expand(nb, kc)
        ak = torch.arange(kc)[None, :].expand(nb, kc)
        Hc[ar, ak, 0, cand] = mid
        Lc[ar, ak, 1, cand] = mid
        Lc = Lc.reshape(-1, T, d)
        Hc = Hc.reshape(-1, T, d)
        try:
            ub = bound_boxes(Lc, Hc).reshape(nb, kc, 2)
        except _Unsupported as e:
            return BracketResult(
                None,
                low.value,
                None if low.X is None else low.X.numpy(),
                seconds=time.perf_counter() - t0,
                reason=str(e),
                method=ctx.method,
            )
        res["boxes"] += nb * kc * 2
        score = ub.amax(-1) + 1e-3 * ub.sum(-1)
        if smear is not None:  # near-ties go to the coordinate the heuristic prefers
            pub = torch.tensor([-it[0] for it in items], dtype=_DT)[:, None]
            pub = torch.where(torch.isfinite(pub), pub, ub.amax(-1))
            score = score - 0.02 * pub * key.gather(1, cand).clamp_min(0.0)
        # a split at an end of the coordinate's range (zero width) makes no progress
        inside = (
            (mid > Lo.reshape(nb, ndim).gather(1, cand))
            & (mid < Hi.reshape(nb, ndim).gather(1, cand))
            & (key.gather(1, cand) >= 0)
        )
        score = torch.where(
            inside | ~inside.any(-1, keepdim=True), score, torch.full_like(score, math.inf)
        )
        best = score.argmin(-1)  # (nb,)
        Lc = Lc.reshape(nb, kc, 2, T, d)[torch.arange(nb), best]  # (nb, 2, T, d)
        Hc = Hc.reshape(nb, kc, 2, T, d)[torch.arange(nb), best]
        ubc = ub[torch.arange(nb), best]  # (nb, 2)
        res["splits"] += nb
        # lower bound: centres of the children, witnesses and ascent in the worst boxes
        low.eval((0.5 * (Lc + Hc)).reshape(-1, T, d))
        if rounds % 4 == 1:
            order = torch.argsort(ubc.reshape(-1), descending=True)[:4]
            refine_lower(Lc.reshape(-1, T, d)[order], Hc.reshape(-1, T, d)[order], steps=20)
        for i in range(nb):
            for s in range(2):
                u = float(ubc[i, s])
                if u <= low.value:
                    pruned_max = max(pruned_max, u)
                else:
                    counter += 1
                    heapq.heappush(heap, (-u, counter, Lc[i, s], Hc[i, s]))
        # boxes already in the heap below the new lower bound: drop lazily
        if heap and len(heap) > 4096:
            keep = [it for it in heap if -it[0] > low.value]
            for it in heap:
                if -it[0] <= low.value:
                    pruned_max = max(pruned_max, -it[0])
            heap = keep
            heapq.heapify(heap)
    open_max = -heap[0][0] if heap else -math.inf
    upper = max(open_max, pruned_max)
    conv = reason == "converged"
    if low.nonfinite:
        return _unsound_eval(low, res, t0, ctx.method, budget)
    if not math.isfinite(upper):
        if upper == -math.inf:  # every box infeasible cannot happen; be safe
            upper = math.inf
        return BracketResult(
            None,
            low.value,
            None if low.X is None else low.X.numpy(),
            res["boxes"],
            res["splits"],
            len(heap),
            time.perf_counter() - t0,
            "no finite bound within the budget: " + str(reason),
            ctx.method,
            stop=str(reason),
        )
    upper = upper * (1 + 1e-12) + _TINY
    return BracketResult(
        upper,
        low.value,
        None if low.X is None else low.X.numpy(),
        res["boxes"],
        res["splits"],
        len(heap),
        time.perf_counter() - t0,
        None,
        ctx.method,
        conv,
        reason,
        extra={"rounds": rounds, "budget": budget},
        reproducible=reason != "exhausted-by-time",
    )


def _unsound_eval(low, res, t0, method, budget) -> BracketResult:
    """The model (or target) gave NaN/inf at an evaluated input: +inf, never a finite bound."""
    return BracketResult(
        math.inf,
        math.inf,
        None if low.X is None else low.X.numpy(),
        res.get("boxes", 0),
        res.get("splits", 0),
        0,
        time.perf_counter() - t0,
        f"the model or target is NaN/inf at {low.nonfinite} evaluated input(s) (witness)",
        method,
        stop="unsound-input",
        unsound_input=True,
        extra={"budget": budget},
    )


def _structured_result(model, task, sb, blo, bhi, P, seed, tol, atol, t0, budget):
    """BracketResult of the structured bracket: the lower side evaluates the model at the
    bracket's worst configurations, the given points and random inputs, then ascends."""
    T, d = blo.shape
    model.eval()
    low = _Lower(model, task)
    gen = torch.Generator().manual_seed(int(seed))
    blo_t, bhi_t = torch.from_numpy(blo), torch.from_numpy(bhi)
    starts = [torch.from_numpy(0.5 * (blo + bhi))[None]]
    if sb.witnesses:
        starts.append(torch.from_numpy(np.stack(sb.witnesses)))
    starts.append(blo_t + (bhi_t - blo_t) * torch.rand(16, T, d, dtype=_DT, generator=gen))
    try:  # the task's structured inputs (vertices, near-ties) where it has them
        Xs = task.structured(np.random.default_rng(seed), max_n=256)
        starts.append(torch.from_numpy(np.clip(np.asarray(Xs, dtype=np.float64), blo, bhi)))
    except Exception:  # noqa: BLE001  (optional: only more starts)
        pass
    if P is not None:
        starts.append(torch.maximum(torch.minimum(torch.from_numpy(P), bhi_t), blo_t))
    X0 = torch.cat(starts)
    e0 = low.eval(X0)
    if not low.nonfinite and not sb.stop.startswith("unsound"):
        top = torch.argsort(e0, descending=True)[:4]
        low.ascend(X0[top], blo_t.expand(len(top), T, d), bhi_t.expand(len(top), T, d), 20)
    res = {"boxes": sb.pieces, "splits": 0}
    if low.nonfinite or sb.stop.startswith("unsound"):
        if not low.nonfinite:
            low.nonfinite = 1
        return _unsound_eval(low, res, t0, "structured", budget)
    upper = float(sb.upper)
    # the model's own evaluation differs from the exact function by its dtype's round-off
    dt = getattr(getattr(model, "cfg", None), "dtype", "float64")
    eps = float(np.finfo(dt if dt in ("float32", "float64") else "float64").eps)
    if upper < low.value - 1e3 * eps * max(1.0, low.value):
        # a sound bound is never below an evaluated error (the model's float64 round-off is
        # ~1e-15 relative): this is a bug, and the result says so instead of a number
        return BracketResult(
            None,
            low.value,
            None if low.X is None else low.X.numpy(),
            sb.pieces,
            seconds=time.perf_counter() - t0,
            reason=f"internal check failed: the structured bound {upper:.17g} is below the "
            f"error {low.value:.17g} at an evaluated input (no bound is given)",
            method="structured",
            stop="self-check failed",
            extra={"budget": budget},
        )
    upper = max(upper, low.value)
    conv = upper <= atol or (low.value > 0 and upper <= (1 + tol) * low.value)
    return BracketResult(
        upper,
        low.value,
        None if low.X is None else low.X.numpy(),
        sb.pieces,
        0,
        0,
        time.perf_counter() - t0,
        None,
        "structured",
        conv,
        sb.stop if len(sb.heads) <= 1 else sb.stop + " (per head; the heads' suprema are added)",
        extra={"heads": sb.heads, "classes": sb.classes, "budget": budget},
    )
