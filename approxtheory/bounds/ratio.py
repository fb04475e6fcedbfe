"""The coupled softmax ratio bound (the softmax-weighted mean of a value).

Part of :mod:`approxtheory.bounds` (see its docstring for the method)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from ._af import _AF, _DT, _TINY, _gam, _proj_coef


def _lse2(a, b):
    """log(e^a + e^b), elementwise, with -inf handled."""
    m = torch.maximum(a, b)
    m = torch.where(torch.isfinite(m), m, torch.zeros_like(m))
    return m + torch.log(torch.exp(a - m) + torch.exp(b - m))


@dataclass(frozen=True)
class _RatioPieces:
    """The pieces of :func:`_ratio_lower`'s problem: per key, the piece A where the line
    ``al·δ + gL`` is active and the piece B where the constant ``eL`` is; the starting bracket
    ``[lo_l, hi_l]`` of λ; the stationary points; the acceptance margin ``eta``."""

    valid: torch.Tensor
    z: torch.Tensor
    dL: torch.Tensor
    al: torch.Tensor
    gL: torch.Tensor
    eL: torch.Tensor
    e0L: torch.Tensor
    phi_lo: torch.Tensor
    phi_hi: torch.Tensor
    A_lo: torch.Tensor
    A_hi: torch.Tensor
    A_ok: torch.Tensor
    B_lo: torch.Tensor
    B_hi: torch.Tensor
    B_ok: torch.Tensor
    inf: torch.Tensor
    ninf: torch.Tensor
    lo_l: torch.Tensor
    hi_l: torch.Tensor
    stp: torch.Tensor
    st_lo: torch.Tensor
    st_hi: torch.Tensor
    inv_al: torch.Tensor
    log_al: torch.Tensor
    eta: torch.Tensor


def _ratio_pieces(dL, dU, al, gL, eL, e0L, valid, phi) -> _RatioPieces:
    """Step 1 of :func:`_ratio_lower`: the pieces of each key and the bracket of λ."""
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
    return _RatioPieces(
        valid,
        z,
        dL,
        al,
        gL,
        eL,
        e0L,
        phi_lo,
        phi_hi,
        A_lo,
        A_hi,
        A_ok,
        B_lo,
        B_hi,
        B_ok,
        inf,
        ninf,
        lo_l,
        hi_l,
        stp,
        st_lo,
        st_hi,
        inv_al,
        log_al,
        eta,
    )


def _keyterms(p: _RatioPieces, lam):
    """Per key: sign, log-magnitude and δ of the minimal term at λ."""
    A_lo, A_hi, A_okf, B_lo, B_hi, B_okf = p.A_lo, p.A_hi, p.A_ok, p.B_lo, p.B_hi, p.B_ok
    al, gL, eL, dL, valid, z, inf, ninf = p.al, p.gL, p.eL, p.dL, p.valid, p.z, p.inf, p.ninf
    stp, st_lo, st_hi, inv_al, log_al = p.stp, p.st_lo, p.st_hi, p.inv_al, p.log_al
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


def _H(p: _RatioPieces, lam):
    """Log-parts of H(λ): (log positive part, log negative part + margin, log |slope|)."""
    ninf, phi_lo, phi_hi, e0L, valid, eta = p.ninf, p.phi_lo, p.phi_hi, p.e0L, p.valid, p.eta
    sg, lg, dd, lm = _keyterms(p, lam)
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


def _newton(lam, P, N, S):
    """λ + H(λ)/|H'(λ)| (H = e^P - e^N)."""
    m = torch.maximum(P, N)
    d = (P - N).abs()
    lh = m + torch.log((-torch.expm1(-d)).clamp_min(1e-300))
    step = torch.exp((lh - S).clamp(max=700.0))
    step = torch.where(torch.isfinite(m), step, torch.zeros_like(step))
    return lam + torch.where(P >= N, step, -step)


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
    p = _ratio_pieces(dL, dU, al, gL, eL, e0L, valid, phi)
    lo_l, hi_l = p.lo_l, p.hi_l

    def H(lam):
        return _H(p, lam)

    newton = _newton

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
    return lam, _keyterms(p, lam)[2]


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
