"""Affine forms (:class:`_AF`), their arithmetic and the shared round-off constants.

Part of :mod:`approxtheory.bounds` (see its docstring for the method)."""

from __future__ import annotations

import torch

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


def _t(x):
    return x.detach().to(_DT).cpu()
