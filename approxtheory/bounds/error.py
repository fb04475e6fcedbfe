"""Error bounds: the model minus the target on a batch of boxes (:func:`error_bounds`).

Part of :mod:`approxtheory.bounds` (see its docstring for the method)."""

from __future__ import annotations

import math

import torch

from ..errors import ConfigError
from ._af import _AF, _DT, _TINY, _U, _gam, _proj_coef, _t, _Unsupported
from ._inputs import _as_boxes, _check_task, _no_nan, _require_forms
from .forward import _block, _embed, _forward_af, _input_af
from .mlp import _crown_mlp, _mlp_ops
from .ratio import _coupled_F, _ratio_bounds
from .targets import (
    _minus_opt,
    _opt_af,
    _retrieval_parts,
    _target_af,
    _target_rows,
    unsupported_reason,
)


# ============================================================================== error bounds
class _Ctx:
    """Everything fixed for one (model, task): support check, method, head matching."""

    def __init__(self, model, task):
        self.model, self.task = model, task
        r = unsupported_reason(model, task)
        if r:
            raise _Unsupported(r)
        from ..tasks import GeneralizedRetrieval

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
            if out.c.dim() == 3:  # per-token read-out: (B, T, d_out) -> (B, T·d_out)
                out = out.reshape(out.shape[0], -1)
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
        assert L is not None and U is not None  # pairs is never empty
        rows = _target_rows(self.task, L.shape[-1])
        if rows is not None:  # outputs without a target are not measured (as sup_error)
            L = torch.where(rows, L, torch.zeros_like(L))
            U = torch.where(rows, U, torch.zeros_like(U))
        return L, U

    def _affine_witness(self, x: _AF, L, U):
        """Inputs at the vertices where the worst output's error form ``model - target`` is
        extreme (ε = ±sign of its coefficients), per box: exact maximisers where the error is
        affine on the box (e.g. position-only attention), heuristics elsewhere; None on the
        CROWN and one-term paths (their forms are not the zonotope's)."""
        if self.crown or self.one_term is not None:
            return None
        out = _forward_af(self.model, x)
        if out.c.dim() == 3:
            out = out.reshape(out.shape[0], -1)
        y = _target_af(self.task, x)
        if out.shape != y.shape or x.n != x.shape[1] * x.shape[2]:
            return None
        D = out - y
        B = x.shape[0]
        bi = torch.arange(B)
        Xs = []
        for side, val in ((1.0, U), (-1.0, -L)):
            m = torch.nan_to_num(val, nan=-math.inf).argmax(-1)  # (B,)
            eps = side * torch.sign(D.A[bi, m])  # (B, n)
            Xs.append(x.c + torch.einsum("btdn,bn->btd", x.A, eps))
        return torch.cat(Xs)

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
            if not want_witness:
                return L, U
            return L, U, self._affine_witness(x, L, U)
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


def _shared_ref_bounds(s: _AF, u: _AF, g: _AF, e0: _AF, Sidx, cons, valid, slices: int):
    """The shared-reference form of :func:`_retrieval_term` (one common factor e^{-s_t'} for
    all keys, the reference sliced along its target feature): per box and candidate (B, C)."""
    B, T = s.shape
    C = len(Sidx)
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
    return lo_s, hi_s


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
        lo_s, hi_s = _shared_ref_bounds(s, u, g, e0, Sidx, cons, valid, slices)
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
