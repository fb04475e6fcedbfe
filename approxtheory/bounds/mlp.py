"""FFN/MLP bounds: interval forward and CROWN back-substitution through ReLU layers.

Part of :mod:`approxtheory.bounds` (see its docstring for the method)."""

from __future__ import annotations

import torch

from ._af import _AF, _DT, _TINY, _U, _gam, _t, _Unsupported


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
