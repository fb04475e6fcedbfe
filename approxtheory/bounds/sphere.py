"""The unit-sphere domain: a sound box cover of ``{X : ||x(t)||_2 = 1 for every t}``.

Part of :mod:`approxtheory.bounds` (see its docstring for the method).

The branch-and-bound runs over boxes of ``[-1, 1]^{T·d}`` as for a box domain; before a box is
bounded it is replaced by a box that still holds every point of the sphere it held
(:func:`shrink_to_sphere`), or discarded when it holds none. Per token, with ``m_k`` and ``M_k``
the least and largest ``x_k²`` on the box: the box misses the sphere when ``Σ_k m_k > 1`` or
``Σ_k M_k < 1``; on the sphere ``x_k² = 1 - Σ_{j≠k} x_j²``, so ``|x_k| <= sqrt(1 - Σ_{j≠k}
m_j)`` and ``|x_k| >= sqrt(1 - Σ_{j≠k} M_j)`` (the latter used where the coordinate's range
does not contain 0: the part near 0 is cut away). The constraint thus enters the bound through
the boxes the propagation sees. Every quantity is rounded outward (a relative ``1e-12`` and an
absolute ``1e-15`` on the squares and the roots, far above float64's round-off), so a box is
never cut below the sphere's part of it.
"""

from __future__ import annotations

import torch

_REL, _ABS = 1e-12, 1e-15


def _sq_range(lo, hi):
    """Least and largest x² over [lo, hi] (elementwise)."""
    m = torch.where((lo <= 0) & (hi >= 0), torch.zeros_like(lo), torch.minimum(lo * lo, hi * hi))
    M = torch.maximum(lo * lo, hi * hi)
    return m, M


def shrink_to_sphere(lo, hi, rounds: int = 2):
    """Boxes (B, T, d) shrunk to hold exactly the points of the unit sphere (per token) they
    held, outward-rounded; returns ``(lo, hi, feasible)`` with ``feasible`` (B,) false where a
    box holds no point of the sphere (its lo/hi are then left as they were)."""
    feas = torch.ones(lo.shape[0], dtype=torch.bool)
    for _ in range(rounds):
        m, M = _sq_range(lo, hi)
        sm = m.sum(-1, keepdim=True) * (1 - _REL) - _ABS  # a lower bound of Σ m
        sM = M.sum(-1, keepdim=True) * (1 + _REL) + _ABS  # an upper bound of Σ M
        feas = feas & (sm[..., 0] <= 1).all(-1) & (sM[..., 0] >= 1).all(-1)
        rest_m = (sm - m * (1 + _REL) - _ABS).clamp_min(0.0)  # <= Σ_{j≠k} m_j
        rest_M = sM - M * (1 - _REL) + _ABS  # >= Σ_{j≠k} M_j
        r_up = torch.sqrt((1 - rest_m).clamp_min(0.0)) * (1 + _REL) + _ABS
        r_dn = torch.sqrt((1 - rest_M).clamp_min(0.0)) * (1 - _REL) - _ABS
        r_dn = r_dn.clamp_min(0.0)
        nlo, nhi = torch.maximum(lo, -r_up), torch.minimum(hi, r_up)
        nlo = torch.where(lo >= 0, torch.maximum(nlo, r_dn), nlo)
        nhi = torch.where(hi <= 0, torch.minimum(nhi, -r_dn), nhi)
        feas = feas & (nlo <= nhi).flatten(1).all(-1)
        keep = feas[:, None, None]
        lo, hi = torch.where(keep, nlo, lo), torch.where(keep, nhi, hi)
    return lo, hi, feas
