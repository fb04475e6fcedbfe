"""Helpers shared by the trade-off checks (arXiv 2510.03784): the catalogue formula as a numpy
function, the claimed sign of a direction (:func:`_claimed_sign`), the softmax, the bound
ratio, and the experiment-rows reader of :mod:`.heads` (:data:`_trained`: TO-X2 and TO-T2 read
the tradeoffs_heads cells through it; tests substitute rows by patching it in :mod:`.heads`; the
trained checks of :mod:`.trained` read theirs through the shared pipeline and ``_rows``)."""

from __future__ import annotations

import numpy as np
import sympy as sp

from approxtheory import claim

from .._core import Verdict, claimed_sign, experiment_rows


def _lambdify(cid: str, name: str, *symbols: str, expr=None):
    """A numpy function of the catalogue expression ``name`` of ``cid`` (or of ``expr``, a
    mutated copy of it), with arguments in the order ``symbols``."""
    c = claim(cid)
    e = c.expr(name) if expr is None else expr
    return sp.lambdify([c.symbol(s) for s in symbols], e, "numpy")


_claimed_sign = claimed_sign  # the shared reader of a claim's stated sign


def _no_sign(cid: str, field: str, read: str, why: str, verdict: str = "inconsistent") -> Verdict:
    """The verdict of a claim whose direction field ``field`` gives no sign to compare with:
    decided without the run."""
    return Verdict(
        cid,
        verdict,
        f"the claim read: {field} = {read}; it states no usable direction: {why}",
        scope="partial: direction only (the claim's sign); no direction to compare",
    )


def _softmax(z):
    z = z - z.max(-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(-1, keepdims=True)


def _ratio(measured, bound):
    """measured / bound elementwise; a non-finite measurement or bound counts as a violation."""
    measured, bound = np.asarray(measured, dtype=np.float64), np.asarray(bound, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(bound > 0, measured / bound, np.where(measured > 0, np.inf, 0.0))
    return np.where(np.isfinite(measured) & np.isfinite(bound), out, np.inf)


_trained = experiment_rows


def _mutated(ctx, cid: str, name: str, mutants: dict | None = None):
    """The claim ``cid`` and its catalogue expression ``name``, with the substitution of the
    active declared mutant applied (``mutants``: mutant -> (symbol name, the symbol's
    replacement as a function of the symbol)); the symbols are read before any mutant is."""
    c = claim(cid)
    e = c.expr(name)
    subs = {m: (c.symbol(s), change) for m, (s, change) in (mutants or {}).items()}
    for mutant, (sym, change) in subs.items():
        if ctx.is_mutant(mutant):
            return c, e.subs(sym, change(sym))
    return c, e
