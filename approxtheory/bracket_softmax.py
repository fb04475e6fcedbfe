"""Certified bracket of the sup error for one-layer softmax retrieval heads, at any T.

Example::

    >>> from approxtheory.constructions import build
    >>> from approxtheory.bracket_softmax import structured_bracket
    >>> c = build("softmax_retrieval", T=1024, beta=1e4)
    >>> r = structured_bracket(c.model, c.task)
    >>> round(r.upper * 1e4, 4), r.upper <= 1.01 * 4.43987e-4
    (4.4399, True)

Scope: a :class:`~approxtheory.model.Transformer` with one attention-only layer (no FFN, no
LayerNorm/RMSNorm, no RoPE, no causal mask), a linear embedding of ``[x(t), onehot(t)]`` (plus
learned positions), a CLS query that is not a key and a linear scalar read-out; the target a
:class:`~approxtheory.tasks.GeneralizedRetrieval` with affine features and an affine outer map
(``softmax_retrieval``, ``hc_k1``, ``hc_k1_synthetic``). Everything else raises
:class:`Unsupported` (the caller falls back to the generic branch-and-bound).

Method
------
*Reduction.* The output is ``K + Σ_i Σ_t p^i_t u^i_t`` with ``p^i = softmax_t(s^i_t)``, where the
score ``s^i_t = α_i·x(t) + σ^i_t`` and the value ``u^i_t = w_i·x(t) + ω^i_t`` are affine in the
token with a per-position offset (composed from the stored weights, with a float64 error bound
carried alongside). The target is ``c0 + Σ_j opt_{t∈S_j} (γ_j·x(t) + b_j)``. Heads are matched
one-to-one to target terms; on the matched pair the score and value directions are split into a
multiple of γ_j plus a remainder, and the remainder (times the largest |x|) joins the error
allowances. So each matched pair depends on the tokens only through the scalar feature
``z_t = γ_j·x(t)`` (an interval per token: the box is a product), and
``|model − target| <= max(K⁺ + Σ_i sup D_i, −(K⁻ + Σ_i inf D_i))`` with
``D_i = Σ_t p_t u_t − opt_{t∈S} z_t − b`` (a sum of per-head suprema: sound; exact for one head).

*One head, exactly (Dinkelbach + Vertex-Softmax).* Enumerate the reference r ∈ S attaining the
opt. ``D <= λ`` iff ``Σ_t e^{s_t − s_r}(u_t − z_r − b − λ) <= 0``, and with ``δ_t = z_t − z_r``
each term is ``e^{αδ + σ_t − σ_r}(wδ + (w − 1) z_r + ω_t − b − λ)``: it depends on token t alone
(given z_r), on the interval ``δ ∈ [zl_t − z_r, zu_t − z_r]`` cut by ``δ <= 0`` (opt = max) or
``δ >= 0`` (min) for t ∈ S. Its maximum over δ sits at an end or at ``δ* = −c/w − 1/α``
(closed form), so the sum's maximum over the whole box is a sum of per-token maxima: the exact
vertex-/critical-point optimum that "Vertex-Softmax" (arXiv 2605.10974) finds by sorting, here
in O(classes) per λ. Positions with the same (score offset, value offset, membership, box) are
one *class* with a count (symmetry over positions), so the cost does not grow with T. The
reference's ``z_r`` is branched over pieces of its interval (only where ``w ≠ 1`` or a token
outside S couples to it); on each piece ``δ`` ranges over the union, and ``c`` takes its
largest value: both loosen, never tighten. ``Φ(λ)`` is decreasing; bisection returns the
smallest λ whose check passes (never one that fails). Pieces whose bound is highest are halved
until the bound is within ``tol`` of the best configuration found or the piece budget is
spent (a count of piece evaluations: deterministic, no clock).

Floating point
--------------
Composed coefficients carry an error bound ``γ_k·(|a|·|B|)`` per product; a term's log-weight
allowance ``ε_s`` and value allowance ``ε_u`` (round-off plus the off-direction remainders)
enter the check as ``e^{±ε_s}`` on its sign's side and ``+ε_u``; the sums of positive and
negative parts are compared with a relative slack ``κ = 32u(1 + max|log-weight|) + 8u·classes``
(u = 2^-53) and the returned λ is moved up by ``nextafter`` steps and a relative 1e-12. A
non-finite weight or box gives ``upper = +inf`` (``unsound-input``), never a finite number.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from .resources import with_threads

__all__ = ["Unsupported", "StructuredBracket", "structured_bracket", "structured_reason"]

_U = 2.0**-53


class Unsupported(Exception):
    """The model or task is outside the structured bracket's scope (message says why)."""


# ============================================================================== float64 + errors
def _gk(k: int) -> float:
    return (k + 8) * 2.3e-16


def _np(t) -> np.ndarray:
    return t.detach().to(torch.float64).cpu().numpy()


class _Tracked:
    """A float64 array ``v`` with an elementwise bound ``e`` on its distance to the exact real
    value (0 when not given). The arithmetic is the subclasses': :class:`_V` here, and the
    pairwise-max bracket's own (:mod:`approxtheory.bounds.pairwise`)."""

    __slots__ = ("v", "e")

    def __init__(self, v, e=None):
        self.v = np.asarray(v, dtype=np.float64)
        self.e = np.zeros_like(self.v) if e is None else np.asarray(e, dtype=np.float64)


class _V(_Tracked):
    """A tracked float64 array with this module's rounding allowances."""

    __slots__ = ()

    def matmul(self, M) -> _V:  # self (.., k) @ M (k, m), M exact floats
        M = np.asarray(M, dtype=np.float64)
        k = M.shape[0]
        v = self.v @ M
        e = self.e @ np.abs(M) + _gk(k) * (np.abs(self.v) @ np.abs(M)) + 1e-300
        return _V(v, e * (1 + 4 * _U))

    def add(self, other) -> _V:
        o = other if isinstance(other, _V) else _V(other)
        v = self.v + o.v
        return _V(v, (self.e + o.e + _U * np.abs(v)) * (1 + 4 * _U))

    def dot(self, b) -> _V:  # self (k,) · b (k,) exact floats
        return self.matmul(np.asarray(b, dtype=np.float64).reshape(-1, 1)).reshape(())

    def reshape(self, *s) -> _V:
        return _V(self.v.reshape(*s), self.e.reshape(*s))

    def scale(self, s: float) -> _V:
        v = self.v * s
        return _V(v, (abs(s) * self.e + _U * np.abs(v)) * (1 + 4 * _U))


# ============================================================================== structure
@dataclass
class _Head:
    """One matched (head, target term): classes of positions and their coefficients in z."""

    head: int
    term: int | None  # index of the target term, None: unmatched head
    opt: str  # "max" | "min"
    alpha: float  # score = alpha z + sigma (+- eps_s)
    w: float  # value = w z + omega (+- eps_u)
    b: float  # target term = z + b over S
    sigma: np.ndarray  # (C,)
    omega: np.ndarray  # (C,)
    eps_s: np.ndarray  # (C,)
    eps_u: np.ndarray  # (C,)
    zl: np.ndarray  # (C,)
    zu: np.ndarray  # (C,)
    inS: np.ndarray  # (C,) bool
    count: np.ndarray  # (C,) int
    members: list  # positions of each class
    direction: np.ndarray  # (d,) gamma_j: z = direction · x


@dataclass
class StructuredBracket:
    """Result of :func:`structured_bracket`: ``upper`` >= sup |model − target| over the box
    (+inf: no sound finite bound, see ``stop``), ``found`` the largest per-head configuration
    value (a lower estimate of the supremum for one head; its witness inputs are in
    ``witnesses``), ``pieces`` the piece evaluations spent, per-head suprema in ``heads``."""

    upper: float
    found: float
    pieces: int = 0
    stop: str = ""
    converged: bool = False
    heads: list = field(default_factory=list)
    witnesses: list = field(default_factory=list)
    classes: int = 0

    @classmethod
    def from_search(cls, upper, found, pieces, stop, heads, witnesses, classes):
        """The result of a piece search: converged when ``stop`` says ``"converged"``."""
        return cls(upper, found, pieces, stop, stop == "converged", heads, witnesses, classes)


def _task_box(task, lo=None, hi=None, d: int | None = None):
    """The (T, d) float64 box (writable copies): ``lo``/``hi`` where given, else the task's
    ends; ``d`` the token width (default ``task.d``)."""
    T = int(task.T)
    d = int(task.d) if d is None else d
    blo = np.broadcast_to(np.asarray(task.lo if lo is None else lo, np.float64), (T, d)).copy()
    bhi = np.broadcast_to(np.asarray(task.hi if hi is None else hi, np.float64), (T, d)).copy()
    return blo, bhi


def _outward(upper: float) -> float:
    """A sound bound's last rounding: ``upper`` moved up by a relative 1e-12 and one float64
    step (+inf when it is not finite)."""
    if not math.isfinite(upper):
        return math.inf
    return float(np.nextafter(upper * (1 + 1e-12), np.inf)) + 1e-300


def _box_reason(extract, model, task, d: int | None = None) -> str | None:
    """Why ``extract(model, task, blo, bhi)`` refuses (model, task) on the task's box (its
    :class:`Unsupported` message, or that the task has no such box); None if it applies. ``d``:
    the token width the route needs (default ``task.d``)."""
    try:
        blo, bhi = _task_box(task, d=d)
    except (AttributeError, TypeError, ValueError):
        return f"not an approxtheory task with a (T, {'d' if d is None else d}) box"
    try:
        extract(model, task, blo, bhi)
    except Unsupported as e:
        return str(e)
    return None


def _require_finite(vals) -> None:
    """Unsupported when a composed value is not finite (composing the weights overflowed)."""
    if not all(math.isfinite(v) for v in vals):
        raise Unsupported("composing the weights overflows float64")


def structured_reason(model, task) -> str | None:
    """Why :func:`structured_bracket` does not apply to (model, task); None if it does."""
    try:
        blo, bhi = _task_box(task)
        _extract(model, task, blo, bhi)
    except (AttributeError, TypeError, ValueError):
        return "not an approxtheory task with a (T, d) box"
    except Unsupported as e:
        return str(e)
    return None


def _single_linear(mlp, what: str):
    try:
        mods = [m for m in mlp if not isinstance(m, torch.nn.Identity)]
    except TypeError:  # e.g. a tied read-out (not a sequence of layers)
        raise Unsupported(f"{what} must be a single linear layer") from None
    if len(mods) != 1 or not isinstance(mods[0], torch.nn.Linear):
        raise Unsupported(f"{what} must be a single linear layer")
    lin = mods[0]
    W = _np(lin.weight)
    b = np.zeros(W.shape[0]) if lin.bias is None else _np(lin.bias)
    return W, b


def _extract(model, task, blo, bhi):
    """(K interval, [_Head], target parts) or Unsupported (also when composing the weights
    overflows float64: no finite bound from this path)."""
    with np.errstate(over="ignore", invalid="ignore"):
        out = _extract_raw(model, task, blo, bhi)
    K, heads, parts = out
    vals = [K[0], K[1]] + [
        float(np.max(np.abs(a)))
        for h in heads
        for a in (h.sigma, h.omega, h.eps_s, h.eps_u, [h.alpha, h.w, h.b])
    ]
    if not all(math.isfinite(v) for v in vals):
        raise Unsupported("composing the weights overflows float64 (no finite bound this way)")
    return out


def _extract_raw(model, task, blo, bhi):
    """The heads' problems of a supported (model, task): the scope checks, the composed
    weights, the target's parts and the matching of heads to parts."""
    cfg, blk = _check_scope(model, task)
    T = int(task.T)
    K, heads = _compose_heads(model, task, cfg, blk)
    parts = _target_parts(task)
    matched = _match(heads, parts)
    K, out = _head_problems(K, heads, parts, matched, blo, bhi, T)
    return K, out, parts


def _check_scope(model, task):
    """Unsupported unless the model and task are in this method's scope: (cfg, block)."""
    from .tasks import GeneralizedRetrieval

    cfg = getattr(model, "cfg", None)
    if cfg is None or not hasattr(model, "layers"):
        raise Unsupported("not an approxtheory.model.Transformer")
    if not isinstance(task, GeneralizedRetrieval) or task.affine is None:
        raise Unsupported(
            "the structured bracket needs a GeneralizedRetrieval target with affine features "
            "and an affine outer map"
        )
    if task.outer_affine is None:
        raise Unsupported("the target's outer map is not affine")
    if getattr(task, "domain", "box") != "box":
        raise Unsupported("the domain is not a box")
    if len(model.layers) != 1:
        raise Unsupported(f"one attention layer is needed (this model has {len(model.layers)})")
    blk = model.block(0)
    if blk.ffn is not None:
        raise Unsupported("the layer has an FFN (attention-only layers are supported)")
    if not isinstance(blk.ln1, torch.nn.Identity) or getattr(model, "ln_f", None) is not None:
        raise Unsupported("normalisation layers are not supported")
    if cfg.rope is not None and (cfg.rope == "full" or int(cfg.rope) > 0):
        raise Unsupported("RoPE is not supported")
    if cfg.causal or cfg.cls_is_key or model.cls is None or cfg.readout != "cls":
        raise Unsupported("a CLS read-out whose query is not a key and no causal mask is needed")
    if cfg.d_out != 1:
        raise Unsupported("a scalar output is needed (d_out = 1)")
    if cfg.d_in != task.d:
        raise Unsupported(f"model d_in={cfg.d_in} differs from the task's d={task.d}")
    T = int(task.T)
    if cfg.positions not in ("none", "onehot", "learned"):
        raise Unsupported(f"positions={cfg.positions!r} is not supported")
    if cfg.positions != "none" and cfg.seq_len != T:
        raise Unsupported(f"model was built for T={cfg.seq_len}, the task has T={T}")
    params = [p for p in model.parameters()]
    if not all(bool(torch.isfinite(p).all()) for p in params):
        raise _NonFinite("a model weight is NaN or infinite")
    return cfg, blk


def _offset_form(offV: _V, k: _V, E: int) -> _V:
    """``offV @ k`` (the per-token offsets (T, E) read through the head's vector k (E,)), with
    the propagated error bounds of both and the product's own rounding."""
    return _V(
        offV.v @ k.v,
        np.abs(offV.v) @ k.e + offV.e @ np.abs(k.v) + _gk(E) * (np.abs(offV.v) @ np.abs(k.v)),
    )


def _compose_heads(model, task, cfg, blk):
    """The read-out's constant interval K and, per head, its score and value forms in x."""
    T, d = int(task.T), int(task.d)
    We, be = _single_linear(model.embed, "the embedding")
    Wh, bh = _single_linear(model.head, "the read-out")
    E = We.shape[0]
    pos = np.zeros((T, E)) if model.pos is None else _np(model.pos)
    cls = _np(model.cls)
    attn = blk.attn
    H, n, c, G = attn.h, attn.n, attn.c, attn.g
    Wq, Wk, Wv, Wo = (_np(m.weight) for m in (attn.q, attn.k, attn.v, attn.o))
    bq, bk, bv, bo = (
        np.zeros(m.weight.shape[0]) if m.bias is None else _np(m.bias)
        for m in (attn.q, attn.k, attn.v, attn.o)
    )
    scale = float(attn.scale)
    # token embedding x̂_t = Wx x + off_t (exact part: off_t = We[:, d+t] + be + pos_t)
    Wx = We[:, :d]
    off = np.broadcast_to(be, (T, E)).copy()
    off_e = _U * np.abs(off)
    if cfg.positions == "onehot":
        off2 = We[:, d : d + T].T + be  # (T, E)
        off_e = _U * np.abs(off2)
        off = off2
    if model.pos is not None:
        off3 = off + pos
        off_e = off_e + _U * np.abs(off3)
        off = off3
    offV = _V(off, off_e * (1 + 4 * _U))
    # constant K = Wh·([cls] + bo) + bh − c0
    stream = (cls if cfg.residual else np.zeros(E)) + bo
    Kv = _V(Wh[0]).dot(stream).add(float(bh[0]) - float(task.outer_affine[1]))
    K = (float(Kv.v - Kv.e), float(Kv.v + Kv.e))
    rep = H // G
    heads: list[dict[str, Any]] = []
    for i in range(H):
        gi = i // rep
        q = _V(cls).matmul(Wq[i * n : (i + 1) * n].T).add(bq[i * n : (i + 1) * n])  # (n,)
        kap = q.matmul(Wk[gi * n : (gi + 1) * n]).scale(scale)  # (E,) score = kap·x̂ + qb
        qb = q.dot(bk[gi * n : (gi + 1) * n]).scale(scale)
        rho = _V(Wh[0]).matmul(Wo[:, i * c : (i + 1) * c])  # (c,)
        mu = rho.matmul(Wv[gi * c : (gi + 1) * c])  # (E,)
        vb = rho.dot(bv[gi * c : (gi + 1) * c])
        heads.append(
            dict(
                alpha=kap.matmul(Wx),  # (d,)
                sigma=_offset_form(offV, kap, E).add(np.broadcast_to(qb.v, (T,))),
                sigma_e0=float(qb.e),
                w=mu.matmul(Wx),
                omega=_offset_form(offV, mu, E).add(np.broadcast_to(vb.v, (T,))),
                omega_e0=float(vb.e),
            )
        )

    return K, heads


def _target_parts(task) -> list[dict[str, Any]]:
    """The target's terms: direction gamma_j, offset b_j, set and opt, per nonzero c_j."""
    # target parts: direction gamma_j, offset b_j, set, opt
    Wt, bt = (np.asarray(a, dtype=np.float64) for a in task.affine)
    ct, _ = task.outer_affine
    parts = []
    for j in range(task.D):
        cj = float(ct[j])
        if cj == 0:
            continue
        gam, gam_e = cj * Wt[j], _U * np.abs(cj * Wt[j])
        same = (task.mode == "max") == (cj > 0)
        parts.append(
            dict(
                j=j,
                gamma=gam,
                gamma_e=gam_e,
                b=cj * float(bt[j]),
                S=list(task.sets[j]),
                opt="max" if same else "min",
            )
        )
    return parts


def _fit(h, p):
    """Cost of matching head h to target part p, and the head's score and value scales."""
    g = p["gamma"]
    gg = float(g @ g)
    if gg == 0:
        return math.inf, 0.0, 0.0
    a = float(h["alpha"].v @ g) / gg
    w = float(h["w"].v @ g) / gg
    ra = np.abs(h["alpha"].v - a * g).sum()
    rw = np.abs(h["w"].v - w * g).sum()
    return (
        abs(w - 1)
        + (ra + rw) / math.sqrt(gg)
        + (0 if a * (1 if p["opt"] == "max" else -1) > 0 else 1e3),
        a,
        w,
    )


def _match(heads, parts) -> dict[int, int]:
    """Heads to parts, by how well score and value fit the part's direction."""
    best, best_cost = None, math.inf
    m = min(len(heads), len(parts))
    if len(heads) <= 6 and len(parts) <= 6:
        for hs in itertools.permutations(range(len(heads)), m):
            cost = sum(_fit(heads[h], parts[p])[0] for p, h in enumerate(hs))
            if cost < best_cost:
                best, best_cost = hs, cost
    else:
        raise Unsupported("more than 6 heads or target terms")
    if best is None or not math.isfinite(best_cost):
        raise Unsupported("no head's scores follow a target term's feature")
    matched = {h: p for p, h in enumerate(best)} if len(parts) else {}
    if len(parts) > len(heads):
        raise Unsupported("more target terms than heads")
    return matched


def _head_problems(K, heads, parts, matched, blo, bhi, T):
    """Per matched head its :class:`_Head` (unmatched heads widen K): (K, heads)."""
    xmag = np.maximum(np.abs(blo), np.abs(bhi))  # (T, d)
    out = []
    Kextra = [0.0, 0.0]
    for i, h in enumerate(heads):
        if i not in matched:  # an unmatched head adds Σ p u ∈ [min u, max u]
            ulo, uhi = _token_range(h["w"], h["omega"], h["omega_e0"], blo, bhi)
            Kextra[0] += ulo
            Kextra[1] += uhi
            continue
        p = parts[matched[i]]
        g = p["gamma"]
        _, a, w = _fit(h, p)
        ra = h["alpha"].v - a * g
        rw = h["w"].v - w * g
        # allowances: remainders, coefficient errors, the parts' own rounding
        es = (np.abs(ra) + h["alpha"].e + abs(a) * p["gamma_e"]) @ xmag.T  # (T,)
        es = es + h["sigma"].e + h["sigma_e0"] + 4 * _U * (np.abs(h["sigma"].v) + 1e-300)
        eu = (np.abs(rw) + h["w"].e + abs(w) * p["gamma_e"]) @ xmag.T
        eu = eu + h["omega"].e + h["omega_e0"] + 4 * _U * np.abs(h["omega"].v)
        eu = eu + 4 * _U * abs(p["b"])
        zl, zu = _z_range(g, blo, bhi)
        inS = np.zeros(T, bool)
        inS[p["S"]] = True
        keys: dict[tuple, list[int]] = {}
        for t in range(T):
            key = (h["sigma"].v[t], h["omega"].v[t], bool(inS[t]), zl[t], zu[t])
            keys.setdefault(key, []).append(t)
        mem = list(keys.values())
        idx = np.array([ms[0] for ms in mem])
        out.append(
            _Head(
                head=i,
                term=matched[i],
                opt=p["opt"],
                alpha=a,
                w=w,
                b=p["b"],
                sigma=h["sigma"].v[idx].copy(),
                omega=h["omega"].v[idx].copy(),
                eps_s=np.array([es[ms].max() for ms in mem]),
                eps_u=np.array([eu[ms].max() for ms in mem]),
                zl=zl[idx].copy(),
                zu=zu[idx].copy(),
                inS=inS[idx].copy(),
                count=np.array([len(ms) for ms in mem]),
                members=mem,
                direction=g,
            )
        )
    K = (K[0] + Kextra[0], K[1] + Kextra[1])
    return K, out


class _NonFinite(Unsupported):
    pass


def _z_range(g, blo, bhi):
    """[zl, zu] of z = g·x over each token's box (T,), rounded outward."""
    a, b = g * blo, g * bhi
    lo, hi = np.minimum(a, b).sum(-1), np.maximum(a, b).sum(-1)
    k = blo.shape[-1]
    slack = _gk(k) * (np.abs(a) + np.abs(b)).sum(-1) + 1e-300
    return lo - slack, hi + slack


def _token_range(wv: _V, om: _V, om_e0: float, blo, bhi):
    a, b = wv.v * blo, wv.v * bhi
    lo = np.minimum(a, b).sum(-1) + om.v
    hi = np.maximum(a, b).sum(-1) + om.v
    sl = (wv.e @ np.maximum(np.abs(blo), np.abs(bhi)).T) + om.e + om_e0
    sl = sl + _gk(blo.shape[-1] + 1) * (np.abs(a) + np.abs(b)).sum(-1) + 4 * _U * np.abs(om.v)
    return float((lo - sl).min()), float((hi + sl).max())


# ============================================================================== one head
def _term_max(alpha, w, c, dl, du):
    """max over δ ∈ [dl, du] of e^{αδ}(wδ + c), as (log|.|, sign, argmax); arrays broadcast.
    Empty intervals (dl > du) give sign 0 (no term)."""
    cands = [dl, du]
    best_v: Any = None
    best_s: Any = None
    best_d: Any = None
    with np.errstate(divide="ignore", invalid="ignore"):
        if alpha != 0 and w != 0:
            ds = -c / w - 1.0 / alpha
            ds = np.clip(ds, dl, du)
            cands.append(ds)
    for dd in cands:
        dd = np.broadcast_to(dd, np.broadcast_shapes(np.shape(dl), np.shape(c)))
        y = w * dd + c
        # compare by value e^{αδ}·y using logs: sign-aware
        with np.errstate(divide="ignore"):
            lv = alpha * dd + np.log(np.abs(y))
        sgn = np.sign(y)
        if best_v is None:
            best_v, best_s, best_d = lv, sgn, dd
            continue
        better = _gt(lv, sgn, best_v, best_s)
        best_v = np.where(better, lv, best_v)
        best_s = np.where(better, sgn, best_s)
        best_d = np.where(better, dd, best_d)
    empty = dl > du
    best_s = np.where(empty, 0.0, best_s)
    return best_v, best_s, best_d


def _gt(l1, s1, l2, s2):
    """(s1 e^{l1}) > (s2 e^{l2}) elementwise."""
    v1 = np.where(s1 > 0, 1, np.where(s1 < 0, -1, 0))
    v2 = np.where(s2 > 0, 1, np.where(s2 < 0, -1, 0))
    out = v1 > v2
    same = v1 == v2
    out = out | (same & (v1 > 0) & (l1 > l2)) | (same & (v1 < 0) & (l1 < l2))
    return out


class _HeadProblem:
    """sup over the box of D = Σ p u − opt_S z − b for one matched head (sign flips give inf)."""

    def __init__(self, h: _Head, negate: bool):
        self.h = h
        s = -1.0 if negate else 1.0
        # −D = Σ p (−u) − opt'(−z) − (−b): in the variable z' = −z: value −w z − ω = w z' − ω,
        # target opt' over z' ... keep z and flip the δ constraint and value signs instead
        self.neg = negate
        self.w = s * h.w
        self.omega = s * h.omega
        self.b = s * h.b
        self.gsign = s  # target in z: s·(z + b)
        # the reference attains opt_S z on both sides: δ = z_t − z_r <= 0 (max) or >= 0 (min)
        self.delta_sign = -1.0 if h.opt == "max" else 1.0
        self.C = len(h.count)

    def evaluate(self, R: int, za: np.ndarray, zb: np.ndarray, lam: np.ndarray, slack=True):
        """Upper bound of Φ(λ) on pieces z_r ∈ [za, zb] (P,) of reference class R: returns
        (logP, logN) of the positive and negative parts (P,), and the argmax δ (P, C)."""
        h = self.h
        C = self.C
        sg = self.gsign
        # δ range per (piece, class)
        dl = h.zl[None, :] - zb[:, None]
        du = h.zu[None, :] - za[:, None]
        cons = h.inS[None, :]
        if self.delta_sign < 0:
            du = np.where(cons, np.minimum(du, 0.0), du)
        else:
            dl = np.where(cons, np.maximum(dl, 0.0), dl)
        # value: w δ + (w − sg) z_r + ω_C − b − λ, maximised over z_r ∈ [za, zb]
        dl = np.nextafter(dl, -np.inf)
        du = np.nextafter(du, np.inf)
        k = self.w - sg
        kz = np.maximum(k * za, k * zb)
        cc = kz[:, None] + self.omega[None, :] - self.b - lam[:, None] + h.eps_u[None, :]
        # the float error of w δ + c (absolute), paid for on the value's upper side
        dmax = np.maximum(np.abs(dl), np.abs(du))
        cc = cc + 4 * _U * (abs(self.w) * dmax + np.abs(cc)) + 1e-300
        lv, sgn, dstar = _term_max(self.h.alpha, self.w, cc, dl, du)
        ls = h.sigma[None, :] - h.sigma[R] + h.eps_s[None, :] + h.eps_s[R]
        lneg = h.sigma[None, :] - h.sigma[R] - h.eps_s[None, :] - h.eps_s[R]
        cnt = h.count.astype(np.float64)[None, :].repeat(len(za), 0)
        cnt[:, R] -= 1
        with np.errstate(divide="ignore"):
            lc = np.log(cnt)
        pos = sgn > 0
        neg = sgn < 0
        logs_p = np.where(pos & (cnt > 0), lv + ls + lc, -np.inf)
        logs_n = np.where(neg & (cnt > 0), lv + lneg + lc, -np.inf)
        # the reference token itself: δ = 0, value (w − sg) z_r + ω_R − b − λ at its max
        yr = kz + self.omega[R] - self.b - lam + h.eps_u[R]
        with np.errstate(divide="ignore"):
            lr = np.log(np.abs(yr))
        logs_p = np.concatenate([logs_p, np.where(yr > 0, lr, -np.inf)[:, None]], 1)
        logs_n = np.concatenate([logs_n, np.where(yr < 0, lr, -np.inf)[:, None]], 1)
        # a class of S whose every token would beat the reference: this piece is infeasible
        infeas = ((dl > du) & (cnt > 0)).any(1)
        lp = _lse(logs_p)
        ln = _lse(logs_n)
        mags = np.abs(np.where(np.isfinite(lv), lv + ls, 0.0)).max(1)
        kappa = 32 * _U * (1 + mags) + 8 * _U * (C + 1) + 1e-13
        if slack:
            lp = lp + np.log1p(kappa)
            ln = ln + np.log1p(-kappa)
        return lp, ln, dstar, infeas

    def bound(self, R: int, za, zb, iters: int = 80):
        """Smallest certified λ per piece (P,), and the configuration value at the argmax."""
        h = self.h
        # λ_hi: the largest value difference possible; λ_lo: the smallest
        sg = self.gsign
        k = self.w - sg
        kz_hi = np.maximum(k * za, k * zb)
        kz_lo = np.minimum(k * za, k * zb)
        dl = h.zl[None, :] - zb[:, None]
        du = h.zu[None, :] - za[:, None]
        vals_hi = np.maximum(self.w * dl, self.w * du) + self.omega[None, :] + h.eps_u[None, :]
        vals_lo = np.minimum(self.w * dl, self.w * du) + self.omega[None, :] - h.eps_u[None, :]
        hi = np.maximum(vals_hi.max(1), self.omega[R] + h.eps_u[R]) + kz_hi - self.b
        lo = np.minimum(vals_lo.min(1), self.omega[R] - h.eps_u[R]) + kz_lo - self.b
        hi = hi + 1e-12 * (1 + np.abs(hi))
        lo = lo - 1e-12 * (1 + np.abs(lo)) - 1.0
        lp, ln, _, infeas = self.evaluate(R, za, zb, hi)
        ok = lp <= ln
        # where even hi fails (slack), push it up
        for _ in range(60):
            if ok.all():
                break
            hi = np.where(ok, hi, hi + (hi - lo))
            lp, ln, _, _ = self.evaluate(R, za, zb, hi)
            ok = lp <= ln
        for _ in range(iters):
            mid = 0.5 * (lo + hi)
            lp, ln, _, _ = self.evaluate(R, za, zb, mid)
            good = lp <= ln
            hi = np.where(good & ok, mid, hi)
            lo = np.where(good & ok, lo, mid)
            if np.all(hi - lo <= 1e-13 * (np.abs(hi) + 1e-300)):
                break
        hi = np.where(ok, np.nextafter(np.nextafter(hi, np.inf), np.inf), np.inf)
        hi = np.where(ok, hi + 1e-12 * np.abs(hi), hi)
        hi = np.where(infeas, -np.inf, hi)
        return hi, lo

    def configuration(self, R: int, zr: float, lam: float):
        """The δ* of each class at z_r (exact piece) for λ: a candidate worst configuration and
        its value D (float64, not certified)."""
        za = np.array([zr])
        _, _, dstar, _ = self.evaluate(R, za, za, np.array([lam]), slack=False)
        dstar = dstar[0]
        z = zr + dstar
        return z, self.value(R, zr, z)

    def value(self, R: int, zr: float, z):
        """D at reference class R with z_r = zr and class features z (C,), all tokens of a class
        at the same z (the reference's class: others at z[R])."""
        h = self.h
        cnt = h.count.astype(np.float64).copy()
        cnt[R] -= 1
        lw0 = h.alpha * (z - zr) + h.sigma - h.sigma[R] + np.log(np.where(cnt > 0, cnt, 1.0))
        lw = np.append(np.where(cnt > 0, lw0, -np.inf), 0.0)
        y = (
            np.append(self.w * z + self.omega, self.w * zr + self.omega[R])
            - self.gsign * zr
            - self.b
        )
        m = lw.max()
        p = np.exp(lw - m)
        return float((p * y).sum() / p.sum())


def _lse(L):
    m = L.max(1)
    mm = np.where(np.isfinite(m), m, 0.0)
    with np.errstate(divide="ignore"):
        return mm + np.log(np.exp(L - mm[:, None]).sum(1))


def _sup_head(prob: _HeadProblem, tol: float, budget: int, scale: float = 0.0):
    """(certified sup, found value, pieces spent, witness (R, z_r, z per class))."""
    h = prob.h
    refs = [R for R in range(prob.C) if h.inS[R]]
    pieces = []  # (R, za, zb)
    P0 = 4
    for R in refs:
        e = np.linspace(h.zl[R], h.zu[R], P0 + 1)
        for a, b in zip(e[:-1], e[1:]):
            pieces.append((R, float(a), float(b)))
    spent = 0
    found, wit = -math.inf, None
    ubs = {}

    def run(batch):
        nonlocal spent, found, wit
        byR: dict = {}
        for pc in batch:
            byR.setdefault(pc[0], []).append(pc)
        for R, pcs in byR.items():
            za = np.array([p[1] for p in pcs])
            zb = np.array([p[2] for p in pcs])
            ub, _ = prob.bound(R, za, zb)
            spent += len(pcs)
            for pc, u in zip(pcs, ub):
                ubs[pc] = float(u)
            # configurations at the piece centres of the worst pieces
            order = np.argsort(-ub)[:2]
            for o in order:
                if not math.isfinite(ub[o]):
                    continue
                zr = 0.5 * (za[o] + zb[o])
                for zz in (zr, za[o], zb[o]):
                    z, v = prob.configuration(R, float(zz), float(ub[o]))
                    if v > found:
                        found, wit = v, (R, float(zz), z)

    run(pieces)
    stop = "budget"
    while True:
        up = max(ubs.values()) if ubs else -math.inf
        if up <= found + tol * max(abs(found), scale, 1e-300):
            stop = "converged"
            break
        if spent >= budget:
            break
        top = sorted(ubs, key=lambda k: -ubs[k])[: max(1, min(16, budget - spent))]
        new = []
        for pc in top:
            R, a, b = pc
            if b - a <= 1e-15 * (1 + abs(a)):
                continue
            mid = 0.5 * (a + b)
            del ubs[pc]
            new += [(R, a, mid), (R, mid, b)]
        if not new:
            break
        run(new[: 2 * max(1, (budget - spent) // 2)])
    up = max(ubs.values()) if ubs else -math.inf
    return up, found, spent, wit, stop


# ============================================================================== entry point
@with_threads
def structured_bracket(model, task, lo=None, hi=None, *, tol: float = 0.01, max_pieces: int = 1024):
    """Certified ``upper >= sup_X |model(X) − target(X)|`` over the box (``task.lo..task.hi``
    or the (T, d) arrays ``lo``/``hi``) by the per-head Dinkelbach reduction (module doc).
    ``max_pieces``: the deterministic work budget (reference pieces evaluated per head and
    side). Raises :class:`Unsupported` outside the scope."""
    blo, bhi = _task_box(task, lo, hi)
    if not (np.isfinite(blo).all() and np.isfinite(bhi).all()):
        return StructuredBracket(math.inf, math.nan, stop="unsound-input: non-finite box")
    try:
        K, heads, parts = _extract(model, task, blo, bhi)
    except _NonFinite as e:
        return StructuredBracket(math.inf, math.nan, stop=f"unsound-input: {e}")
    if len(parts) != len(heads) and len(parts) > len(heads):
        raise Unsupported("more target terms than heads")
    sup_sum, inf_sum = 0.0, 0.0
    spent, stops, info, wits = 0, [], [], []
    found = 0.0
    for h in heads:
        # a first pass on the initial pieces gives the scale of the head's error (both sides)
        f0 = [_sup_head(_HeadProblem(h, neg), tol, 0)[1] for neg in (False, True)]
        scale = max(abs(f) for f in f0 if math.isfinite(f)) if any(map(math.isfinite, f0)) else 0
        up, f_up, s1, w_up, st1 = _sup_head(_HeadProblem(h, False), tol, max_pieces, scale)
        dn, f_dn, s2, w_dn, st2 = _sup_head(_HeadProblem(h, True), tol, max_pieces, scale)
        spent += s1 + s2
        stops += [st1, st2]
        sup_sum += up
        inf_sum += -dn
        info.append(
            {
                "head": h.head,
                "term": h.term,
                "classes": len(h.count),
                "sup": up,
                "inf": -dn,
                "found_sup": f_up,
                "found_inf": -f_dn,
            }
        )
        for side, w in (("sup", w_up), ("inf", w_dn)):
            if w is not None:
                wits.append((h, side, w))
        found = max(
            found,
            abs(K[0] + f_up) if len(heads) == 1 else 0.0,
            abs(K[0] - f_dn) if len(heads) == 1 else 0.0,
        )
    upper = max(K[1] + sup_sum, -(K[0] + inf_sum), 0.0)
    upper = _outward(upper)
    stop = "converged" if all(s == "converged" for s in stops) else "piece budget spent"
    X = _candidate_inputs(wits, blo, bhi)
    classes = max((len(h.count) for h in heads), default=0)
    return StructuredBracket.from_search(upper, found, spent, stop, info, X, classes)


def _candidate_inputs(wits, blo, bhi) -> list:
    """Inputs for the lower side: each head's worst configuration (``wits``: (head, side,
    configuration) triples), the vertices of its classes, and the joint candidates."""
    X = [_witness_input(h, w, blo, bhi) for h, _, w in wits]
    # count vertices: a class at one end of its range but for one token (at either end);
    # the joint worst case of several heads sits there (e.g. HC-K1's gate ties)
    for h, _, w in list(wits):
        g = h.direction
        vmin = np.where(g >= 0, blo, bhi)
        vmax = np.where(g >= 0, bhi, blo)
        base = _witness_input(h, w, blo, bhi)
        for ms in h.members:
            for v1, v2 in ((vmin, vmin), (vmax, vmax), (vmin, vmax), (vmax, vmin)):
                Xv = base.copy()
                Xv[ms] = v1[ms]
                Xv[ms[0]] = v2[ms[0]]
                X.append(Xv)
    # joint candidates: on each side, every head's worst configuration on its own set S
    for side in ("sup", "inf"):
        own = [(h, _witness_input(h, w, blo, bhi)) for h, sd, w in wits if sd == side]
        if len(own) > 1:
            for first in range(len(own)):
                Xc = own[first][1].copy()
                for h, Xh in own[first + 1 :] + own[:first]:
                    S = [t for ms, ins in zip(h.members, h.inS) if ins for t in ms]
                    Xc[S] = Xh[S]
                X.append(Xc)
    return X


def _witness_input(h: _Head, w, blo, bhi) -> np.ndarray:
    """An input (T, d) with z_t = direction·x(t) at the configuration's values (clipped to the
    token's range): along the segment between the box vertices minimising / maximising z."""
    R, zr, z = w
    T, d = blo.shape
    g = h.direction
    vmin = np.where(g >= 0, blo, bhi)
    vmax = np.where(g >= 0, bhi, blo)
    zmin, zmax = (vmin * g).sum(-1), (vmax * g).sum(-1)
    target = np.empty(T)
    for ci, ms in enumerate(h.members):
        target[ms] = z[ci]
    target[h.members[R][0]] = zr
    den = np.where(zmax > zmin, zmax - zmin, 1.0)
    th = np.clip((target - zmin) / den, 0.0, 1.0)
    return vmin + th[:, None] * (vmax - vmin)
