"""Structured certified bracket for a *separable* two-hidden-layer ReLU read-out against a max.

Scope: a box domain with scalar tokens (d = 1), a model whose CLS state is an affine function of
the input (e.g. uniform attention: W_Q = 0) followed by a read-out
``lin -> ReLU -> lin -> ReLU -> lin`` with one output, and a one-term affine generalized
retrieval target ``y = c0 + c·opt_{t∈S} (a x(t) + b)`` (``ScalarMax``: max_t x(t)). This is
HC-L9's ReLU max network (``hc_l9``), on which the generic branch-and-bound stalls: its error
peaks where *all* T tokens sit just above a grid level, a corner that box splitting over the
T coordinates reaches only after ~(T·n_g)^T boxes.

Method
------
*Separable first layer.* The CLS state is propagated as an affine form over the box (the
zonotope of :mod:`approxtheory.bounds`, exact here up to round-off, which lands in its interval
part). Each first-layer unit u must read one token: ``z_u = c_u + a_u ε_{t(u)} ± r_u`` with
``ε_t ∈ [-1, 1]`` token t's noise symbol (``x(t) = xc_t + h_t ε_t``); other coefficients and the
round-off go into ``r_u`` (refused when that is not small). So every second-layer unit is
``S_k = b2_k + Σ_t φ_{kt}(ε_t) ± Σ_u |W2_ku| r_u`` with ``φ_{kt}(ε) = Σ_{u∈U_t} W2_ku
ReLU(c_u + a_u ε)`` univariate and piecewise linear.

*Grouped output.* Second-layer units with identical weight rows share the same sum
``s_g = Σ_t φ_{gt}(ε_t)``, and the output is ``F = b3 + Σ_g H_g(s_g)`` with ``H_g(s) =
Σ_{k∈g} w3_k ReLU(s + b2_k)`` univariate (HC-L9's pair ``ReLU(S_j) − ReLU(S_j − 1/n_g)`` is
one group: bounding the two ReLUs separately would lose their cancellation).

*Argmax and a 1-D branch.* The target's optimum is attained at some token τ ∈ S, with every
other token of S constrained to ``q_t <= q_τ`` (q = ±(a x + b)); tokens are grouped into classes
of identical first-layer functions and boxes (the model is symmetric under permuting a class), so
τ runs over one representative per class. For τ's value in a piece ``[e0, e1]`` the others'
noise symbols lie in an interval J (e.g. ``ε_t <= e1``), each ``s_g`` lies in an interval that
is exact for ``s_g`` alone (a sum of independent univariate ranges, each the min/max of a
piecewise-linear function over breakpoints and ends), ``H_g`` is bounded exactly over it, and
the target over the piece is an interval: ``|F − y| <= max(F_U − y_L, y_U − F_L)`` on the
piece. The pieces start at τ's first-layer breakpoints and the worst are bisected (a priority
queue, ``max_pieces`` piece evaluations, no clock) until the bound is within ``tol`` of the
largest error found at candidate inputs of the pieces (τ at a piece end or middle, the other
tokens at an end or the middle of J, or tied with τ).

Soundness: every step over-approximates (intervals of the exact sums, the argmax cover, the
zonotope's r and the cross terms as slack), and round-off is paid for by a relative allowance
on every sum (γ_k as in :mod:`approxtheory.bounds`) and a Lipschitz allowance for breakpoints
computed in floating point; the result is ``upper·(1 + 1e-12) + 1e-300``. On HC-L9 the bound is
exact in the limit of small pieces: the pieces' bound is ``min(T δ1, 1/n_g) − δ0`` with ``δ``
the distance of τ's value above a grid level, whose supremum is ``(T − 1)/(T n_g)``.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass

import numpy as np
import scipy.sparse
import torch

from ..bracket_softmax import (
    StructuredBracket,
    Unsupported,
    _box_reason,
    _np,
    _outward,
    _task_box,
)

_U = 2.0**-53
#: the largest slack (first-layer cross terms and round-off) relative to a unit's scale that
#: still counts as "reads one token": above it the route is refused (it would be sound, loose)
_SEP_RTOL = 1e-8
#: per batch of pieces, the candidate inputs are evaluated at the pieces of largest bound
_CAND_PIECES = 16
#: the largest T·d for which the route is taken (one zonotope pass at the root, (T, T) forms)
REACH_TOKENS = 128


def _gk(k: int) -> float:
    """Relative rounding allowance of a k-term float64 sum, generously (4·γ_k)."""
    return 4.0 * (k + 8) * 2.3e-16


def relu_reason(model, task) -> str | None:
    """Why :func:`relu_bracket` does not apply to (model, task); None if it does (this runs
    one zonotope pass at the root box, cheap within :data:`REACH_TOKENS`)."""
    return _box_reason(_extract, model, task)


# ============================================================================== extraction
@dataclass
class _Problem:
    T: int
    xc: np.ndarray  # (T,) input centres
    half: np.ndarray  # (T,) input half-widths (x = xc + half ε)
    inS: np.ndarray  # (T,) bool: token in the target's set
    sgn: float  # +1: others satisfy x_t <= x_τ; -1: x_t >= x_τ; 0: unconstrained
    ya: float  # y = ya·x_τ + yb on the argmax token τ
    yb: float
    # classes of tokens
    members: list  # list of arrays of positions
    cu: list  # per class: (m,) first-layer offsets
    au: list  # per class: (m,) first-layer slopes in ε
    Wg: list  # per class: (G, m) group weights of its units
    bp: list  # per class: sorted breakpoints in (-1, 1)
    Vbp: list  # per class: (G, nb) φ at the breakpoints
    cls_of: np.ndarray  # (T,) class of each token
    # groups of second-layer units
    const: np.ndarray  # (G,) constant units' contribution to s_g (nominal)
    slack: np.ndarray  # (G,) allowance on s_g (r, cross terms, round-off)
    hw: np.ndarray  # (G, kmax) output weights w3 (0 = padding)
    hb: np.ndarray  # (G, kmax) second-layer biases b2
    Hbp: np.ndarray  # (G, kmax) H_g at its breakpoints -b2
    b3: float
    hslack: np.ndarray  # (G,) H's Lipschitz constant (for the round-off allowance)
    # the units in token order (for the nominal evaluation at witness inputs)
    unit_tok: np.ndarray
    unit_c: np.ndarray
    unit_a: np.ndarray
    W2s: object  # scipy.sparse (K, U): the read-out is sparse (HC-L9: T·n_g x 2·n_g, 2 per row)
    b2: np.ndarray
    w3: np.ndarray


def _head_ops(model):
    try:
        mods = [m for m in model.head if not isinstance(m, torch.nn.Identity)]
    except TypeError:
        raise Unsupported("the read-out must be a sequence of layers") from None
    kinds = ["lin" if isinstance(m, torch.nn.Linear) else "relu" for m in mods]
    if kinds != ["lin", "relu", "lin", "relu", "lin"] or not all(
        isinstance(m, torch.nn.ReLU) for m in (mods[1], mods[3])
    ):
        raise Unsupported("the read-out must be linear -> ReLU -> linear -> ReLU -> linear")
    out = []
    for m in (mods[0], mods[2], mods[4]):
        W = _np(m.weight)
        b = np.zeros(W.shape[0]) if m.bias is None else _np(m.bias)
        out.append((W, b))
    if out[2][0].shape[0] != 1:
        raise Unsupported("the read-out must have one output")
    return out


def _target(task):
    from ..tasks import GeneralizedRetrieval

    if not isinstance(task, GeneralizedRetrieval) or task.affine is None:
        raise Unsupported("the target must be an affine generalized retrieval")
    if task.outer_affine is None:
        raise Unsupported("the target's outer map must be affine")
    if int(task.d) != 1:
        raise Unsupported("the ReLU read-out bracket needs scalar tokens (d = 1)")
    if getattr(task, "domain", "box") != "box":
        raise Unsupported("the ReLU read-out bracket needs a box domain")
    W, b = task.affine
    c, c0 = task.outer_affine
    nz = [i for i in range(len(c)) if c[i] != 0]
    if len(nz) != 1:
        raise Unsupported("the target must have exactly one term with a nonzero coefficient")
    i = nz[0]
    a, bb, ci = float(W[i][0]), float(b[i]), float(c[i])
    s = 1.0 if task.mode == "max" else -1.0
    # q_t = s (a x_t + b); τ = argmax q; y = c0 + ci·(a x_τ + b)
    sgn = float(np.sign(s * a))
    return task.sets[i], sgn, ci * a, float(c0) + ci * bb


def _groups(W2, b2, W3):
    """Second-layer units with identical weight rows, bounded as one function H_g: the distinct
    rows, each group's output weights and biases, H_g at its breakpoints and its slack."""
    # groups: second-layer rows with identical weights
    rows, ginv = np.unique(W2, axis=0, return_inverse=True)
    ginv = np.asarray(ginv).reshape(-1)
    G = rows.shape[0]
    kmax = int(np.bincount(ginv, minlength=G).max())
    hw = np.zeros((G, kmax))
    hb = np.zeros((G, kmax))
    fill = np.zeros(G, dtype=int)
    for k in range(W2.shape[0]):
        g = ginv[k]
        hw[g, fill[g]] = W3[0, k]
        hb[g, fill[g]] = b2[k]
        fill[g] += 1
    # H_g at its breakpoints s = -b2_k
    sb = -hb  # (G, kmax)
    Hbp = (hw[:, None, :] * np.maximum(sb[:, :, None] + hb[:, None, :], 0.0)).sum(-1)
    hslack = np.abs(hw).sum(1)
    return rows, hw, hb, Hbp, hslack


def _token_classes(T: int, S, blo, bhi, tok, zc, a, rows):
    """Tokens grouped into classes of identical tokens (box, membership of the target's set,
    first-layer units and group weights), and per class its units' centres, slopes, group
    weights, breakpoints in (-1, 1) and the groups' values there."""
    # classes of tokens: identical (box, membership, first-layer units and group weights)
    inS = np.zeros(T, dtype=bool)
    inS[list(S)] = True
    sig: dict = {}
    cls_of = np.empty(T, dtype=int)
    members: list = []
    per_tok = [np.flatnonzero(tok == t) for t in range(T)]
    for t in range(T):
        us = per_tok[t]
        key = (
            float(blo[t, 0]),
            float(bhi[t, 0]),
            bool(inS[t]),
            zc[us].tobytes(),
            a[us].tobytes(),
            np.ascontiguousarray(rows[:, us]).tobytes(),
        )
        if key not in sig:
            sig[key] = len(members)
            members.append([])
        cls_of[t] = sig[key]
        members[sig[key]].append(t)
    cu, au, Wg, bps, Vbps = [], [], [], [], []
    for ms in members:
        us = per_tok[ms[0]]
        c_, a_, W_ = zc[us], a[us], rows[:, us]
        bp = np.unique(-c_ / a_)
        bp = bp[(bp > -1) & (bp < 1)]
        V = W_ @ np.maximum(c_[:, None] + a_[:, None] * bp[None, :], 0.0)  # (G, nb)
        cu.append(c_)
        au.append(a_)
        Wg.append(W_)
        bps.append(bp)
        Vbps.append(V)
    return inS, cls_of, members, cu, au, Wg, bps, Vbps


def _readout_weights(model, task, T: int):
    """The read-out's three layers ((W, b) each, float64), or Unsupported: T within
    :data:`REACH_TOKENS`, a CLS read-out, a supported task, finite weights."""
    from .targets import unsupported_reason

    if T > REACH_TOKENS:
        raise Unsupported(f"the ReLU read-out bracket is taken for T <= {REACH_TOKENS}")
    cfg = getattr(model, "cfg", None)
    if (
        cfg is None
        or getattr(model, "cls", None) is None
        or getattr(cfg, "readout", "cls") != "cls"
    ):
        raise Unsupported("the model must read out from a CLS state")
    (W1, b1), (W2, b2), (W3, b3) = _head_ops(model)
    r = unsupported_reason(model, task)
    if r:
        raise Unsupported(r)
    if not all(np.isfinite(a).all() for a in (W1, b1, W2, b2, W3, b3)):
        raise Unsupported("non-finite read-out weights")
    return (W1, b1), (W2, b2), (W3, b3)


def _first_layer(model, W1, b1, blo, bhi, T: int):
    """The first read-out layer's pre-activations over the box as affine forms in the T input
    noise symbols: centres (U,), coefficients (U, T), radii (U,)."""
    from .forward import _forward_af, _input_af

    lo_t = torch.from_numpy(blo)[None]
    hi_t = torch.from_numpy(bhi)[None]
    try:
        with torch.no_grad():
            h = _forward_af(model, _input_af(lo_t, hi_t), head_input=True)
            z = h.linear(torch.from_numpy(W1), torch.from_numpy(b1))
    except Exception as e:  # noqa: BLE001  (an unsupported layer of the forward pass)
        raise Unsupported(f"the CLS state has no affine form: {e}") from None
    zc, zA, zr = _np(z.c[0]), _np(z.A[0]), _np(z.r[0])  # (U,), (U, n), (U,)
    if zA.shape[1] != T or not (np.isfinite(zc).all() and np.isfinite(zA).all()):
        raise Unsupported("the first-layer forms are not finite over T noise symbols")
    return zc, zA, zr


def _separable_units(zc, zA, zr):
    """Each first-layer unit's token (its largest coefficient), that coefficient, and the
    unit's slack (radius, cross terms, the form's rounding); Unsupported when a unit reads
    more than one token beyond :data:`_SEP_RTOL`."""
    Aabs = np.abs(zA)
    tok = Aabs.argmax(1)
    a = zA[np.arange(len(zc)), tok]
    cross = Aabs.sum(1) - np.abs(a)
    # the form's own rounding allowance (as _AF.bounds) plus the cross terms
    n = zA.shape[1]
    rr = zr + cross + (np.abs(zc) + Aabs.sum(1) + zr) * _gk(n) + 1e-300
    scale = np.abs(zc) + np.abs(a) + 1e-300
    if (rr > _SEP_RTOL * scale + 1e-12).any():
        raise Unsupported(
            "the read-out's first-layer units do not each read one token's input (the CLS "
            "state is not affine and separable over the tokens)"
        )
    return tok, a, rr


def _unit_slack(rows, zc, a, rr, const, T: int):
    """Slack on each group sum s_g: r and cross terms (ReLU is 1-Lipschitz), round-off of the
    sums, and the breakpoints' round-off (Lipschitz in ε)."""
    absW = np.abs(rows)  # (G, U)
    U = len(zc)
    mag = np.abs(zc) + np.abs(a) + rr
    bpmax = np.abs(np.where(const, 0.0, -zc / np.where(const, 1.0, a)))
    return (
        absW @ rr
        + _gk(U + T + 16) * (absW @ mag) * 4.0
        + (absW @ np.abs(a)) * 16 * _U * (1.0 + bpmax.max(initial=0.0))
    )


def _extract(model, task, blo, bhi) -> _Problem:
    S, sgn, ya, yb = _target(task)
    T = int(task.T)
    (W1, b1), (W2, b2), (W3, b3) = _readout_weights(model, task, T)
    zc, zA, zr = _first_layer(model, W1, b1, blo, bhi, T)
    # the same centres and half-widths as _input_af (x = xc + half ε covers the box)
    xc = 0.5 * blo[:, 0] + 0.5 * bhi[:, 0]
    half = np.maximum(bhi[:, 0] - xc, xc - blo[:, 0]) * (1 + 4 * _U)
    tok, a, rr = _separable_units(zc, zA, zr)
    const = np.abs(a) == 0
    tok = np.where(const, -1, tok)
    a = np.where(const, 0.0, a)
    rows, hw, hb, Hbp, hslack = _groups(W2, b2, W3)
    slack = _unit_slack(rows, zc, a, rr, const, T)
    # constant units: their nominal contribution (r is in the slack)
    cst = rows[:, const] @ np.maximum(zc[const], 0.0) if const.any() else np.zeros(rows.shape[0])
    inS, cls_of, members, cu, au, Wg, bps, Vbps = _token_classes(T, S, blo, bhi, tok, zc, a, rows)
    return _Problem(
        T=T,
        xc=xc,
        half=half,
        inS=inS,
        sgn=sgn,
        ya=ya,
        yb=yb,
        members=[np.array(m) for m in members],
        cu=cu,
        au=au,
        Wg=Wg,
        bp=bps,
        Vbp=Vbps,
        cls_of=cls_of,
        const=cst,
        slack=slack,
        hw=hw,
        hb=hb,
        Hbp=Hbp,
        b3=float(b3[0]),
        hslack=hslack,
        unit_tok=tok,
        unit_c=zc,
        unit_a=a,
        W2s=scipy.sparse.csr_matrix(W2),
        b2=b2,
        w3=W3[0],
    )


# ============================================================================== piece bounds
def _phi_range(p: _Problem, c: int, lo, hi):
    """(min, max) over ε ∈ [lo, hi] (arrays (P,)) of class c's φ_g: (P, G) each."""
    cu, au, W = p.cu[c], p.au[c], p.Wg[c]
    G = W.shape[0]
    if len(cu) == 0:
        z = np.zeros((len(lo), G))
        return z, z
    f_lo = np.maximum(cu[None, :] + au[None, :] * lo[:, None], 0.0) @ W.T
    f_hi = np.maximum(cu[None, :] + au[None, :] * hi[:, None], 0.0) @ W.T
    mn, mx = np.minimum(f_lo, f_hi), np.maximum(f_lo, f_hi)
    bp = p.bp[c]
    if len(bp):
        inside = (bp[None, :] > lo[:, None]) & (bp[None, :] < hi[:, None])  # (P, nb)
        if inside.any():
            V = p.Vbp[c][None]  # (1, G, nb)
            m = inside[:, None, :]
            mx = np.maximum(mx, np.where(m, V, -np.inf).max(-1))
            mn = np.minimum(mn, np.where(m, V, np.inf).min(-1))
    return mn, mx


def _H_range(p: _Problem, sL, sU):
    """(min, max) of H_g over s ∈ [sL, sU] ((P, G) each), exact up to round-off."""
    hw, hb = p.hw[None], p.hb[None]
    f_lo = (hw * np.maximum(sL[..., None] + hb, 0.0)).sum(-1)
    f_hi = (hw * np.maximum(sU[..., None] + hb, 0.0)).sum(-1)
    mn, mx = np.minimum(f_lo, f_hi), np.maximum(f_lo, f_hi)
    bpt = -hb  # (1, G, kmax)
    inside = (bpt > sL[..., None]) & (bpt < sU[..., None]) & (hw != 0)
    Hbp = p.Hbp[None]
    mx = np.maximum(mx, np.where(inside, Hbp, -np.inf).max(-1))
    mn = np.minimum(mn, np.where(inside, Hbp, np.inf).min(-1))
    return mn, mx


def _others_interval(p: _Problem, c: int, X0, X1):
    """The noise interval [jl, ju] ((P,) each) of class c's tokens other than τ, given x_τ ∈
    [X0, X1]; feasible (P,) bool (False: no token of c can sit below τ there)."""
    P = len(X0)
    jl, ju = -np.ones(P), np.ones(P)
    feas = np.ones(P, dtype=bool)
    t = p.members[c][0]
    if not p.inS[t] or p.sgn == 0:
        return jl, ju, feas
    xc, h = p.xc[t], p.half[t]
    if p.sgn > 0:  # x_t <= x_τ <= X1
        if h > 0:
            rho = (X1 - xc) / h
            rho = rho + 8 * _U * (np.abs(rho) + 1.0) + 1e-300
            feas = rho >= -1.0
            ju = np.minimum(1.0, rho)
        else:
            feas = xc <= X1 * (1 + 8 * _U * np.sign(X1)) + 1e-300
    else:  # x_t >= x_τ >= X0
        if h > 0:
            lam = (X0 - xc) / h
            lam = lam - 8 * _U * (np.abs(lam) + 1.0) - 1e-300
            feas = lam <= 1.0
            jl = np.maximum(-1.0, lam)
        else:
            feas = xc >= X0 * (1 - 8 * _U * np.sign(X0)) - 1e-300
    jl = np.where(feas, jl, 0.0)
    ju = np.where(feas, np.maximum(ju, jl), 0.0)
    return jl, ju, feas


def _piece_bounds(p: _Problem, ct: int, e0, e1):
    """Upper bounds of |F − y| on the pieces ε_τ ∈ [e0, e1] (τ of class ct), (P,); -inf where
    τ cannot be the argmax."""
    t = p.members[ct][0]
    X0 = p.xc[t] + p.half[t] * e0
    X1 = p.xc[t] + p.half[t] * e1
    X0 = X0 - 4 * _U * np.abs(X0) - 1e-300
    X1 = X1 + 4 * _U * np.abs(X1) + 1e-300
    P = len(e0)
    sL = np.broadcast_to(p.const, (P, len(p.const))).copy()
    sU = sL.copy()
    feas = np.ones(P, dtype=bool)
    mn, mx = _phi_range(p, ct, e0, e1)
    sL += mn
    sU += mx
    for c in range(len(p.members)):
        cnt = len(p.members[c]) - (c == ct)
        if cnt == 0:
            continue
        jl, ju, f = _others_interval(p, c, X0, X1)
        feas &= f
        mn, mx = _phi_range(p, c, jl, ju)
        sL += cnt * mn
        sU += cnt * mx
    sL -= p.slack
    sU += p.slack
    hmn, hmx = _H_range(p, sL, sU)
    # H's own round-off: its terms' magnitudes times γ
    hmag = p.hslack[None] * (np.maximum(np.abs(sL), np.abs(sU)) + np.abs(p.hb).max(-1)[None])
    herr = _gk(p.hw.shape[1] + 2) * hmag
    G = p.hw.shape[0]
    FL = p.b3 + (hmn - herr).sum(-1)
    FU = p.b3 + (hmx + herr).sum(-1)
    Ferr = _gk(G + 2) * (abs(p.b3) + (np.maximum(np.abs(hmn), np.abs(hmx)) + herr).sum(-1))
    FL, FU = FL - Ferr, FU + Ferr
    ya, yb = p.ya, p.yb
    y0, y1 = ya * X0 + yb, ya * X1 + yb
    yL, yU = np.minimum(y0, y1), np.maximum(y0, y1)
    yerr = _gk(4) * (np.abs(ya) * np.maximum(np.abs(X0), np.abs(X1)) + abs(yb))
    yL, yU = yL - yerr, yU + yerr
    ub = np.maximum(FU - yL, yU - FL)
    ub = np.where(np.isnan(ub), np.inf, ub)
    return np.where(feas, ub, -np.inf)


# ============================================================================== lower side
def _nominal_error(p: _Problem, E):
    """|F − y| of the nominal separable function (no slack) at noise vectors E (N, T)."""
    z = p.unit_c[None] + p.unit_a[None] * np.where(
        p.unit_tok[None] >= 0, E[:, np.maximum(p.unit_tok, 0)], 0.0
    )
    S = np.asarray(p.W2s @ np.maximum(z, 0.0).T).T + p.b2[None]
    F = np.maximum(S, 0.0) @ p.w3 + p.b3
    X = p.xc[None] + p.half[None] * E
    # τ maximises sgn·x over S; y = ya·x_τ + yb (ya = 0 when sgn = 0)
    Xs = X[:, p.inS]
    xt = Xs.max(1) if p.sgn >= 0 else Xs.min(1)
    y = p.ya * xt + p.yb
    return np.abs(F - y)


def _candidates(p: _Problem, ct: int, e0, e1):
    """Candidate inputs (as noise vectors) of the pieces: τ at an end or the middle, the
    other tokens at an end or the middle of their interval, or tied with τ. (N, T), and the
    piece index of each row."""
    t = p.members[ct][0]
    P = len(e0)
    rows, idx = [], []
    for et in (e0, e1, 0.5 * (e0 + e1)):
        X = p.xc[t] + p.half[t] * et
        for mode in ("lo", "hi", "mid", "tie"):
            E = np.zeros((P, p.T))
            for c in range(len(p.members)):
                jl, ju, _ = _others_interval(p, c, X, X)
                ms = p.members[c]
                if mode == "lo":
                    v = jl
                elif mode == "hi":
                    v = ju
                elif mode == "mid":
                    v = 0.5 * (jl + ju)
                else:
                    v = np.clip(
                        (X - p.xc[ms[0]]) / np.where(p.half[ms[0]] > 0, p.half[ms[0]], 1), jl, ju
                    )
                E[:, ms] = v[:, None]
            E[:, t] = et
            rows.append(np.clip(E, -1.0, 1.0))
            idx.append(np.arange(P))
    return np.concatenate(rows), np.concatenate(idx)


# ============================================================================== piece search
class _PieceSearch:
    """The open pieces (a heap of (-bound, counter, class, e0, e1)), the work spent and the
    largest error found at a candidate input (``best_E`` its noise coordinates)."""

    def __init__(self, p: _Problem):
        self.p = p
        self.heap: list = []
        self.counter = 0
        self.spent = 0
        self.found, self.best_E = 0.0, None

    def run(self, batch) -> None:
        """Bound the pieces of ``batch`` ((class, e0, e1) each), evaluate the candidate inputs
        of those with the largest bounds, and push them onto the heap."""
        p = self.p
        for ct in sorted({b[0] for b in batch}):
            sel = [b for b in batch if b[0] == ct]
            e0 = np.array([b[1] for b in sel])
            e1 = np.array([b[2] for b in sel])
            ub = _piece_bounds(p, ct, e0, e1)
            self.spent += len(sel)
            # candidate inputs of the pieces with the largest bounds only (they decide the
            # stop; the nominal evaluation is the costly part at large T·n_g)
            top = np.argsort(-ub)[:_CAND_PIECES]
            E, ix = _candidates(p, ct, e0[top], e1[top])
            err = _nominal_error(p, E)
            if err.size and np.isfinite(err).any():
                k = int(np.nanargmax(err))
                if err[k] > self.found:
                    self.found, self.best_E = float(err[k]), E[k]
            for i in range(len(sel)):
                self.counter += 1
                heapq.heappush(
                    self.heap, (-float(ub[i]), self.counter, ct, float(e0[i]), float(e1[i]))
                )


def _refine(S: _PieceSearch, tol, atol, max_pieces) -> tuple[float, str]:
    """Split the pieces of largest bound until the bracket closes or the budget is spent:
    (the outward-rounded upper bound, why it stopped)."""
    pruned = -math.inf
    stop = "piece budget spent"
    while S.heap:
        upper = max(-S.heap[0][0], pruned)
        if not math.isfinite(upper) and upper > 0:
            stop = "no finite bound"
            break
        if upper <= atol or upper <= (1 + tol) * S.found:
            stop = "converged"
            break
        if S.spent >= max_pieces:
            break
        nb = min(64, len(S.heap), max(1, (max_pieces - S.spent) // 2))
        new = []
        for _ in range(nb):
            nu, _, ct, a, b = heapq.heappop(S.heap)
            mid = 0.5 * (a + b)
            if not (a < mid < b):  # cannot split further: keep it as is
                pruned = max(pruned, -nu)
                continue
            new += [(ct, a, mid), (ct, mid, b)]
        if not new:
            continue
        S.run(new)
        # pieces whose bound is at most the found error cannot raise the supremum's bracket
        if len(S.heap) > 4096:
            keep = [it for it in S.heap if -it[0] > S.found]
            pruned = max([pruned] + [-it[0] for it in S.heap if -it[0] <= S.found])
            S.heap = keep
            heapq.heapify(S.heap)
    else:
        stop = "converged"
    upper = max(-S.heap[0][0] if S.heap else -math.inf, pruned, 0.0)
    return _outward(upper), stop


# ============================================================================== entry point
def relu_bracket(
    model, task, lo=None, hi=None, *, tol: float = 0.01, atol: float = 1e-12, max_pieces=8192
) -> StructuredBracket:
    """Certified ``upper >= sup_X |model(X) − target(X)|`` over the box for a separable ReLU
    read-out against a one-term max (module doc). ``max_pieces``: the deterministic work
    budget (piece evaluations). Raises :class:`~approxtheory.bracket_softmax.Unsupported`
    outside the scope."""
    blo, bhi = _task_box(task, lo, hi)
    if not (np.isfinite(blo).all() and np.isfinite(bhi).all()):
        return StructuredBracket(math.inf, math.nan, stop="unsound-input: non-finite box")
    p = _extract(model, task, blo, bhi)
    # τ runs over one token per class that meets the target's set
    taus = [c for c, ms in enumerate(p.members) if p.inS[ms[0]]]
    S = _PieceSearch(p)
    init = []
    for ct in taus:
        cuts = np.concatenate([[-1.0], p.bp[ct], [1.0]])
        init += [(ct, float(a), float(b)) for a, b in zip(cuts[:-1], cuts[1:]) if b > a]
    S.run(init)
    upper, stop = _refine(S, tol, atol, max_pieces)
    found, best_E, spent = S.found, S.best_E, S.spent
    wits: list = []
    if best_E is not None:
        X = p.xc + p.half * best_E
        wits.append(np.clip(X[:, None], blo, bhi))
    heads = [{"route": "relu", "classes": len(p.members), "groups": int(p.hw.shape[0])}]
    return StructuredBracket.from_search(upper, found, spent, stop, heads, wits, len(p.members))
